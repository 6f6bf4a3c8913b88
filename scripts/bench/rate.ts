/** Operations per second of an in-process operation, timed in one loop for every kind of operation. */

/**
 * Calls `op` back to back (awaiting each call, so an async core and a sync
 * floor pay the same loop) for about `durationMs`, then returns calls per
 * second. The clock is read every `batch` calls to keep its cost out.
 */
export async function opsPerSecond(op: () => unknown, durationMs: number, batch = 50): Promise<number> {
  let calls = 0;
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < durationMs) {
    for (let i = 0; i < batch; i++) await op();
    calls += batch;
    elapsed = performance.now() - started;
  }
  return (calls / elapsed) * 1000;
}
