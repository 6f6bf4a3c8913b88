/**
 * The rollout view's word on canaries that took a set's pods
 * (lib/status-sync/canary-events.ts tells the same as an Event on the set):
 * a base's counts leave out the pods its canaries injected in its place, so
 * its WHY says how its pods split: how many run its own sidecars, and how
 * many each canary took. Counted as the reconciler counts them
 * (lib/sidecarset/status.ts statusAccumulator), from the pods listed for the
 * set's scope: a pod a canary took from the set is one the set selects.
 */
import { errorMessage } from '../errors.ts';
import type { Pod } from '../kube/types.ts';
import { podScope } from '../rollout/pod-scope.ts';
import { canariesOf } from '../sidecarset/canary.ts';
import { sidecarSetName, type NamespaceLabels } from '../sidecarset/match.ts';
import { statusAccumulator, summarizePod } from '../sidecarset/status.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import type { ViewRow } from './rows.ts';
import { scopeKey } from './rows.ts';

/** The split of one base's pods, as its WHY ends; undefined when no canary took any. */
export function canarySplit(set: SidecarSet, sets: readonly SidecarSet[], pods: readonly Pod[], namespaceLabels: NamespaceLabels): string | undefined {
  const accumulator = statusAccumulator(set, sets);
  try {
    for (const pod of pods) accumulator.add(summarizePod(pod), namespaceLabels);
  } catch (error) {
    // A namespace gone between the lists (UnknownNamespaceError): the row says Unknown already; the next look counts.
    return `split: cannot count: ${errorMessage(error)}`;
  }
  const taken = [...accumulator.canaryPods].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (taken.length === 0) return undefined;
  const own = accumulator.counts().matchedPods;
  return `split: ${own} pod(s) run its sidecars, ${taken.map(([canary, count]) => `canary ${canary} took ${count}`).join(', ')}`;
}

/** `rows` with the WHY of each set that canaries took pods from ending in its split. */
export function withCanarySplit(rows: readonly ViewRow[], sets: readonly SidecarSet[], podsByScope: ReadonlyMap<string, readonly Pod[]>, namespaceLabels: NamespaceLabels): ViewRow[] {
  const splits = new Map<string, string>();
  for (const set of sets) {
    const name = sidecarSetName(set);
    const scope = podScope(set);
    if (scope === undefined || canariesOf(name, sets).length === 0) continue;
    const split = canarySplit(set, sets, podsByScope.get(scopeKey(scope)) ?? [], namespaceLabels);
    if (split !== undefined) splits.set(name, split);
  }
  if (splits.size === 0) return [...rows];
  return rows.map((row) => {
    const split = splits.get(row.name);
    return split === undefined ? row : { ...row, why: `${row.why}; ${split}` };
  });
}
