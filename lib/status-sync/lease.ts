/**
 * The reconciler's heartbeat: a coordination.k8s.io/v1 Lease in the revision
 * namespace, renewed at the end of every resync (the schedule's), so that
 * `npm run doctor` can tell from the cluster alone when the last resync ran. A
 * quiet resync writes nothing else anywhere. Pure: the adapter
 * (lib/adapters/kube-lease.ts) reads and writes it.
 */
import { objectOf, stringOf } from '../kube/json.ts';

/** The Lease's name; RBAC (infra/k8s/rbac.yaml) lets the reconciler get and update this one alone. */
export const STATUS_SYNC_LEASE_NAME = 'serverless-sidecarset-status-sync';

/** How often a resync runs (npm start's loop; on AWS the schedule's rate, set by the stack): the Lease's duration follows it. */
export const ENV_STATUS_SYNC_INTERVAL_MS = 'STATUS_SYNC_INTERVAL_MS';

/** Resync intervals a Lease stays valid for: one late or failed resync is not yet a stopped reconciler. */
export const LEASE_INTERVALS = 3;

export interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: { holderIdentity: string; leaseDurationSeconds: number; acquireTime: string; renewTime: string; leaseTransitions: number };
}

/** A MicroTime as the API server writes it (RFC 3339, six fractional digits, UTC). */
export function microTime(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** The Lease's duration for resyncs every `intervalMs`: {@link LEASE_INTERVALS} of them, in whole seconds. */
export function leaseDurationSeconds(intervalMs: number): number {
  return Math.max(1, Math.ceil((LEASE_INTERVALS * intervalMs) / 1000));
}

/**
 * The Lease renewed now by `holder`: created when `current` is undefined,
 * else `current` (its resourceVersion kept, so the update is refused if
 * another writer moved it) with a new renewTime; a new holder is a transition.
 */
export function renewedLease(current: unknown, at: { namespace: string; holder: string; durationSeconds: number; nowMs: number }): Lease {
  const now = microTime(at.nowMs);
  const metadata = objectOf(objectOf(current)?.metadata);
  const spec = objectOf(objectOf(current)?.spec);
  const resourceVersion = stringOf(metadata?.resourceVersion);
  const sameHolder = spec !== undefined && stringOf(spec.holderIdentity) === at.holder;
  const transitions = typeof spec?.leaseTransitions === 'number' ? spec.leaseTransitions : 0;
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: STATUS_SYNC_LEASE_NAME, namespace: at.namespace, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    spec: {
      holderIdentity: at.holder,
      leaseDurationSeconds: at.durationSeconds,
      acquireTime: sameHolder ? (stringOf(spec.acquireTime) ?? now) : now,
      renewTime: now,
      leaseTransitions: spec === undefined || sameHolder ? transitions : transitions + 1,
    },
  };
}
