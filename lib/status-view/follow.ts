/**
 * `--watch`: look again whenever a SidecarSet or a pod in one of their
 * scopes changes, and show each look, until stopped or the API server is
 * lost.
 *
 * Why watches rather than a poll: a rollout moves when pods restart and
 * become ready, and the view should say so at once (as `kubectl get -w`
 * does) without listing every few seconds while nothing happens. Each change
 * is followed by a fresh look (the same lists the reconciler reads),
 * not by patching a cache with the event, so what is shown is always what a
 * reconcile would decide now. A burst of changes is one look (`debounceMs`), looks
 * are at least `minGapMs` apart (a busy cluster is not listed in a loop),
 * and every `resyncMs` without a change there is a look anyway (namespace
 * labels are not watched). A watch that fails is retried after a look, with
 * growing pauses (a cluster that refuses watches is then polled); a look
 * that fails ends the view: the connection is lost.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { lookOnce, type Look, type StatusViewDeps } from './look.ts';

export interface FollowOptions {
  /** A look at least this often, changes or not. Default 60 s. */
  resyncMs?: number;
  /** After a change, how long to let related changes land before looking. Default 100 ms. */
  debounceMs?: number;
  /** The shortest time between the starts of two looks. Default 1 s. */
  minGapMs?: number;
  /** The pauses before looking after 1, 2, … watch failures in a row (the last repeats). */
  watchRetryMs?: readonly number[];
  /** Monotonic milliseconds. Default performance.now. */
  nowMs?: () => number;
}

export const DEFAULT_FOLLOW = { resyncMs: 60_000, debounceMs: 100, minGapMs: 1_000, watchRetryMs: [0, 1_000, 2_000, 5_000, 10_000] } as const;

/** How following ended: stopped (the signal), or a look failed (the connection is lost) with its error. */
export type FollowEnd = { end: 'stopped' } | { end: 'lost'; error: unknown };

const NOTHING_IGNORED: ReadonlySet<string> = new Set();

/** The first of the look's watches to answer, the others then stopped. */
async function nextChange(deps: StatusViewDeps, look: Pick<Look, 'setsVersion' | 'scopes'>, timeoutMs: number, signal: AbortSignal): Promise<'changed' | 'timeout' | 'error'> {
  const controller = new AbortController();
  const stop = () => { controller.abort(); };
  // An abort listener added after the abort never runs.
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  try {
    return await Promise.race([
      deps.sets.changed(look.setsVersion, timeoutMs, controller.signal),
      ...look.scopes.map(({ scope, resourceVersion }) => deps.pods.changed(scope, resourceVersion, NOTHING_IGNORED, timeoutMs, controller.signal)),
    ]);
  } finally {
    signal.removeEventListener('abort', stop);
    controller.abort();
  }
}

/** Waits `ms`; false when the signal ended it. */
async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  if (ms <= 0) return true;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/**
 * Follows from `first` (already shown), calling `show` with each later look;
 * `again` takes each look (default: every set's, {@link lookOnce}).
 */
export async function followLooks<Rows = Look['rows']>(
  deps: StatusViewDeps,
  first: Look<Rows>,
  show: (look: Look<Rows>) => void,
  options: FollowOptions,
  signal: AbortSignal,
  again: (signal: AbortSignal) => Promise<Look<Rows>> = (s) => lookOnce(deps, s) as Promise<unknown> as Promise<Look<Rows>>,
): Promise<FollowEnd> {
  const { resyncMs, debounceMs, minGapMs, watchRetryMs } = { ...DEFAULT_FOLLOW, ...options };
  const nowMs = options.nowMs ?? (() => performance.now());
  let current = first;
  let lastStart = nowMs();
  let failedWatches = 0;
  // Read afresh after each await (the signal ends from outside).
  const stopped = (): boolean => signal.aborted;
  for (;;) {
    if (stopped()) return { end: 'stopped' };
    const outcome = await nextChange(deps, current, resyncMs, signal);
    if (stopped()) return { end: 'stopped' };
    if (outcome === 'error') failedWatches++;
    else failedWatches = 0;
    const wait = outcome === 'error' ? (watchRetryMs[Math.min(failedWatches, watchRetryMs.length) - 1] ?? 0) : outcome === 'changed' ? debounceMs : 0;
    if (!(await pause(Math.max(wait, minGapMs - (nowMs() - lastStart)), signal))) return { end: 'stopped' };
    lastStart = nowMs();
    try {
      current = await again(signal);
    } catch (error) {
      if (stopped()) return { end: 'stopped' };
      return { end: 'lost', error };
    }
    show(current);
  }
}
