/**
 * How many pods to ask for per page so that a page's bytes, not its pod
 * count, are bounded: pods carry annotations of any size (a megabyte each is
 * allowed), and a page of 500 such pods parsed at once is more than the
 * reconciler's whole memory (docs/RELIABILITY.md, "The pass's memory").
 *
 * Each answer is read with a hard cap ({@link PAGE_MAX_BYTES}): a page that
 * passes it is abandoned and asked for again, same continue token, with an
 * eighth of the pods. The next page's size is chosen from the bytes per pod
 * of the last one, to land near {@link PAGE_TARGET_BYTES}: small pods are
 * read 500 at a time as before, megabyte pods a few at a time.
 */

/** The most pods a page asks for: the API server's recommended chunk size, as kubectl uses. */
export const MAX_POD_PAGE_SIZE = 500;
/** The hard cap on one page's answer: what the reconciler holds of a list at once, before parsing. */
export const PAGE_MAX_BYTES = 16 * 1024 * 1024;
/** What the page size aims at: a quarter of the cap, so that a page of somewhat larger pods still fits. */
export const PAGE_TARGET_BYTES = PAGE_MAX_BYTES / 4;
/** A page that passed the cap is asked for again with this fraction of its pods. */
const SHRINK = 8;

/** The page size after a page of `pods` pods took `bytes` bytes: near the target, between 1 and `max`. */
export function nextPageSize(bytes: number, pods: number, max: number = MAX_POD_PAGE_SIZE): number {
  if (pods <= 0 || bytes <= 0) return max;
  const perPod = bytes / pods;
  return Math.max(1, Math.min(max, Math.floor(PAGE_TARGET_BYTES / perPod)));
}

/** The page size to ask again with after `size` pods passed the cap; undefined when one pod alone did. */
export function shrunkPageSize(size: number): number | undefined {
  if (size <= 1) return undefined;
  return Math.max(1, Math.floor(size / SHRINK));
}
