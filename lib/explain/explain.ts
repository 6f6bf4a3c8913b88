/**
 * Why a pod has (or would get) each SidecarSet's sidecars, and where the
 * rollout stands with it: `npm run -s explain` and `invoke explain`, in the
 * spirit of `istioctl x check-inject`. Nothing here decides anything of its
 * own: whether a set injects is injectionVerdicts' answer (the function
 * pod-inject's injectingSets is checked against, with each miss's term);
 * what it injects is read from the pod pod-inject produced (or, for a live
 * pod, from what it recorded); where the rollout stands is the status
 * view's per-pod row (lib/status-view/pod-rows.ts, from the plan) with the
 * plan's own holds (lib/rollout/plan.ts). Pure: the caller gathers the pod,
 * the sets, the namespace labels and, for the rollout, the pods of each
 * set's scope.
 */
import { errorMessage } from '../errors.ts';
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import { selectorMismatch } from '../kube/label-selector.ts';
import type { Pod } from '../kube/types.ts';
import { matchedPods } from '../rollout/candidates.ts';
import { changedFieldNames } from '../rollout/changed-fields.ts';
import { planRollout, type RolloutPlan } from '../rollout/plan.ts';
import { injectionVerdicts, type InjectionVerdict } from '../sidecarset/injecting-sets.ts';
import { injectionPath, type InjectionPath } from '../sidecarset/injection-path.ts';
import { ANNOTATION_POLICY_RECORD, parsePolicyRecord } from '../sidecarset/policy-record.ts';
import { isActivePod, labelsOf, sidecarSetName, sidecarSetSelectsPod, type NamespaceLabels } from '../sidecarset/match.ts';
import { parseRecordedEntries } from '../sidecarset/pod-annotations.ts';
import { isHotUpgrade, isInjectedBy, podAnnotation, podHasSetContainers, podKey } from '../sidecarset/pod-state.ts';
import { ANNOTATION_HASH, type SidecarContainer, type SidecarSet } from '../sidecarset/types.ts';
import type { UnavailablePods } from '../sidecarset/unavailable-pods.ts';
import { podView, type PodState } from '../status-view/pod-rows.ts';
import { viewRow } from '../status-view/rows.ts';
import type { StallClock } from '../status-sync/rollout-state.ts';

/** What a set puts into a pod (or put): names only, the pod holds the rest. */
export interface InjectedParts {
  containers: string[];
  initContainers: string[];
  volumes: string[];
  /** The ControllerRevision the pod records for the set (its hash annotation's controllerRevision); absent when none. */
  revision?: string;
}

/** What holds a matched pod that does not run the set's current sidecars. */
export type Hold =
  | { kind: 'next' }
  | { kind: 'not-update' }
  | { kind: 'paused' }
  | { kind: 'partition'; partition: unknown; held: number }
  | { kind: 'max-unavailable'; maxUnavailable: unknown; unavailable: number; waitingOn?: UnavailablePods }
  | { kind: 'selector'; term?: string }
  | { kind: 'not-upgradable'; fields: string[] }
  | { kind: 'in-flight' }
  | { kind: 'flipping' }
  | { kind: 'invalid-strategy'; message: string }
  | { kind: 'later-batch' };

/** Where the set's rollout stands with the pod. */
export interface RolloutExplanation {
  /** The set's rollout counts the pod (active, selected, naming the set, carrying its sidecars). */
  matched: boolean;
  /** Why it is not matched; absent when it is. */
  notMatched?: string;
  /** Its recorded hash is the set's current one. */
  updated?: boolean;
  /** Updated, restarted on the new image and ready: it runs the set's current sidecars. */
  current?: boolean;
  /** The status view's state of the pod (Updated, Due, Waiting, NotUpgradable, ...). */
  state?: PodState;
  /** The status view's why. */
  why?: string;
  /** What holds it, when it is matched and not updated. */
  hold?: Hold;
  /** The kubelet's waiting reasons of the set's sidecars (`agent: ImagePullBackOff`). */
  kubelet?: string[];
  /** The set's whole rollout is stalled, as the reconciler and `npm run status` tell it: their message. */
  stalled?: string;
}

