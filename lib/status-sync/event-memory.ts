/**
 * What the reconciler last told about each set in a repeating Event, so
 * that the Event is written when what it tells changes, again every
 * `refreshMs` while it holds (before the API server's event TTL, an hour by
 * default, drops the last one), and once more when it is gone: not once per
 * resync. The memory is per process: a new Lambda execution environment tells
 * once more, which is harmless. Serves the uninjected-pod notices
 * (not-injected.ts) and the canary Events (canary-events.ts).
 */

/** What is due for a set: tell what holds (a change, or a refresh), tell that it is gone, or nothing. */
export type Due = 'record' | 'gone' | undefined;

export interface EventMemory {
  /**
   * What is due for `set`, given what holds now as a key (a change in it is
   * a change); `undefined` when nothing holds.
   */
  due(set: string, key: string | undefined): Due;
  /** Remembers that what `key` stands for was recorded (`undefined`: that its end was recorded). */
  recorded(set: string, key: string | undefined): void;
  /** Forgets every set not in `present` (deleted sets). */
  keep(present: ReadonlySet<string>): void;
}

/** Under the API server's default event TTL of one hour, so a told condition never lapses while it holds. */
export const DEFAULT_REFRESH_MS = 30 * 60_000;

export interface EventMemoryOptions {
  refreshMs?: number;
  /** Milliseconds on a monotonic scale. */
  nowMs?: () => number;
}

/** Starts with nothing recorded; make one per process (per cold start) and keep it across resyncs. */
export function eventMemory(options: EventMemoryOptions = {}): EventMemory {
  const refreshMs = options.refreshMs ?? DEFAULT_REFRESH_MS;
  const nowMs = options.nowMs ?? (() => performance.now());
  const last = new Map<string, { key: string; at: number }>();
  return {
    due(set, key) {
      const previous = last.get(set);
      if (key === undefined) return previous === undefined ? undefined : 'gone';
      return previous === undefined || previous.key !== key || nowMs() - previous.at >= refreshMs ? 'record' : undefined;
    },
    recorded(set, key) {
      if (key === undefined) last.delete(set);
      else last.set(set, { key, at: nowMs() });
    },
    keep(present) {
      for (const name of last.keys()) if (!present.has(name)) last.delete(name);
    },
  };
}
