/**
 * Rule 15 (this project's, not Kruise's): a SidecarSet's spec, as JSON text,
 * is at most {@link MAX_SIDECARSET_SPEC_BYTES}.
 *
 * Why: a cold pod-inject reads every stored set before it can answer, within
 * the review's deadline. The list is read in pages whose size is planned
 * from the sets already read, but the first page is asked for blind; with
 * sets bounded, a first page of a few sets (FIRST_SIDECARSET_PAGE_SIZE) is
 * bounded too (lib/adapters/kube-sidecarsets.ts), instead of a page of 100
 * megabyte sets that passes the 16 MiB page cap, is thrown away and asked
 * for again (docs/RELIABILITY.md). Real sets are a few
 * kilobytes; a megabyte is hundreds of sidecars' worth.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import type { JsonObject } from '../kube/types.ts';

/** The most bytes a set's spec may take as JSON text (UTF-8). */
export const MAX_SIDECARSET_SPEC_BYTES = 1024 * 1024;

/** Rule 15 for `spec` at `path`. */
export function validateSpecSize(spec: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const bytes = Buffer.byteLength(JSON.stringify(spec));
  if (bytes > MAX_SIDECARSET_SPEC_BYTES) {
    errs.push({ ...path.tooLong(undefined, MAX_SIDECARSET_SPEC_BYTES), detail: `may not be more than ${MAX_SIDECARSET_SPEC_BYTES} bytes as JSON (it is ${bytes}): every pod-inject reads every set before it answers` });
  }
}
