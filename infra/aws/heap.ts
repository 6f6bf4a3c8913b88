/**
 * The V8 heap ceiling status-sync runs with. Without one, V8 sizes its heap
 * from the memory it detects, which need not be the function's memory
 * setting, and lets garbage pile up toward that limit: a resync that held one
 * page of megabyte pods at a time peaked at 299 MiB (docs/RELIABILITY.md,
 * "The reconcile's memory"). Given the function's
 * memory as its ceiling (three quarters of it for the old generation, the
 * rest for the young generation, code and buffers outside the heap), V8
 * collects before the function's memory runs out instead of after.
 */

/** NODE_OPTIONS for a function of `memoryMb` MB. */
export function heapNodeOptions(memoryMb: number): string {
  return `--max-old-space-size=${Math.floor((memoryMb * 3) / 4)}`;
}
