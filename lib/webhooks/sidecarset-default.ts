/** The SidecarSet defaulting webhook: the defaulted object, as a JSON Patch. */
import { patched } from '../admission/responses.ts';
import { defaultSidecarSet } from '../sidecarset/defaults.ts';
import { GROUP, KIND, type SidecarSet } from '../sidecarset/types.ts';
import { neverThrows, type AdmissionHandler } from './handler.ts';
import { onlyKind, onlyOperations } from './skip.ts';

const handleDefault: AdmissionHandler = (request) => {
  const received = request.object as SidecarSet;
  return Promise.resolve(patched(received, defaultSidecarSet(received)));
};

export const sidecarSetDefaultHandler: AdmissionHandler = neverThrows(
  onlyKind(GROUP, KIND, onlyOperations(['CREATE', 'UPDATE'], handleDefault)),
);
