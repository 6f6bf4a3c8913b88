/**
 * Which version of SidecarSet a review is about. The SidecarSet webhooks are
 * registered for v1alpha1 and v1beta1 (descriptors.ts), as OpenKruise 1.9's
 * are, and the API server sends each review's object in the version the
 * webhook was matched for, which `request.kind` names (`request.resource`
 * too). Each handler answers in that version: the defaulting patch applies
 * to the object as sent.
 */
import { denied } from '../admission/responses.ts';
import type { AdmissionRequest } from '../admission/review.ts';
import type { ValidatedVersion } from '../sidecarset/validate-version.ts';
import type { HandlerResult } from './handler.ts';

/** The SidecarSet versions the webhooks take. */
export const REVIEWED_VERSIONS: readonly ValidatedVersion[] = ['v1alpha1', 'v1beta1'];

/** The review's SidecarSet version, or undefined when it is one the webhooks do not take. */
export function reviewedVersion(request: AdmissionRequest): ValidatedVersion | undefined {
  return REVIEWED_VERSIONS.find((version) => version === request.kind.version);
}

/** The answer to a review of another version: refused as Kruise refuses it (a 400), naming the versions taken. */
export function unsupportedVersion(request: AdmissionRequest): HandlerResult {
  return denied(400, `unsupported version: ${JSON.stringify(request.kind.version)} (the SidecarSet webhooks take ${REVIEWED_VERSIONS.join(' and ')})`, 'BadRequest');
}
