/**
 * The reconciler's evictions on a real kube-apiserver with the rendered
 * webhook configurations (issue 45, item 5): the pod-eviction webhook,
 * answered by the local server's pod-change function reading as the
 * webhooks' read-only identity, refuses an eviction by the reconciler's
 * identity of a pod without a controller, naming the pod and the reason,
 * and admits one of a pod a ReplicaSet controls. Another user's eviction
 * never reaches it; with the functions away, the reconciler evicts nothing.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import type { ControlPlaneResponse, ControlPlaneUser } from '../../control-plane/harness.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { createNamespace, createPod, podPath, readPod } from '../../testkit/cluster-pods.ts';

const NS = 'shop';
const WEBHOOK = 'pod-eviction.sidecarset.kruise.io';

describeWithControlPlane('the pod-eviction webhook: the reconciler evicts only pods a controller recreates', () => {
  let stack: LocalStack | undefined;
  const s = (): LocalStack => {
    if (stack === undefined) throw new Error('the local stack did not start');
    return stack;
  };
  /** The ReplicaSet the owned pods name as their controller (no kube-controller-manager runs: nothing acts on it). */
  let replicaSet = { name: 'web', uid: '' };
  let seq = 0;
  const pod = (owned: boolean): Promise<Pod> =>
    createPod(s().cp, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `p-${seq++}`,
        namespace: NS,
        labels: { app: 'web' },
        ...(owned ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: replicaSet.name, uid: replicaSet.uid, controller: true, blockOwnerDeletion: true }] } : {}),
      },
      spec: { containers: [{ name: 'app', image: 'app:1' }] },
    });
  const evict = (user: ControlPlaneUser, target: Pod): Promise<ControlPlaneResponse> => {
    const name = target.metadata?.name ?? '';
    return s().cp.request(user, 'POST', `${podPath(NS, name)}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: NS }, deleteOptions: { preconditions: { uid: target.metadata?.uid } } });
  };
  const messageOf = (res: ControlPlaneResponse): string => (JSON.parse(res.body) as { message?: string }).message ?? '';
  /** The pod-change function's log lines (the pod-eviction webhook is that function at its URL). */
  const calls = (): number => s().logs.filter((line) => line.includes('"function":"pod-change"')).length;

  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    stack = await startLocalStack({});
    await createNamespace(stack.cp, NS);
    const rs = await stack.cp.request('admin', 'POST', `/apis/apps/v1/namespaces/${NS}/replicasets`, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web' },
      spec: { replicas: 0, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } } },
    });
    if (rs.status !== 201) throw new Error(`cannot create the ReplicaSet: ${rs.status} ${rs.body}`);
    replicaSet = { name: 'web', uid: (JSON.parse(rs.body) as { metadata: { uid: string } }).metadata.uid };
  }, 30 * 60_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it('refuses the reconciler’s eviction of a pod without a controller, naming the pod and the reason, and the pod stays', async () => {
    const target = await pod(false);
    const before = calls();
    const res = await evict('status-sync', target);
    expect([res.status, messageOf(res)]).toEqual([
      403,
      `admission webhook "${WEBHOOK}" denied the request: sidecarset-status-sync may not evict pod ${NS}/${target.metadata?.name}: it has no controller (no ownerReference with controller: true), so nothing would recreate it`,
    ]);
    expect((await readPod(s().cp, NS, target.metadata?.name ?? ''))?.metadata?.uid).toBe(target.metadata?.uid);
    expect(calls()).toBe(before + 1);
  });

  it('holds any member of the reconciler’s group, whatever its username (the functions test identity)', async () => {
    const res = await evict('functions', await pod(false));
    expect([res.status, messageOf(res)]).toEqual([403, expect.stringContaining('it has no controller')]);
  });

  it('admits the reconciler’s evictions of pods a ReplicaSet controls', async () => {
    const targets = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(() => pod(true)));
    const timings: number[] = [];
    for (const target of targets) {
      const started = performance.now();
      const res = await evict('status-sync', target);
      timings.push(performance.now() - started);
      expect([target.metadata?.name, res.status]).toEqual([target.metadata?.name, 201]);
    }
    const sorted = timings.sort((a, b) => a - b).map(Math.round);
    if (process.env.EVICTION_WEBHOOK_PRINT === '1') console.log(`10 evictions through the webhook: median ${sorted[5]} ms, max ${sorted[9]} ms`);
  });

  it('never calls the webhook for another user’s eviction: an administrator evicts a pod without a controller', async () => {
    const target = await pod(false);
    const before = calls();
    expect((await evict('admin', target)).status).toBe(201);
    expect(calls()).toBe(before);
  });

  it('lets the reconciler evict nothing while the functions are away (failurePolicy Fail)', async () => {
    const target = await pod(true);
    await s().stopServer();
    const res = await evict('status-sync', target);
    expect([res.status, messageOf(res)]).toEqual([500, expect.stringContaining(`failed calling webhook "${WEBHOOK}"`)]);
    expect((await readPod(s().cp, NS, target.metadata?.name ?? ''))?.metadata?.uid).toBe(target.metadata?.uid);
  });
});
