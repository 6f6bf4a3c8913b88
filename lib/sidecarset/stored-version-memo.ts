/**
 * A memo of what is derived from one stored version of a SidecarSet alone.
 *
 * The API server names every stored version of an object by its uid and
 * resourceVersion: the same pair always carries the same content, and any
 * change (spec, annotations, status) gives a new resourceVersion. So a value
 * computed from a stored set only (its revision name, for instance) can be
 * kept for that pair and reused by every review until the set changes,
 * instead of being computed again for each pod.
 *
 * Bounded in entries and in lifetime: one entry per uid (a new
 * resourceVersion replaces the old entry, so an updated set never leaves its
 * old versions behind), least recently used evicted first past
 * `maxEntries`, and an entry not used for `maxIdleMs` dropped (a deleted set
 * stops being asked for, so it ages out). A set without a uid or
 * resourceVersion (one read from a file by the invoke command, a test's) is
 * not memoised: its value is computed on every call.
 */
import { stringOf } from '../kube/json.ts';
import type { SidecarSet } from './types.ts';

export interface StoredVersionMemoOptions {
  /** The most sets kept at once; the least recently used goes first. */
  maxEntries?: number;
  /** An entry unused for this long is dropped. */
  maxIdleMs?: number;
  /** The clock (milliseconds); tests move it. */
  now?: () => number;
}

/**
 * Enough for the sets of a large cluster that a function instance sees
 * (pod-inject keeps only the sets that apply to some pod it injected).
 */
export const DEFAULT_MEMO_ENTRIES = 2048;
/** Longer than a warm Lambda instance's quiet spells, short enough that a deleted set's entry goes. */
export const DEFAULT_MEMO_IDLE_MS = 15 * 60 * 1000;

interface Entry<T> {
  resourceVersion: string;
  value: T;
  usedAt: number;
}

/** The stored version a set is, or undefined when it does not say (never memoised). */
export function storedVersionOf(set: SidecarSet): { uid: string; resourceVersion: string } | undefined {
  const uid = stringOf(set.metadata?.uid) ?? '';
  const resourceVersion = stringOf(set.metadata?.resourceVersion) ?? '';
  return uid === '' || resourceVersion === '' ? undefined : { uid, resourceVersion };
}

/** `compute(set)` once per stored version (uid + resourceVersion), within the bounds above. */
export class StoredVersionMemo<T> {
  readonly #compute: (set: SidecarSet) => T;
  readonly #maxEntries: number;
  readonly #maxIdleMs: number;
  readonly #now: () => number;
  /** By uid, in order of last use (a Map iterates in insertion order; a hit re-inserts). */
  readonly #entries = new Map<string, Entry<T>>();
  #computed = 0;

  constructor(compute: (set: SidecarSet) => T, options: StoredVersionMemoOptions = {}) {
    const maxEntries = options.maxEntries ?? DEFAULT_MEMO_ENTRIES;
    const maxIdleMs = options.maxIdleMs ?? DEFAULT_MEMO_IDLE_MS;
    if (!Number.isInteger(maxEntries) || maxEntries < 0) throw new RangeError(`maxEntries must be a whole number ≥ 0, got ${maxEntries}`);
    if (!(maxIdleMs >= 0)) throw new RangeError(`maxIdleMs must be ≥ 0, got ${maxIdleMs}`);
    this.#compute = compute;
    this.#maxEntries = maxEntries;
    this.#maxIdleMs = maxIdleMs;
    this.#now = options.now ?? Date.now;
  }

  /** The value for this set: the stored version's memoised one, or computed now. */
  of(set: SidecarSet): T {
    const version = storedVersionOf(set);
    if (version === undefined || this.#maxEntries === 0) return this.#computeFor(set);
    const now = this.#now();
    this.#dropIdle(now);
    const entry = this.#entries.get(version.uid);
    if (entry !== undefined) {
      this.#entries.delete(version.uid);
      if (entry.resourceVersion === version.resourceVersion) {
        entry.usedAt = now;
        this.#entries.set(version.uid, entry);
        return entry.value;
      }
    }
    const value = this.#computeFor(set);
    this.#entries.set(version.uid, { resourceVersion: version.resourceVersion, value, usedAt: now });
    // At most one over after an insert: the least recently used is first.
    if (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    return value;
  }

  /** How many stored versions are kept now. */
  get size(): number {
    return this.#entries.size;
  }

  /** How many times the value was computed (misses, and sets that are not memoised). */
  get computed(): number {
    return this.#computed;
  }

  #computeFor(set: SidecarSet): T {
    this.#computed++;
    return this.#compute(set);
  }

  /** Entries are in order of last use, so the idle ones are at the front. */
  #dropIdle(now: number): void {
    for (const [uid, entry] of this.#entries) {
      if (now - entry.usedAt <= this.#maxIdleMs) return;
      this.#entries.delete(uid);
    }
  }
}
