/**
 * The rollout view's SidecarSet reads (`npm run -s status`): the whole list
 * with its resourceVersion, and a watch from it. Plain JSON (kube-raw.ts),
 * as the reconciler reads sets, so the plan sees them exactly as stored.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { isObject, objectOf, stringOf } from '../kube/json.ts';
import type { SidecarSetWatchSource } from '../ports.ts';
import { GROUP, VERSION, type SidecarSet } from '../sidecarset/types.ts';
import { apiServerAnswered, KubeApiError } from './kube-api-error.ts';
import { rawKubeClient } from './kube-raw.ts';
import { LIST_SIDECARSETS, SIDECARSET_PLURAL } from './kube-sources.ts';
import { callSignal, DEFAULT_CALL_TIMEOUT_MS, type StatusSyncAdapterOptions } from './kube-status-sync.ts';
import { watchForChange } from './kube-watch.ts';

const SETS_PATH = `/apis/${GROUP}/${VERSION}/${SIDECARSET_PLURAL}`;

/** What a 404 on the SidecarSet list means, and what to do about it. */
export const NO_SIDECARSET_CRD = `the API server has no SidecarSets (${SIDECARSET_PLURAL}.${GROUP}/${VERSION}): the SidecarSet CRD is not installed in this cluster (kubectl apply -f infra/k8s/crd.yaml)`;

export function kubeSidecarSetWatch(kc: KubeConfig, options: StatusSyncAdapterOptions = {}): SidecarSetWatchSource {
  const client = rawKubeClient(kc);
  const timeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const watch = new Watch(kc);
  return {
    async list(signal) {
      const answer = await client.request('GET', SETS_PATH, LIST_SIDECARSETS, callSignal(signal, timeoutMs));
      // A missing resource answers 404 with a bare "page not found" Status: say what is missing instead.
      if (answer.status === 404) throw new KubeApiError(LIST_SIDECARSETS, NO_SIDECARSET_CRD, 404);
      if (answer.status !== 200) throw apiServerAnswered(LIST_SIDECARSETS, answer.status, answer.body);
      const body = objectOf(answer.body);
      if (body === undefined || !Array.isArray(body.items)) throw new KubeApiError(LIST_SIDECARSETS, 'the answer is not a list (no items array)', answer.status);
      const sets: SidecarSet[] = body.items.filter(isObject);
      return { sets, resourceVersion: stringOf(objectOf(body.metadata)?.resourceVersion) ?? '' };
    },
    changed(resourceVersion, waitMs, signal) {
      return watchForChange(watch, SETS_PATH, {}, resourceVersion, new Set(), waitMs, signal);
    },
  };
}
