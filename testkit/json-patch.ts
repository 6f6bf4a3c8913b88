/**
 * The part of RFC 6902 JSON Patch only tests and benchmarks need: a diff whose
 * values are copies, and the base64 an answer carries built from operations.
 * Production's diff and wire text are lib/admission/json-patch.ts; reading a
 * patch back and applying it is lib/admission/json-patch-apply.ts.
 */
import { cloneJson } from '../lib/kube/json.ts';
import { createPatchSharingValues, patchText, type JsonPatchOperation } from '../lib/admission/json-patch.ts';

/**
 * {@link createPatchSharingValues}, but the emitted values are copies: for a
 * caller that keeps the patch, or changes `to` afterwards.
 */
export function createPatch(from: unknown, to: unknown): JsonPatchOperation[] {
  return createPatchSharingValues(from, to).map((op) => cloneJson(op));
}

/**
 * The base64 of the patch's JSON text, as `AdmissionResponse.patch` carries
 * it (with `patchType: "JSONPatch"`). Validates each operation's shape first.
 */
export function encodePatch(ops: readonly JsonPatchOperation[]): string {
  return Buffer.from(patchText(ops), 'utf8').toString('base64');
}
