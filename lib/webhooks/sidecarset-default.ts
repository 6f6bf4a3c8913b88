/**
 * The SidecarSet defaulting webhook: the defaulted object, as a JSON Patch.
 *
 * Both versions take the same defaults and the same hashes (OpenKruise 1.9's
 * SetDefaultsSidecarSetV1beta1 and SetHashSidecarSetV1beta1 are its v1alpha1
 * ones over the same fields, and the v1beta1 SidecarContainer prints as the
 * v1alpha1 one): none of them reads or writes a field where the versions
 * differ, so the object is defaulted in the version it was sent and the
 * patch applies to it as sent.
 */
import { patched } from '../admission/responses.ts';
import { defaultSidecarSet } from '../sidecarset/defaults.ts';
import { GROUP, KIND, type SidecarSet } from '../sidecarset/types.ts';
import { neverThrows, type AdmissionHandler } from './handler.ts';
import { reviewedVersion, unsupportedVersion } from './sidecarset-version.ts';
import { onlyKind, onlyOperations } from './skip.ts';

const handleDefault: AdmissionHandler = (request) => {
  if (reviewedVersion(request) === undefined) return Promise.resolve(unsupportedVersion(request));
  const received = request.object as SidecarSet;
  return Promise.resolve(patched(received, defaultSidecarSet(received)));
};

export const sidecarSetDefaultHandler: AdmissionHandler = neverThrows(
  onlyKind(GROUP, KIND, onlyOperations(['CREATE', 'UPDATE'], handleDefault)),
);
