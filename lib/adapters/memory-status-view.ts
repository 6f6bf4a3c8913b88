/**
 * The rollout view's SidecarSet list and watch over sets in memory, for
 * tests: every replacement of the sets is a new resourceVersion, and a
 * pending `changed` from an older one resolves.
 */
import { cloneJson } from '../kube/json.ts';
import type { SidecarSetWatchSource } from '../ports.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { waitForSeen } from './memory-watch.ts';

export interface MemorySidecarSets extends SidecarSetWatchSource {
  /** Replaces the stored sets (a change watchers see). */
  replace(sets: readonly SidecarSet[]): void;
  /** Makes every later list fail with `error` (an API server gone), or succeed again with undefined. */
  failLists(error: Error | undefined): void;
  /** Makes every later watch answer 'error' at once (a watch refused), or work again with false. */
  failWatches(fail: boolean): void;
  /** How many lists were asked for. */
  readonly lists: number;
}

export function memorySidecarSets(initial: readonly SidecarSet[] = []): MemorySidecarSets {
  let sets = initial.map((s) => cloneJson(s));
  let version = 1;
  let listFailure: Error | undefined;
  let watchesFail = false;
  let lists = 0;
  const listeners = new Set<() => void>();
  return {
    get lists() {
      return lists;
    },
    replace(next) {
      sets = next.map((s) => cloneJson(s));
      version++;
      for (const listener of [...listeners]) listener();
    },
    failLists(error) {
      listFailure = error;
    },
    failWatches(fail) {
      watchesFail = fail;
    },
    list() {
      lists++;
      if (listFailure !== undefined) return Promise.reject(listFailure);
      return Promise.resolve({ sets: sets.map((s) => cloneJson(s)), resourceVersion: String(version) });
    },
    changed(resourceVersion, timeoutMs, signal) {
      if (watchesFail) return Promise.resolve('error');
      return waitForSeen(() => version > Number(resourceVersion), listeners, timeoutMs, signal);
    },
  };
}
