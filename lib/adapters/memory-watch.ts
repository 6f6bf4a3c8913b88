/** The in-memory adapters' watch: what their `changed` waits do, once. */

/**
 * Resolves 'changed' as soon as `seen()` holds (checked now and whenever a
 * listener added to `listeners` is called, i.e. at every change), or
 * 'timeout' after `timeoutMs` or when `signal` aborts.
 */
export function waitForSeen(seen: () => boolean, listeners: Set<() => void>, timeoutMs: number, signal?: AbortSignal): Promise<'changed' | 'timeout'> {
  if (seen()) return Promise.resolve('changed');
  return new Promise((resolve) => {
    const finish = (outcome: 'changed' | 'timeout') => {
      clearTimeout(timer);
      listeners.delete(listener);
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const listener = () => {
      if (seen()) finish('changed');
    };
    const onAbort = () => {
      finish('timeout');
    };
    const timer = setTimeout(onAbort, timeoutMs);
    if (signal?.aborted === true) {
      finish('timeout');
      return;
    }
    listeners.add(listener);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
