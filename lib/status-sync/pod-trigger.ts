/**
 * Pod triggers (docs/RECONCILER.md, "A pod change starts a reconcile"): the pod
 * webhooks (pod-inject on CREATE, pod-change on DELETE and pods/status
 * UPDATE) tell the reconciler which sets' pods changed, so that those sets'
 * statuses follow within seconds instead of at the next scheduled reconcile.
 *
 * A trigger only makes a reconcile come sooner: every set gets one at each
 * scheduled reconcile, so a trigger that is lost changes nothing but the wait.
 */
import { isObject, objectOf, stringOf } from '../kube/json.ts';
import type { AdmittedSidecarSet } from '../ports.ts';
import type { PodPlace } from '../sidecarset/injecting-sets.ts';
import { sidecarSetName, sidecarSetSelectsPod, UnknownNamespaceError } from '../sidecarset/match.ts';
import { parseInjectedList } from '../sidecarset/pod-annotations.ts';
import { ANNOTATION_POLICY_RECORD, parsePolicyRecord, policyStateOf } from '../sidecarset/policy-record.ts';
import { ANNOTATION_INJECTED_LIST, type SidecarSet } from '../sidecarset/types.ts';

/**
 * How long after a pod trigger arrived its set's reconcile reads the pods.
 * Admission is not yet the write: the API server stores the pod (or its
 * status) after the webhooks answered, a few milliseconds later on the
 * local stack. The wait is also the window in which further changes of the
 * same set coalesce into the one reconcile (admitted-queue.ts). See
 * BENCHMARKS.md, 'Pod changes to stored status'.
 */
export const POD_DEBOUNCE_MS = 250;

/**
 * The most sets one pod change starts reconciles for: what one SQS
 * SendMessageBatch carries (ten), so that a pod change costs at most one
 * send whatever the pod names. A pod injected by more sets than that (rare)
 * has the others' counts follow at the next reconcile that covers them: the
 * schedule's at the latest.
 */
export const MAX_TRIGGERED_SETS = 10;

/** The change that starts `set`'s reconcile because its pods changed. */
export function podsChange(sidecarSet: string): AdmittedSidecarSet {
  return { sidecarSet, uid: '', operation: 'PODS', resourceVersion: '' };
}

/**
 * The sets injection recorded on a pod, de-duplicated: the sets the
 * injection policy's record names when the policy alone injected the pod
 * (its record is then the whole story: policy-record.ts), else the names of
 * `kruise.io/sidecarset-injected-list` (pod-inject writes it, and removes it
 * from pods no set injects). Every name, however many: they are only
 * candidates, looked up one by one ({@link triggeredSets}).
 */
export function recordedSets(pod: unknown): string[] {
  if (!isObject(pod)) return [];
  const annotations = objectOf(objectOf(pod.metadata)?.annotations);
  if (policyStateOf(pod) === 'injected') {
    const record = parsePolicyRecord(stringOf(annotations?.[ANNOTATION_POLICY_RECORD]) ?? '');
    return [...new Set((record ?? []).map((entry) => entry.set).filter((name) => name !== ''))];
  }
  return [...new Set(parseInjectedList(stringOf(annotations?.[ANNOTATION_INJECTED_LIST])).filter((name) => name !== ''))];
}

/** The stored sets among `names` (a name no set has is dropped), each once, by a lookup per name. */
export function storedSets(names: readonly string[], byName: ReadonlyMap<string, SidecarSet>): SidecarSet[] {
  const out: SidecarSet[] = [];
  for (const name of names) {
    const set = byName.get(name);
    if (set !== undefined) out.push(set);
  }
  return out;
}

/**
 * The names of the sets among `sets` that select the pod today (match.ts,
 * the test injection makes, pausing aside as the status counts paused sets'
 * pods too), at most {@link MAX_TRIGGERED_SETS}. A set whose
 * namespaceSelector needs labels `place` lacks is kept: a trigger only makes
 * a reconcile come sooner, and it is one send whatever it names.
 */
export function selectingSetNames(sets: readonly SidecarSet[], place: PodPlace): string[] {
  const out: string[] = [];
  for (const set of sets) {
    if (out.length === MAX_TRIGGERED_SETS) break;
    if (selectsIfKnown(set, place)) out.push(sidecarSetName(set));
  }
  return out;
}

function selectsIfKnown(set: SidecarSet, place: PodPlace): boolean {
  try {
    return sidecarSetSelectsPod(set, place.labels, place.namespace, place.namespaceLabels);
  } catch (error) {
    if (error instanceof UnknownNamespaceError) return true;
    throw error;
  }
}

/**
 * What one warm reconciler remembers of the reconciles it ran, so that a pod
 * trigger a reconcile already covered costs no API request (on AWS every trigger
 * is its own queued invoke: a burst of 1,000 pod changes of one set is a
 * handful of reconciles and many invocations that end at once).
 *
 * A reconcile covers a trigger when it began reading at least {@link POD_DEBOUNCE_MS}
 * after the webhook sent the trigger: the change was stored by then.
 */
export interface ReconcileCoverage {
  /** Records that reconciles of `sets` (every set, when undefined: a resync) begin reading at `atMs` (epoch ms) or later. */
  began(atMs: number, sets?: readonly string[]): void;
  /** Whether a reconcile that began after the change was stored covers a trigger of `set` sent at `sentAtMs`. */
  covers(set: string, sentAtMs: number): boolean;
}

/** The most sets remembered; the oldest is forgotten first (forgetting only costs a reconcile). */
const MAX_REMEMBERED_SETS = 1_000;

export function reconcileCoverage(debounceMs: number = POD_DEBOUNCE_MS): ReconcileCoverage {
  const bySet = new Map<string, number>();
  let all = -Infinity;
  return {
    began(atMs, sets) {
      if (sets === undefined) {
        all = Math.max(all, atMs);
        return;
      }
      for (const set of sets) {
        const at = Math.max(atMs, bySet.get(set) ?? -Infinity);
        bySet.delete(set);
        bySet.set(set, at);
      }
      while (bySet.size > MAX_REMEMBERED_SETS) bySet.delete(bySet.keys().next().value as string);
    },
    covers(set, sentAtMs) {
      const began = Math.max(all, bySet.get(set) ?? -Infinity);
      return sentAtMs + debounceMs <= began;
    },
  };
}