/** One SidecarSet's part in the pod. */
export interface SetExplanation {
  set: string;
  /** pod-inject injects the set into this pod (for a live pod: would, were it created now). */
  applies: boolean;
  /** The verdict as injectionVerdicts gives it (the reason and the failing term when it does not apply). */
  verdict: InjectionVerdict;
  /** Why not, in words; absent when it applies. */
  why?: string;
  /**
   * The path that injects it into this pod where the injection policy is installed (injection-path.ts):
   * the set's own rule, or pod-inject when another set that injects the pod goes there. Absent when it does not apply.
   */
  path?: InjectionPath;
  /** What pod-inject puts into the pod (files) or what the pod carries of the set (live); absent when nothing. */
  injects?: InjectedParts;
  /** Live pods: the pod's injected-list names the set (it was injected at creation). */
  injected?: boolean;
  /** Live pods the set injected: which path did (the policy's record on the pod names the sets it injected alone). */
  injectedBy?: 'policy' | 'pod-inject';
  /** Live pods (or files with --pods) injected by the set: the rollout. */
  rollout?: RolloutExplanation;
}

export interface PodExplanation {
  pod: string;
  namespace: string;
  /** Every SidecarSet, by name. */
  sets: SetExplanation[];
  /** Said once for the pod: why pod-inject would refuse or could not decide it (files); absent otherwise. */
  problem?: string;
}

/** The input of {@link explainPod}. */
export interface ExplainInput {
  /** The pod as it is (live) or as it would be created (files). */
  pod: Pod;
  /** Its namespace (a file pod without one: the namespace pod-inject was given). */
  namespace: string;
  sets: readonly SidecarSet[];
  namespaceLabels: NamespaceLabels;
  /**
   * Files: the pod as pod-inject returns it (the patch applied), from which
   * each applying set's parts are read; absent for a live pod, whose own
   * containers and annotations say what it got.
   */
  injected?: Pod;
  /** Why pod-inject refused the pod or could not decide (files). */
  problem?: string;
  /** Why pod-inject lets the pod through untouched whatever the sets (files: a pod being deleted): then no set applies. */
  skipped?: string;
  /** Per set name, the pods of the set's scope (at least), for its rollout; a set absent here gets no rollout part. */
  scopePods?: ReadonlyMap<string, readonly Pod[]>;
  /** The reconciler's stall threshold and now: a stalled rollout is said as the reconcile says it (absent: never). */
  stall?: StallClock;
}

/** The selector term a label set fails, in words. */
export function mismatchText(mismatch: NonNullable<ReturnType<typeof selectorMismatch>>, of: string): string {
  switch (mismatch.term) {
    case 'matchLabels':
      return `matchLabels wants ${mismatch.key}=${mismatch.want}; the ${of} has ${mismatch.have === undefined ? `no label ${mismatch.key}` : `${mismatch.key}=${mismatch.have}`}`;
    case 'matchExpressions': {
      const values = mismatch.values.length > 0 ? ` [${mismatch.values.join(', ')}]` : '';
      return `matchExpressions[${mismatch.index}] wants ${mismatch.key} ${mismatch.operator}${values}; the ${of} has ${mismatch.have === undefined ? `no label ${mismatch.key}` : `${mismatch.key}=${mismatch.have}`}`;
    }
    case 'malformed':
      return `it is malformed (${mismatch.what}), so it selects nothing`;
  }
}

/** Why a verdict says the set does not inject, in words. */
export function verdictText(verdict: InjectionVerdict, namespace: string): string | undefined {
  if (verdict.injects) return undefined;
  switch (verdict.reason) {
    case 'paused':
      return `injectionStrategy.paused is true: it injects no new pod${verdict.selects === true ? ' (it would select this one)' : ''}`;
    case 'displaced-by-canary':
      return `canary SidecarSet ${verdict.canary} (apps.kruise.io/sidecarset-base: ${verdict.set}) also selects the pod and injects in its place`;
    case 'not-selected': {
      const { miss } = verdict;
      switch (miss.kind) {
        case 'namespace':
          return `spec.namespace is ${miss.want}; the pod is in ${namespace}`;
        case 'no-selector':
          return 'it has no usable spec.selector, so it selects no pod';
        case 'selector':
          return `spec.selector: ${mismatchText(miss.mismatch, 'pod')}`;
        case 'namespace-selector':
          return `spec.namespaceSelector: ${mismatchText(miss.mismatch, `namespace ${namespace}`)}`;
      }
    }
  }
  return undefined;
}

