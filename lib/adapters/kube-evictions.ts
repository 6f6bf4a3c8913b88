/**
 * Pod evictions through the Eviction API (policy/v1 Eviction, a `create` on
 * pods/eviction), never a DELETE: the API server then refuses an eviction a
 * PodDisruptionBudget does not allow (429), and the pod keeps its own grace
 * period (no deleteOptions but the uid precondition, which the reconciler's
 * eviction policy in infra/k8s/rbac.yaml also holds it to).
 */
import type { PodEvictor } from '../ports.ts';
import { apiServerAnswered } from './kube-api-error.ts';
import type { KubeClient } from './kube-request.ts';

const enc = encodeURIComponent;

/** Message of a refusal, as the API server words it ("Cannot evict pod as it would violate the pod's disruption budget."). */
function statusMessage(body: unknown): string {
  const message = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : undefined;
  return typeof message === 'string' && message !== '' ? message : 'the API server answered 429';
}

export function kubePodEvictor(client: KubeClient): PodEvictor {
  return {
    async evict(pod, signal) {
      const operation = `evict pod "${pod.namespace}/${pod.name}"`;
      const body = {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: pod.name, namespace: pod.namespace },
        // The pod decided on, not a namesake a StatefulSet made since.
        deleteOptions: { preconditions: { uid: pod.uid } },
      };
      // Not guarded: a 429 is a budget's answer for this reconcile, not a call to ask again at once.
      const answer = await client.request({ method: 'POST', path: `/api/v1/namespaces/${enc(pod.namespace)}/pods/${enc(pod.name)}/eviction`, operation, body, ...(signal === undefined ? {} : { signal }) });
      if (answer.status >= 200 && answer.status <= 299) return { outcome: 'evicted' };
      if (answer.status === 429) return { outcome: 'refused', message: statusMessage(answer.body) };
      // 404: gone; 409: its uid precondition failed, so the pod of that name is another one.
      if (answer.status === 404 || answer.status === 409) return { outcome: 'gone' };
      throw apiServerAnswered(operation, answer.status, answer.body);
    },
  };
}
