/**
 * One look at the cluster for the rollout view: the SidecarSets, then the
 * pods of each distinct pod scope (lib/rollout/pod-scope.ts, as the
 * reconciler lists a set's pods), then, only when a set has a
 * namespaceSelector, the labels of its pods' namespaces; then the rows.
 * Linear in what is listed: a few lists, no read per pod or per set.
 */
import type { Pod } from '../kube/types.ts';
import type { NamespaceSource, PodScope, SetPodSource, SidecarSetWatchSource } from '../ports.ts';
import { podScope } from '../rollout/pod-scope.ts';
import { sidecarSetName, type NamespaceLabels } from '../sidecarset/match.ts';
import { forEachLimited } from '../status-sync/concurrency.ts';
import type { StallClock } from '../status-sync/rollout-state.ts';
import { podView, type PodView } from './pod-rows.ts';
import { withCanarySplit } from './canary-split.ts';
import { withRevisionFailures, type RevisionFailureSource } from './revision-failures.ts';
import { namespacesNeeded, podScopes, scopeKey, viewRows, type ViewRow } from './rows.ts';

export interface StatusViewDeps {
  sets: SidecarSetWatchSource;
  pods: SetPodSource;
  /** Namespace labels for one look (labels are read afresh for each). */
  namespaces: () => NamespaceSource;
  /** The reconciler's RevisionWriteFailed Events (revision-failures.ts); absent, none are read. */
  revisionFailures?: RevisionFailureSource;
  /**
   * The reconciler's stall threshold and the wall clock (ms since the epoch,
   * the pods' update times' clock): a look says Stalled when the reconcile would.
   * Absent, the view never says Stalled.
   */
  stall?: { stallMs: number; nowMs: () => number };
  /**
   * Whether the injection policy is installed (true, false, or undefined when that cannot be read): where it is
   * not, pod-inject injects every set. Absent, the rows say what the rule says.
   */
  injectionPolicyInstalled?: (signal?: AbortSignal) => Promise<boolean | undefined>;
}

/** The rows as injected where the policy is not installed: every set by the pod-inject webhook. */
async function withInstalledPath(deps: StatusViewDeps, rows: ViewRow[], signal?: AbortSignal): Promise<ViewRow[]> {
  const installed = deps.injectionPolicyInstalled === undefined ? undefined : await deps.injectionPolicyInstalled(signal);
  return installed === false ? rows.map((row) => ({ ...row, path: 'webhook' })) : rows;
}

/** The stall clock of a look taken now. */
function stallNow(deps: StatusViewDeps): StallClock | undefined {
  return deps.stall === undefined ? undefined : { nowMs: deps.stall.nowMs(), stallMs: deps.stall.stallMs };
}

/** What one look saw: the rows (of every set, or one set's pods), and the versions a watch for the next change starts from. */
export interface Look<Rows = ViewRow[]> {
  rows: Rows;
  setsVersion: string;
  scopes: { scope: PodScope; resourceVersion: string }[];
}

/** Pod lists in flight at once. */
const LIST_CONCURRENCY = 4;

/** @throws whatever a list throws (the caller says it and stops): a view is never drawn from part of the cluster. */
export async function lookOnce(deps: StatusViewDeps, signal?: AbortSignal): Promise<Look> {
  const { sets, resourceVersion } = await deps.sets.list(signal);
  const podsByScope = new Map<string, readonly Pod[]>();
  const scopes: Look['scopes'] = [];
  await forEachLimited(podScopes(sets), LIST_CONCURRENCY, async (scope) => {
    const listed = await deps.pods.list(scope, signal);
    podsByScope.set(scopeKey(scope), listed.pods);
    scopes.push({ scope, resourceVersion: listed.resourceVersion });
  });
  const needed = namespacesNeeded(sets, podsByScope);
  const labels: NamespaceLabels = needed.length === 0 ? new Map() : await deps.namespaces().labels(needed, signal);
  const failures = deps.revisionFailures === undefined ? [] : await deps.revisionFailures(signal);
  const viewed = withCanarySplit(viewRows(sets, podsByScope, labels, stallNow(deps)), sets, podsByScope, labels);
  const rows = await withInstalledPath(deps, withRevisionFailures(viewed, sets, failures), signal);
  return { rows, setsVersion: resourceVersion, scopes };
}

/**
 * One look at one set's pods (`--pods SET`): the SidecarSets, then the pods
 * of that set's scope (one list), then, only when it has a namespaceSelector,
 * the labels of their namespaces. A set that is not there gives a view without
 * summary (and no pod list).
 * @throws whatever a list throws, as {@link lookOnce}.
 */
export async function lookAtPods(deps: StatusViewDeps, name: string, signal?: AbortSignal): Promise<Look<PodView>> {
  const { sets, resourceVersion } = await deps.sets.list(signal);
  const set = sets.find((s) => sidecarSetName(s) === name);
  if (set === undefined) return { rows: { set: name, rows: [], hot: false }, setsVersion: resourceVersion, scopes: [] };
  const scope = podScope(set);
  if (scope === undefined) return { rows: podView(set, [], new Map(), stallNow(deps)), setsVersion: resourceVersion, scopes: [] };
  const listed = await deps.pods.list(scope, signal);
  const needed = namespacesNeeded([set], new Map([[scopeKey(scope), listed.pods]]));
  const labels: NamespaceLabels = needed.length === 0 ? new Map() : await deps.namespaces().labels(needed, signal);
  return { rows: podView(set, listed.pods, labels, stallNow(deps)), setsVersion: resourceVersion, scopes: [{ scope, resourceVersion: listed.resourceVersion }] };
}
