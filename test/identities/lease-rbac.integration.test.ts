/**
 * The reconciler's heartbeat Lease under infra/k8s/rbac.yaml on a real
 * kube-apiserver: it may create, read and renew its own Lease in the revision
 * namespace, read or change no other Lease there, and write none elsewhere;
 * the webhooks' identity writes none. Create cannot be limited by name (the
 * name is in the body), so creating another Lease in that namespace is
 * allowed: the test says so, so that a change to it is seen.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane, type ControlPlaneUser } from '../../control-plane/harness.ts';
import { renewedLease, STATUS_SYNC_LEASE_NAME } from '../../lib/status-sync/lease.ts';
import { createNamespace } from '../../testkit/cluster-pods.ts';

const leases = (ns: string): string => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
const lease = (ns: string, name = STATUS_SYNC_LEASE_NAME) => ({ ...renewedLease(undefined, { namespace: ns, holder: 'status-sync@test', durationSeconds: 90, nowMs: Date.now() }), metadata: { name, namespace: ns } });

describeWithControlPlane('the reconciler’s heartbeat Lease under rbac.yaml', () => {
  let controlPlane: ControlPlane | undefined;
  const cp = (): ControlPlane => {
    if (controlPlane === undefined) throw new Error('the control plane did not start');
    return controlPlane;
  };
  const status = async (user: ControlPlaneUser, method: string, path: string, body?: unknown): Promise<number> => (await cp().request(user, method, path, body)).status;

  beforeAll(async () => {
    controlPlane = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await createNamespace(controlPlane, 'elsewhere');
    // RBAC reaches the authorizer through a watch: wait until the reconciler's own Lease reads as absent, not forbidden.
    for (const deadline = Date.now() + 30_000; (await status('status-sync', 'GET', `${leases('kruise-system')}/${STATUS_SYNC_LEASE_NAME}`)) !== 404; ) {
      if (Date.now() > deadline) throw new Error('the Lease Role is not in force after 30 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Another component's Lease beside ours.
    expect(await status('admin', 'POST', leases('kruise-system'), lease('kruise-system', 'kruise-manager'))).toBe(201);
  }, 30 * 60_000);

  afterAll(async () => {
    await controlPlane?.stop();
  });

  it('creates, reads and renews its own Lease in the revision namespace', async () => {
    expect(await status('status-sync', 'POST', leases('kruise-system'), lease('kruise-system'))).toBe(201);
    const stored = JSON.parse((await cp().request('status-sync', 'GET', `${leases('kruise-system')}/${STATUS_SYNC_LEASE_NAME}`)).body) as unknown;
    const renewed = renewedLease(stored, { namespace: 'kruise-system', holder: 'status-sync@test', durationSeconds: 90, nowMs: Date.now() + 1_000 });
    expect(await status('status-sync', 'PUT', `${leases('kruise-system')}/${STATUS_SYNC_LEASE_NAME}`, renewed)).toBe(200);
  });

  it('reads, renews and deletes no other Lease there', async () => {
    const other = `${leases('kruise-system')}/kruise-manager`;
    expect(await status('status-sync', 'GET', other)).toBe(403);
    expect(await status('status-sync', 'PUT', other, lease('kruise-system', 'kruise-manager'))).toBe(403);
    expect(await status('status-sync', 'DELETE', other)).toBe(403);
    expect(await status('status-sync', 'DELETE', `${leases('kruise-system')}/${STATUS_SYNC_LEASE_NAME}`)).toBe(403);
    expect(await status('status-sync', 'GET', leases('kruise-system'))).toBe(403);
  });

  it('creates a Lease of another name there: create cannot be limited by name (docs/OPERATIONS.md says so)', async () => {
    expect(await status('status-sync', 'POST', leases('kruise-system'), lease('kruise-system', 'any-name'))).toBe(201);
  });

  it('writes no Lease in another namespace', async () => {
    expect(await status('status-sync', 'POST', leases('elsewhere'), lease('elsewhere'))).toBe(403);
    expect(await status('status-sync', 'POST', leases('kube-node-lease'), lease('kube-node-lease', 'node-1'))).toBe(403);
  });

  it('the webhooks’ identity writes no Lease, not even the reconciler’s', async () => {
    expect(await status('webhooks', 'POST', leases('kruise-system'), lease('kruise-system', 'from-webhooks'))).toBe(403);
    expect(await status('webhooks', 'PUT', `${leases('kruise-system')}/${STATUS_SYNC_LEASE_NAME}`, lease('kruise-system'))).toBe(403);
  });
});
