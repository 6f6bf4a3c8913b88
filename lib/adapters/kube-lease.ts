/**
 * The reconciler's heartbeat Lease (lib/status-sync/lease.ts) in the cluster:
 * read it, and renew it (created on 404, else updated with the
 * resourceVersion read, so a concurrent writer's change is refused, not
 * overwritten: the next resync renews again).
 */
import { isObject } from '../kube/json.ts';
import { renewedLease, STATUS_SYNC_LEASE_NAME } from '../status-sync/lease.ts';
import { apiServerAnswered } from './kube-api-error.ts';
import { getObject, type KubeClient } from './kube-request.ts';

const leasesPath = (namespace: string): string => `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
const leasePath = (namespace: string): string => `${leasesPath(namespace)}/${STATUS_SYNC_LEASE_NAME}`;

/** The Lease as stored; undefined when there is none. @throws KubeApiError when it cannot be read. */
export async function readStatusSyncLease(client: KubeClient, namespace: string, signal?: AbortSignal): Promise<Record<string, unknown> | undefined> {
  return getObject(client, leasePath(namespace), `get Lease ${namespace}/${STATUS_SYNC_LEASE_NAME}`, signal);
}

export interface LeaseRenewal {
  namespace: string;
  holder: string;
  durationSeconds: number;
  nowMs: () => number;
}

/** Renews the Lease for `holder` now. @throws KubeApiError when it cannot be read or written (a conflict included). */
export async function renewStatusSyncLease(client: KubeClient, renewal: LeaseRenewal, signal?: AbortSignal): Promise<void> {
  const { namespace } = renewal;
  const current = await readStatusSyncLease(client, namespace, signal);
  const lease = renewedLease(current, { namespace, holder: renewal.holder, durationSeconds: renewal.durationSeconds, nowMs: renewal.nowMs() });
  const operation = `${current === undefined ? 'create' : 'update'} Lease ${namespace}/${STATUS_SYNC_LEASE_NAME}`;
  const answer = await client.request(current === undefined
    ? { method: 'POST', path: leasesPath(namespace), body: lease, operation, ...(signal === undefined ? {} : { signal }) }
    : { method: 'PUT', path: leasePath(namespace), body: lease, operation, ...(signal === undefined ? {} : { signal }) });
  if (answer.status < 200 || answer.status > 299 || !isObject(answer.body)) throw apiServerAnswered(operation, answer.status, answer.body);
}
