/**
 * The rollout view's read of the reconciler's RevisionWriteFailed Events
 * (lib/status-view/revision-failures.ts): one list of the Events of that
 * reason on SidecarSets, in the namespace the reconciler writes them to.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { objectOf, stringOf } from '../kube/json.ts';
import { REVISION_WRITE_FAILED } from '../status-sync/revision-failure.ts';
import type { RevisionFailureEvent, RevisionFailureSource } from '../status-view/revision-failures.ts';
import { KubeApiError } from './kube-api-error.ts';
import { rawKubeClient } from './kube-raw.ts';
import { callSignal, DEFAULT_CALL_TIMEOUT_MS, EVENT_NAMESPACE } from './kube-status-sync.ts';

export function kubeRevisionFailures(kc: KubeConfig): RevisionFailureSource {
  const client = rawKubeClient(kc);
  const selector = encodeURIComponent(`involvedObject.kind=SidecarSet,reason=${REVISION_WRITE_FAILED}`);
  return async (signal) => {
    const operation = `list ${REVISION_WRITE_FAILED} events in "${EVENT_NAMESPACE}"`;
    const body = await client.expect2xx('GET', `/api/v1/namespaces/${EVENT_NAMESPACE}/events?fieldSelector=${selector}`, operation, callSignal(signal, DEFAULT_CALL_TIMEOUT_MS));
    const items = objectOf(body)?.items;
    if (!Array.isArray(items)) throw new KubeApiError(operation, 'the answer is not a list (no items array)');
    return items.map((item): RevisionFailureEvent => {
      const event = objectOf(item) ?? {};
      const involved = objectOf(event.involvedObject) ?? {};
      return {
        uid: stringOf(involved.uid) ?? '',
        name: stringOf(involved.name) ?? '',
        message: stringOf(event.message) ?? '',
        at: stringOf(event.lastTimestamp) ?? stringOf(event.eventTime) ?? stringOf(objectOf(event.metadata)?.creationTimestamp) ?? '',
      };
    });
  };
}