/** The names of the set's containers, init containers and volumes that `pod` holds (volumes: only those `before` did not already hold). */
export function partsIn(pod: Pod, set: SidecarSet, before?: Pod): InjectedParts {
  const names = (list: unknown): Set<string> => new Set(arrayOf(list).filter(isObject).map((c) => stringOf(c.name) ?? ''));
  const spec = objectOf(pod.spec);
  const containers = names(spec?.containers);
  const initContainers = names(spec?.initContainers);
  const volumes = names(spec?.volumes);
  const had = before === undefined ? new Set<string>() : names(objectOf(before.spec)?.volumes);
  const setSpec = objectOf(set.spec);
  const sidecarNames: string[] = [];
  for (const c of arrayOf(setSpec?.containers).filter(isObject)) {
    const name = stringOf(c.name) ?? '';
    // A HotUpgrade sidecar runs as two containers, `name-1` and `name-2`.
    const as = isHotUpgrade(c as SidecarContainer) ? [`${name}-1`, `${name}-2`] : [name];
    for (const n of as) if (containers.has(n)) sidecarNames.push(n);
  }
  const inits = arrayOf(setSpec?.initContainers).filter(isObject).map((c) => stringOf(c.name) ?? '').filter((n) => initContainers.has(n));
  const vols = arrayOf(setSpec?.volumes).filter(isObject).map((v) => stringOf(v.name) ?? '').filter((n) => volumes.has(n) && !had.has(n));
  const revision = parseRecordedEntries(podAnnotation(pod, ANNOTATION_HASH)).entry(sidecarSetName(set))?.controllerRevision;
  return { containers: sidecarNames, initContainers: inits, volumes: vols, ...(revision === undefined || revision === '' ? {} : { revision }) };
}

/** Why the set's rollout does not count the pod, in the order matchedList tests it. */
function notMatchedWhy(pod: Pod, set: SidecarSet, namespace: string, namespaceLabels: NamespaceLabels): string {
  if (!isActivePod(pod)) return 'the pod is not active (Succeeded, Failed or being deleted)';
  if (!isInjectedBy(pod, set)) return 'its kruise.io/sidecarset-injected-list does not name the set';
  if (!podHasSetContainers(pod, set)) return 'it lacks some of the set\'s sidecar containers';
  try {
    if (!sidecarSetSelectsPod(set, labelsOf(pod), namespace, namespaceLabels)) return 'the set no longer selects the pod';
  } catch (error) {
    return `cannot decide: ${errorMessage(error)}`;
  }
  return 'it is not among the pods listed for the set';
}

/** The hold of a matched pod not updated, from its state and the plan with holds. */
function holdOf(pod: Pod, set: SidecarSet, state: PodState, plan: RolloutPlan): Hold | undefined {
  const strategy = objectOf(set.spec?.updateStrategy) ?? {};
  switch (state) {
    case 'Due':
      return { kind: 'next' };
    case 'NotUpgradable':
      return { kind: 'not-upgradable', fields: changedFieldNames([pod], set) };
    case 'InFlight':
      return { kind: 'in-flight' };
    case 'NotSelected': {
      const mismatch = selectorMismatch(strategy.selector, labelsOf(pod));
      return { kind: 'selector', ...(mismatch === undefined ? {} : { term: mismatchText(mismatch, 'pod') }) };
    }
    case 'Waiting':
      break;
    default:
      return undefined;
  }
  const waiting = plan.waiting;
  if (waiting?.kind === 'not-update') return { kind: 'not-update' };
  if (waiting?.kind === 'paused') return { kind: 'paused' };
  if (waiting?.kind === 'flipping') return { kind: 'flipping' };
  if (waiting?.kind === 'invalid-strategy') return { kind: 'invalid-strategy', message: waiting.message };
  if (plan.holds?.partition.includes(pod) === true) return { kind: 'partition', partition: strategy.partition, held: plan.holds.partition.length };
  if (plan.holds?.maxUnavailable.includes(pod) === true && waiting?.kind === 'max-unavailable') {
    return { kind: 'max-unavailable', maxUnavailable: strategy.maxUnavailable ?? 1, unavailable: waiting.unavailable, ...(waiting.stuck === undefined ? {} : { waitingOn: waiting.stuck }) };
  }
  return { kind: 'later-batch' };
}

