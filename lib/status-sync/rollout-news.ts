/**
 * Which changes of a followed set's pods wake the pace loop (pace.ts): a
 * pod added or gone, or a pod that is Ready after the change. A pod that is
 * not Ready (the kubelet restarting a container the loop just updated: a
 * hundred such changes follow each batch) frees no slot and finishes
 * nothing: a pass for it would only find maxUnavailable still taken, and the
 * pass it would be running when the first pod of the batch becomes ready
 * again delays the next batch by the rest of it. Waking only for a Ready pod
 * starts the pass that writes the next batch as soon as a slot frees. No
 * decision comes from the change itself (every pass reads the set's pods
 * afresh), so a change let pass here is seen by the next pass, at the latest
 * after the loop's interval.
 */
import type { PodNews } from '../ports.ts';
import { hasReadyCondition } from '../sidecarset/pod-state.ts';

export const rolloutNews: PodNews = (type, pod) => type !== 'MODIFIED' || hasReadyCondition(pod);
