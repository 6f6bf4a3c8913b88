/**
 * What injecting a SidecarSet derives from the set as stored, and nothing
 * else (not the pod, not the time): the same for every pod until the set
 * changes, so the pod webhook computes it once per stored version
 * (stored-version-memo.ts) instead of once per review.
 *
 * Only a set as the cluster stores it may be looked up by its stored
 * version: a pinned revision restored onto a set (lib/sidecarset/revision-pick.ts)
 * keeps the set's uid and resourceVersion but not its spec.
 */
import { currentRevisionName } from './revisions.ts';
import { setHashEntries, type SetHashEntries } from './inject-annotations.ts';
import { freezeInjectionFacts, setInjectionFacts, type SetInjectionFacts } from './injection-facts.ts';
import { StoredVersionMemo, type StoredVersionMemoOptions } from './stored-version-memo.ts';
import type { SidecarSet } from './types.ts';

export interface StoredSetFacts {
  /** The name of the ControllerRevision of the set's current spec and collision count (rollout.md §2.1). */
  readonly revisionName: string;
  /** Its sidecars ready to copy into a pod, their volumes, its annotation entries' list and hashes. */
  readonly injection: SetInjectionFacts;
  /** Its entries in the pod's two hash annotations, as texts around their timestamp (inject-annotations.ts). */
  readonly hashEntries: SetHashEntries;
}

/** The facts of a stored set, computed now. */
export function storedSetFacts(set: SidecarSet): StoredSetFacts {
  const revisionName = currentRevisionName(set);
  const injection = setInjectionFacts(set);
  return { revisionName, injection, hashEntries: setHashEntries(injection, revisionName) };
}

/** How injection gets a stored set's facts: {@link storedSetFacts}, or a memo of it. */
export type StoredSetFactsOf = (set: SidecarSet) => StoredSetFacts;

/** {@link storedSetFacts} memoised per stored version (uid + resourceVersion), within the memo's bounds. */
export function memoisedStoredSetFacts(options?: StoredVersionMemoOptions): { factsOf: StoredSetFactsOf; memo: StoredVersionMemo<StoredSetFacts> } {
  // Frozen: every pod injected from this version shares its copies.
  const memo = new StoredVersionMemo((set) => {
    const facts = storedSetFacts(set);
    return Object.freeze({ revisionName: facts.revisionName, injection: freezeInjectionFacts(facts.injection), hashEntries: facts.hashEntries });
  }, options);
  return { factsOf: (set) => memo.of(set), memo };
}
