/**
 * The rollout view's rows (`npm run -s status`): per SidecarSet the counts,
 * the rollout's state and why it waits, decided exactly as the reconciler
 * decides them (lib/rollout/plan.ts planRollout, then
 * lib/status-sync/rollout-state.ts rolloutState, with the reconciler's stall
 * threshold and the time of the look, and lib/rollout/batch.ts
 * waitingMessage), from the same lists the reconcile reads: the set's pods in its
 * scope (lib/rollout/pod-scope.ts), and the labels of their namespaces when
 * the set has a namespaceSelector. Pure: the lists come from the caller.
 */
import { errorMessage } from '../errors.ts';
import { objectOf, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import type { PodScope } from '../ports.ts';
import { planRollout, type RolloutCounts } from '../rollout/plan.ts';
import { podScope } from '../rollout/pod-scope.ts';
import { waitingMessage } from '../rollout/batch.ts';
import { injectionPath, type InjectionPathName } from '../sidecarset/injection-path.ts';
import { hasNamespaceSelector, sidecarSetName, type NamespaceLabels } from '../sidecarset/match.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { rolloutStateName } from '../status-sync/observed-states.ts';
import { rolloutState, type RolloutStateName, type StallClock } from '../status-sync/rollout-state.ts';

/** The rollout states the reconciler's Events and metrics name, without their `Rollout` prefix; `Unknown` when the view cannot decide. */
export type ViewState = RolloutStateName | 'Unknown';

export const COUNT_FIELDS = ['matchedPods', 'updatedPods', 'readyPods', 'updatedReadyPods'] as const;
export type CountField = (typeof COUNT_FIELDS)[number];

export interface ViewRow {
  name: string;
  /** The counts the plan computes from the listed pods; undefined when the set cannot be decided (state Unknown). */
  counts?: RolloutCounts;
  /** The counts whose stored value (`status`, what `kubectl get sidecarsets` shows) differs from the fresh one. */
  staleCounts: CountField[];
  state: ViewState;
  /** Why the rollout is where it is: what the reconciler says (waitingMessage), or why the view cannot decide. */
  why: string;
  /** A rollout is under way (not finished, not NotUpdate): the table draws its progress bar. */
  rolling: boolean;
  /**
   * The path that injects the set into a pod it alone selects (the PATH column, the --injection flag's words): the
   * injection policy when the rule (lib/sidecarset/injection-path.ts) sends the set there and the policy is
   * installed, else the pod-inject webhook.
   */
  path: InjectionPathName;
}

/** A scope as one string: the key the caller's pod lists are kept under. */
export function scopeKey(scope: PodScope): string {
  return JSON.stringify([scope.namespace ?? '', scope.labelSelector]);
}

/** The distinct pod scopes of `sets` (sets that select no pod have none): one list each covers every set. */
export function podScopes(sets: readonly SidecarSet[]): PodScope[] {
  const scopes = new Map<string, PodScope>();
  for (const set of sets) {
    const scope = podScope(set);
    if (scope !== undefined) scopes.set(scopeKey(scope), scope);
  }
  return [...scopes.values()];
}

/** The namespaces whose labels the view needs: those of the pods listed for sets with a namespaceSelector. */
export function namespacesNeeded(sets: readonly SidecarSet[], podsByScope: ReadonlyMap<string, readonly Pod[]>): string[] {
  const names = new Set<string>();
  for (const set of sets) {
    if (!hasNamespaceSelector(set)) continue;
    const scope = podScope(set);
    for (const pod of scope === undefined ? [] : (podsByScope.get(scopeKey(scope)) ?? [])) names.add(stringOf(pod.metadata?.namespace) ?? '');
  }
  names.delete('');
  return [...names];
}

function staleCountsOf(set: SidecarSet, counts: RolloutCounts): CountField[] {
  const stored = objectOf(set.status) ?? {};
  return COUNT_FIELDS.filter((field) => (typeof stored[field] === 'number' ? stored[field] : 0) !== counts[field]);
}

/**
 * One set's row. `pods` holds at least every pod of the set's scope (others
 * are ignored, as the reconcile ignores them); `namespaceLabels` the labels of
 * their namespaces when the set has a namespaceSelector; `stall` the clock
 * and threshold the reconciler tells a stalled rollout by (without
 * it the view never says Stalled).
 */
export function viewRow(set: SidecarSet, pods: readonly Pod[], namespaceLabels: NamespaceLabels, stall?: StallClock): ViewRow {
  const name = sidecarSetName(set);
  let plan;
  try {
    plan = planRollout(set, pods, namespaceLabels);
  } catch (error) {
    // Typically a namespace deleted between the pod list and the namespace list (UnknownNamespaceError): the next
    // look decides. Whatever it is, it is this set's alone, as the reconcile fails only this set's batch.
    return { name, staleCounts: [], state: 'Unknown', why: `cannot decide: ${errorMessage(error)}`, rolling: false, path: injectionPath(set).path };
  }
  // The reconcile that follows this look would write `updates`; the view writes nothing, so it says they are due.
  const state = rolloutState(plan.status, 0, plan.waiting, stall);
  const due = [
    ...(plan.flips.length > 0 ? [`${plan.flips.length} pod(s) due for a hot-upgrade flip`] : []),
    ...(plan.updates.length > 0 ? [`${plan.updates.length} pod(s) due for update`] : []),
  ];
  const waits = plan.waiting === undefined ? [] : [state.reason === 'RolloutStalled' ? state.message : waitingMessage(plan.waiting)];
  const why = [...due, ...waits].join('; ');
  const shown = rolloutStateName(state);
  return {
    name,
    counts: plan.status,
    staleCounts: staleCountsOf(set, plan.status),
    state: shown,
    why: why === '' ? 'rolling out' : why,
    rolling: shown !== 'Finished' && shown !== 'NotUpdate',
    path: injectionPath(set).path,
  };
}

/**
 * Every set's row, by name. `podsByScope` holds the pods listed for each of
 * {@link podScopes}, keyed by {@link scopeKey}; a set that selects no pod
 * (no or a malformed selector) is decided over none, as the reconcile decides it.
 */
export function viewRows(sets: readonly SidecarSet[], podsByScope: ReadonlyMap<string, readonly Pod[]>, namespaceLabels: NamespaceLabels, stall?: StallClock): ViewRow[] {
  return sets
    .filter((set) => sidecarSetName(set) !== '')
    .map((set) => {
      const scope = podScope(set);
      return viewRow(set, scope === undefined ? [] : (podsByScope.get(scopeKey(scope)) ?? []), namespaceLabels, stall);
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
