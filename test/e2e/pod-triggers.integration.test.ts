/**
 * A SidecarSet's stored status follows its pods within seconds with no
 * controller in the cluster: a real kube-apiserver calls the local server's
 * pod-inject webhook on CREATE and its pod-change webhook (matchConditions,
 * failurePolicy Ignore, 1 s) on DELETE and on the kubelet's status writes;
 * each hands the status loop a pod trigger, and the set's reconcile writes the
 * status. The loop's schedule is an hour here, so only the triggers can
 * make the status follow.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import { createSet, driveOneAtATime, watchedSet, readCounts, type ChangeLatency } from '../../testkit/pod-change-latency.ts';
import { quantile } from '../../testkit/bench/stats.ts';

/** The bound: a change shows in the stored status within 2 s at p95 on the local stack. */
const BOUND_MS = 2_000;
let stack: LocalStack;

function p95(latencies: readonly ChangeLatency[]): number {
  return quantile(latencies.map((l) => l.ms).sort((a, b) => a - b), 0.95);
}

describeWithControlPlane('pod triggers: the stored status follows pod changes without a controller', () => {
  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    // The webhook path: a pod's CREATE starts its reconcile from pod-inject (the policy path calls no webhook on it).
    stack = await startLocalStack({ injection: 'webhook', statusSyncIntervalMs: 3_600_000 });
    await createSet(stack.cp, watchedSet('log-agent', 'web'));
    // The loop's first resync (at start) has run once the new set's status is written.
    const deadline = Date.now() + 30_000;
    while (!(await stack.cp.request('admin', 'GET', '/apis/apps.kruise.io/v1alpha1/sidecarsets/log-agent')).body.includes('"observedGeneration"')) {
      if (Date.now() > deadline) throw new Error('the new SidecarSet got no status');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 30 * 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  it('shows each pod created, made ready, made unready and deleted within 2 s at p95, with the schedule an hour away', async () => {
    const latencies = await driveOneAtATime(stack.cp, { set: 'log-agent', app: 'web', namespace: 'default', pods: 8, timeoutMs: 10_000 });
    if (process.env.POD_TRIGGER_PRINT === '1') console.log(JSON.stringify(latencies.map((l) => [l.kind, Math.round(l.ms)])), stack.logs.filter((line) => line.includes('"function":"pod-change"')).length, stack.statusSyncRequests());
    for (const kind of ['create', 'ready', 'unready', 'delete'] as const) {
      const ofKind = latencies.filter((l) => l.kind === kind);
      expect(ofKind.length).toBeGreaterThan(0);
      expect({ kind, p95: p95(ofKind) < BOUND_MS }).toEqual({ kind, p95: true });
    }
    expect(await readCounts(stack.cp, 'log-agent')).toEqual({ matchedPods: 0, readyPods: 0 });
  }, 180_000);

  it('renders the pod-change webhook as the API server keeps it: Ignore, 1 s, and its three match conditions', async () => {
    const res = await stack.cp.request('admin', 'GET', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/serverless-sidecarset');
    const config = JSON.parse(res.body) as { webhooks: { name: string; failurePolicy: string; timeoutSeconds: number; matchConditions?: { name: string }[] }[] };
    const webhook = config.webhooks.find((w) => w.name === 'pod-change.sidecarset.kruise.io');
    expect(webhook).toMatchObject({ failurePolicy: 'Ignore', timeoutSeconds: 1 });
    expect(webhook?.matchConditions?.map((c) => c.name)).toEqual(['injected-by-a-sidecarset', 'not-already-terminating', 'counted-status-changed']);
  });

  it('lets a pod that no set injected change without calling the pod-change webhook (its match conditions keep it out)', async () => {
    const calls = () => stack.logs.filter((line) => line.includes('"function":"pod-change"')).length;
    const before = calls();
    const res = await stack.cp.request('admin', 'POST', '/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'plain', labels: { app: 'other' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } });
    expect(res.status).toBe(201);
    const patched = await stack.cp.request('admin', 'PATCH', '/api/v1/namespaces/default/pods/plain/status', { status: { phase: 'Running' } }, 'application/merge-patch+json');
    expect(patched.status).toBe(200);
    expect((await stack.cp.request('admin', 'DELETE', '/api/v1/namespaces/default/pods/plain')).status).toBe(200);
    expect(calls()).toBe(before);
  });
});
