/**
 * Pod triggers (docs/RECONCILER.md, "A pod change starts a pass"): the pod
 * webhooks (pod-inject on CREATE, pod-change on DELETE and pods/status
 * UPDATE) tell the reconciler which sets' pods changed, so that those sets'
 * statuses follow within seconds instead of at the next scheduled pass.
 *
 * A trigger only makes a pass come sooner: every set gets one at each
 * scheduled pass, so a trigger that is lost changes nothing but the wait.
 */
import { isObject, objectOf, stringOf } from '../kube/json.ts';
import type { AdmittedSidecarSet } from '../ports.ts';
import { parseInjectedList } from '../sidecarset/pod-annotations.ts';
import { ANNOTATION_INJECTED_LIST } from '../sidecarset/types.ts';

/**
 * How long after a pod trigger arrived its set's pass reads the pods.
 * Admission is not yet the write: the API server stores the pod (or its
 * status) after the webhooks answered, a few milliseconds later on the
 * local stack. The wait is also the window in which further changes of the
 * same set coalesce into the one pass (admitted-queue.ts). 250 ms measured
 * on the local stack: p95 change-to-status 0.28–0.34 s (docs/BENCHMARKS.md).
 */
export const POD_SETTLE_MS = 250;

/** The most sets one pod trigger names: a pod's injected list longer than this is not one the webhook wrote. */
export const MAX_TRIGGERED_SETS = 32;

/** The change that starts `set`'s pass because its pods changed. */
export function podsChange(sidecarSet: string): AdmittedSidecarSet {
  return { sidecarSet, uid: '', operation: 'PODS', resourceVersion: '' };
}

/**
 * The sets a pod says it was injected with (`kruise.io/sidecarset-injected-list`),
 * de-duplicated, at most {@link MAX_TRIGGERED_SETS}; none for anything that is not a pod with one.
 */
export function setsOfPod(pod: unknown): string[] {
  if (!isObject(pod)) return [];
  const annotations = objectOf(objectOf(pod.metadata)?.annotations);
  const list = stringOf(annotations?.[ANNOTATION_INJECTED_LIST]);
  return [...new Set(parseInjectedList(list).filter((name) => name !== ''))].slice(0, MAX_TRIGGERED_SETS);
}

/**
 * What one warm reconciler remembers of the passes it ran, so that a pod
 * trigger a pass already covered costs no API request (on AWS every trigger
 * is its own queued invoke: a burst of 1,000 pod changes of one set is a
 * handful of passes and many invocations that end at once).
 *
 * A pass covers a trigger when it began reading at least {@link POD_SETTLE_MS}
 * after the webhook sent the trigger: the change was stored by then.
 */
export interface PassCoverage {
  /** Records that passes of `sets` (every set, when undefined: a full pass) begin reading at `atMs` (epoch ms) or later. */
  began(atMs: number, sets?: readonly string[]): void;
  /** Whether a pass that began after the change was stored covers a trigger of `set` sent at `sentAtMs`. */
  covers(set: string, sentAtMs: number): boolean;
}

/** The most sets remembered; the oldest is forgotten first (forgetting only costs a pass). */
const MAX_REMEMBERED_SETS = 1_000;

export function passCoverage(settleMs: number = POD_SETTLE_MS): PassCoverage {
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
      return sentAtMs + settleMs <= began;
    },
  };
}
