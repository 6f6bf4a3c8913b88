/**
 * What a pod's own annotations can cost the reconciler (issue 45 item 3), on
 * the local stack: the real kube-apiserver calling the local server's
 * pod-inject and pod-change webhooks, and the status loop as rbac.yaml's
 * reconciler, whose API requests are counted as the pod-trigger bench
 * counts them (its HTTP client's count). A pod's creator may write
 * `kruise.io/sidecarset-injected-list` on their own pod after its creation
 * (pod-inject runs on CREATE only) or beside a set that really injects it;
 * a pod change then triggers only the sets injection recorded that select
 * the pod today, so naming 32 sets costs what naming none (or only the real
 * one) costs. The webhooks' triggers are recorded on their way to the loop.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import type { AdmittedListener } from '../../functions/server/local-trigger.ts';
import type { StatusLoop } from '../../functions/status-sync/loop.ts';
import type { AdmittedSidecarSet } from '../../lib/ports.ts';
import { createPod, podPath } from '../../testkit/cluster-pods.ts';
import { createSet, watchedSet } from '../../testkit/pod-change-latency.ts';

const PODS = 100;
const NAMED = 32;
const LIST = 'kruise.io/sidecarset-injected-list';
/** 32 sets none of the tenant pods' labels select. */
const OTHERS = Array.from({ length: NAMED }, (_, i) => `other-${String(i).padStart(2, '0')}`);
let stack: LocalStack;

async function settled(): Promise<void> {
  // Triggers start reconciles 250 ms after they arrive (POD_DEBOUNCE_MS); reconciling 33 sets takes well under a second here.
  let last = -1;
  while (stack.statusSyncRequests() !== last) {
    last = stack.statusSyncRequests();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
  }
}

async function patchAnnotations(name: string, annotations: Record<string, string>): Promise<void> {
  const res = await stack.cp.request('admin', 'PATCH', podPath('default', name), { metadata: { annotations } }, 'application/merge-patch+json');
  if (res.status !== 200) throw new Error(`annotating pod ${name}: ${res.status} ${res.body.slice(0, 300)}`);
}

async function remove(name: string): Promise<void> {
  const res = await stack.cp.request('admin', 'DELETE', podPath('default', name));
  if (res.status !== 200) throw new Error(`deleting pod ${name}: ${res.status} ${res.body.slice(0, 300)}`);
}

interface Run {
  app: string;
  /** Annotations the pods carry at creation. */
  created?: Record<string, string>;
  /** Annotations written on each pod after its creation, by its creator. */
  added?: Record<string, string>;
}

interface Cost {
  /** The reconciler's API requests. */
  requests: number;
  /** The sets the webhooks' pod triggers named. */
  triggered: Set<string>;
}

/** Every trigger the webhooks hand over, recorded, then passed on to the status loop. */
const told: AdmittedSidecarSet[] = [];
const recorder: AdmittedListener & { loop?: StatusLoop } = {
  admitted(change) {
    told.push(change);
    this.loop?.admitted(change);
  },
};

/** What the reconciler did while PODS pods were created (and annotated), then deleted. */
async function costOf(run: Run): Promise<Cost> {
  await settled();
  const before = stack.statusSyncRequests();
  const fromTrigger = told.length;
  const names = Array.from({ length: PODS }, (_, i) => `${run.app}-${i}`);
  for (const name of names) {
    await createPod(stack.cp, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: run.app }, ...(run.created === undefined ? {} : { annotations: run.created }) }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } });
    if (run.added !== undefined) await patchAnnotations(name, run.added);
  }
  for (const name of names) await remove(name);
  await settled();
  return { requests: stack.statusSyncRequests() - before, triggered: new Set(told.slice(fromTrigger).filter((c) => c.operation === 'PODS').map((c) => c.sidecarSet)) };
}

const costs: Record<string, Cost> = {};
const requests = (run: string): number => costs[run]?.requests ?? Number.NaN;

describeWithControlPlane('a pod naming sets for itself (issue 45 item 3)', () => {
  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    stack = await startLocalStack({ statusSyncIntervalMs: 3_600_000, statusSyncHeartbeatMs: 0, admitted: recorder });
    recorder.loop = stack.statusLoop;
    for (const name of OTHERS) await createSet(stack.cp, watchedSet(name, name));
    await createSet(stack.cp, watchedSet('real', 'real'));
    costs.plain = await costOf({ app: 'tenant' });
    costs.forged = await costOf({ app: 'forger', added: { [LIST]: OTHERS.join(',') } });
    costs.injected = await costOf({ app: 'real' });
    costs.injectedNaming = await costOf({ app: 'real', created: { [LIST]: OTHERS.join(',') } });
    if (process.env.POD_TRIGGER_PRINT === '1') console.log(JSON.stringify(Object.fromEntries(Object.entries(costs).map(([run, cost]) => [run, { requests: cost.requests, triggered: cost.triggered.size }]))));
  }, 10 * 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  it(`costs no more for ${PODS} pods no set selects, each naming ${NAMED} sets, than for the same pods naming none: no reconcile at all`, () => {
    expect(requests('forged')).toBeLessThanOrEqual(requests('plain') + 10);
    expect([...(costs.forged?.triggered ?? [])]).toEqual([]);
  });

  it(`triggers only their own set for ${PODS} really injected pods that also name ${NAMED} other sets, as for the same pods naming only it`, () => {
    expect([...(costs.injected?.triggered ?? [])]).toEqual(['real']);
    expect([...(costs.injectedNaming?.triggered ?? [])]).toEqual(['real']);
  });

  it('keeps the names a creator wrote beside a real injection (Kruise merges them too), and its deletion triggers only the set that injected it', async () => {
    const pod = await createPod(stack.cp, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'merged', namespace: 'default', labels: { app: 'real' }, annotations: { [LIST]: 'other-00' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } });
    expect(pod.metadata?.annotations?.[LIST]).toBe('other-00,real');
    const from = told.length;
    // The webhook hands its trigger over before it answers: the DELETE's answer comes after it.
    // (The test kubelet's status write for the pod may trigger the same set too.)
    await remove('merged');
    expect([...new Set(told.slice(from).map((c) => `${c.sidecarSet} ${c.operation}`))]).toEqual(['real PODS']);
  });
});