/** The rollout part of a pod the set injected. */
function rolloutOf(pod: Pod, set: SidecarSet, namespace: string, pods: readonly Pod[], namespaceLabels: NamespaceLabels, stall?: StallClock): RolloutExplanation {
  const listed = pods.includes(pod) ? pods : [...pods, pod];
  let matched: Pod[];
  let plan: RolloutPlan;
  try {
    matched = matchedPods(set, listed, namespaceLabels);
    plan = planRollout(set, listed, namespaceLabels, { holds: true });
  } catch (error) {
    return { matched: false, notMatched: `cannot decide: ${errorMessage(error)}` };
  }
  if (!matched.includes(pod)) return { matched: false, notMatched: notMatchedWhy(pod, set, namespace, namespaceLabels) };
  const view = podView(set, listed, namespaceLabels);
  const row = view.rows.find((r) => r.pod === podKey(pod));
  if (row === undefined) return { matched: true, ...(view.problem === undefined ? {} : { why: view.problem }) };
  const current = row.updated && row.state === 'Updated';
  const hold = row.updated ? undefined : holdOf(pod, set, row.state, plan);
  // The set's row as npm run status shows it: Stalled when the reconcile would say so.
  const setRow = stall === undefined ? undefined : viewRow(set, listed, namespaceLabels, stall);
  return {
    ...(setRow?.state === 'Stalled' ? { stalled: setRow.why } : {}),
    matched: true,
    updated: row.updated,
    current,
    state: row.state,
    why: row.why,
    ...(hold === undefined ? {} : { hold }),
    ...(row.waiting.length > 0 ? { kubelet: row.waiting } : {}),
  };
}

/**
 * Every SidecarSet's part in the pod, by set name.
 * @throws UnknownNamespaceError when a set's namespaceSelector needs the pod's Namespace and `namespaceLabels` lacks it (pod-inject cannot decide then either).
 */
export function explainPod(input: ExplainInput): PodExplanation {
  const { pod, namespace, sets, namespaceLabels } = input;
  const verdicts = injectionVerdicts(sets, { labels: labelsOf(pod), namespace, namespaceLabels });
  const byName = new Map(sets.map((set) => [sidecarSetName(set), set]));
  const live = input.injected === undefined;
  // One set the policy leaves to pod-inject sends the pod there: pod-inject then injects every set (injection-policy.ts).
  const toWebhook = verdicts.filter((v) => v.injects).find((v) => injectionPath(byName.get(v.set) as SidecarSet).path === 'webhook');
  const policyInjected = new Set((parsePolicyRecord(stringOf(objectOf(pod.metadata?.annotations)?.[ANNOTATION_POLICY_RECORD]) ?? '') ?? []).map((e) => e.set));
  const explained = verdicts.map((verdict): SetExplanation => {
    const set = byName.get(verdict.set) as SidecarSet;
    const why = input.skipped ?? verdictText(verdict, namespace);
    const out: SetExplanation = { set: verdict.set, applies: input.skipped === undefined && verdict.injects, verdict, ...(why === undefined ? {} : { why }) };
    if (out.applies) out.path = toWebhook === undefined || toWebhook.set === verdict.set ? injectionPath(set) : { path: 'webhook', reason: `set ${toWebhook.set}, which also injects the pod, goes to pod-inject` };
    if (!live) {
      // A refused pod gets nothing: pod-inject's answer is the refusal.
      if (out.applies && input.injected !== undefined && input.problem === undefined) out.injects = partsIn(input.injected, set, pod);
      if (!isInjectedBy(pod, set)) return out;
    } else {
      out.injected = isInjectedBy(pod, set);
      if (!out.injected) return out;
      out.injectedBy = policyInjected.has(verdict.set) ? 'policy' : 'pod-inject';
      out.injects = partsIn(pod, set);
    }
    const scope = input.scopePods?.get(verdict.set);
    if (scope !== undefined) out.rollout = rolloutOf(pod, set, namespace, scope, namespaceLabels, input.stall);
    return out;
  });
  return {
    pod: `${namespace}/${stringOf(pod.metadata?.name) ?? stringOf(pod.metadata?.generateName) ?? ''}`,
    namespace,
    sets: explained,
    ...(input.problem === undefined ? {} : { problem: input.problem }),
  };
}
