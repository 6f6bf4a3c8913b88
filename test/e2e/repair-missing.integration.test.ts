/**
 * Pods the pod webhook missed, repaired (docs/SIDECARSET.md "Repairing pods
 * the webhook missed") on a real kube-apiserver: the local stack's webhooks
 * (pod-inject with failurePolicy Ignore), the test kubelet, and a
 * kube-controller-manager running the ReplicaSet controller (which really
 * recreates an evicted pod, through pod-inject) and the disruption controller
 * (which really keeps a PodDisruptionBudget's status). The webhook is taken
 * down by pointing it at a closed port while the workloads are created, so
 * their pods are created without their sidecars as in an outage; then it is
 * back, and each test turns repair on for one set with its annotation and
 * runs resyncs composed as on AWS, as the reconciler's own identity (its
 * RBAC, the eviction policy of infra/k8s/rbac.yaml and the pod-eviction
 * webhook hold).
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import type { ControlPlaneResponse, ControlPlaneUser } from '../../control-plane/harness.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import { composeStatusSync, type StatusSyncRuntime } from '../../functions/status-sync/compose.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { WEBHOOK_CONFIGURATION_NAME } from '../../lib/webhook-config/webhook-configurations.ts';
import { POD_WEBHOOK_NAME } from '../../lib/adapters/kube-pod-webhook.ts';
import type { ResyncResult } from '../../lib/status-sync/resync.ts';
import { REASON_EVICTED, REASON_EVICTION_REFUSED, REASON_NO_CONTROLLER } from '../../lib/status-sync/repair-step.ts';
import { forCreate, SIDECARSETS_PATH } from '../../testkit/bench/cluster.ts';
import { createNamespace, isReady, podPath } from '../../testkit/cluster-pods.ts';
import { startControllerManager, type ControllerManager } from '../../testkit/controller-manager.ts';
import { capturingLogger } from '../../testkit/reviews.ts';

const KEY = 'serverless-sidecarset/repair-missing';
/** Each scenario's namespace, its set (`<scenario>-agent`, scoped to it) and its workload. */
const SCENARIOS = {
  plain: { replicas: 2, maxUnavailable: 1 },
  bare: { replicas: 0, maxUnavailable: 1 },
  rs: { replicas: 2, maxUnavailable: 1 },
  pdb: { replicas: 1, maxUnavailable: 1 },
  limit: { replicas: 3, maxUnavailable: 10 },
} as const;
type Scenario = keyof typeof SCENARIOS;
const ns = (s: Scenario): string => `repair-${s}`;
const setName = (s: Scenario): string => `${s}-agent`;
const MUTATING_PATH = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${WEBHOOK_CONFIGURATION_NAME}`;

interface Event {
  reason: string;
  type: string;
  message: string;
  involvedObject: { kind: string; name: string; uid?: string };
}

describeWithControlPlane('pods the webhook missed, evicted to be recreated injected, on a real API server', () => {
  let stack: LocalStack;
  let manager: ControllerManager | undefined;
  /** The reconciler as composed on AWS, with the default limit, and with a limit of 2 evictions per resync. */
  let reconciler: StatusSyncRuntime;
  let limited: StatusSyncRuntime;
  /** Each scenario's pods as the outage created them: name to uid. */
  const created = new Map<Scenario, Map<string, string>>();

  const request = (user: ControlPlaneUser, method: string, path: string, body?: unknown, contentType?: string): Promise<ControlPlaneResponse> => stack.cp.request(user, method, path, body, contentType);
  async function admin<T>(method: string, path: string, body?: unknown, contentType?: string): Promise<T> {
    const res = await request('admin', method, path, body, contentType);
    if (res.status < 200 || res.status > 299) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 400)}`);
    return JSON.parse(res.body) as T;
  }
  async function until(what: string, test: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await test())) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${manager === undefined ? '' : `; kube-controller-manager said:\n${(await manager.log()).slice(-2000)}`}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const injected = (pod: Pod): boolean => (pod.spec?.containers ?? []).some((c) => c.name === 'agent');
  const active = (pod: Pod): boolean => pod.metadata?.deletionTimestamp == null;
  const podsOf = async (s: Scenario): Promise<Pod[]> => (await admin<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ns(s)}/pods`)).items;
  const uidsOf = async (s: Scenario): Promise<Map<string, string>> => new Map((await podsOf(s)).map((p) => [p.metadata?.name ?? '', p.metadata?.uid ?? '']));
  const eventsOf = async (s: Scenario, reason: string): Promise<Event[]> => (await admin<{ items: Event[] }>('GET', `/api/v1/namespaces/${ns(s)}/events?fieldSelector=reason%3D${reason}`)).items;
  const annotate = (s: Scenario, value: string | null): Promise<unknown> => admin('PATCH', `${SIDECARSETS_PATH}/${setName(s)}`, { metadata: { annotations: { [KEY]: value } } }, 'application/merge-patch+json');
  /** Every scenario's pods active, as many as its workload wants, Ready, and each injected or not as `wanted` says. */
  const settled = (s: Scenario, wanted: boolean) => async (): Promise<boolean> => {
    const pods = await podsOf(s);
    const want = s === 'bare' ? 1 : SCENARIOS[s].replicas;
    return pods.length === want && pods.every((p) => active(p) && isReady(p) && injected(p) === wanted);
  };
  async function resync(runtime: StatusSyncRuntime = reconciler): Promise<ResyncResult> {
    const result = await runtime.resync();
    expect(result.errors).toEqual([]);
    return result;
  }

  /** A pod pod-inject would inject in the `rs` scenario's namespace, created as a dry run: whether the webhook answers. */
  async function webhookInjects(): Promise<boolean> {
    const probe = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe', labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
    return injected(await admin<Pod>('POST', `/api/v1/namespaces/${ns('rs')}/pods?dryRun=All`, probe));
  }
  /** Points pod-inject at `url` (a closed port takes it down: failurePolicy Ignore lets pods through uninjected); returns the URL it had. */
  async function pointPodWebhook(url: string): Promise<string> {
    const config = await admin<{ webhooks: { name: string; clientConfig: { url: string } }[] }>('GET', MUTATING_PATH);
    const index = config.webhooks.findIndex((w) => w.name === POD_WEBHOOK_NAME);
    await admin('PATCH', MUTATING_PATH, [{ op: 'replace', path: `/webhooks/${index}/clientConfig/url`, value: url }], 'application/json-patch+json');
    return config.webhooks[index]?.clientConfig.url ?? '';
  }

  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    // The webhook path: the pods pod-inject missed while pointed at a closed port (the policy would inject them).
    stack = await startLocalStack({ injection: 'webhook', podFailurePolicy: 'Ignore', testKubelet: { readyDelayMs: 300, pullDelayMs: 0 } });
    manager = await startControllerManager(stack.cp, ['replicaset-controller', 'disruption-controller']);
    const env = { KUBECONFIG_CONTENT: stack.cp.kubeconfig('status-sync') };
    reconciler = await composeStatusSync(env, { logger: capturingLogger().logger });
    limited = await composeStatusSync({ ...env, REPAIR_MAX_EVICTIONS_PER_RESYNC: '2' }, { logger: capturingLogger().logger });

    for (const [s, { maxUnavailable }] of Object.entries(SCENARIOS) as [Scenario, (typeof SCENARIOS)[Scenario]][]) {
      await createNamespace(stack.cp, ns(s));
      // No set asks for repair yet: each test turns it on for its own.
      const set = defaultSidecarSet({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: setName(s) },
        spec: { namespace: ns(s), selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'agent', image: 'agent:1.0' }], updateStrategy: { type: 'RollingUpdate', maxUnavailable } },
      });
      await admin('POST', SIDECARSETS_PATH, forCreate(set));
    }
    await admin('POST', `/apis/policy/v1/namespaces/${ns('pdb')}/poddisruptionbudgets`, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } } });
    // A pod created in its set's second counts as older than the set.
    await new Promise((r) => setTimeout(r, 1_100));

    await until('the sets inject', webhookInjects);
    const url = await pointPodWebhook('https://127.0.0.1:1/pod-inject/down');
    await until('the pod webhook is down', async () => !(await webhookInjects()));
    for (const [s, { replicas }] of Object.entries(SCENARIOS) as [Scenario, (typeof SCENARIOS)[Scenario]][]) {
      const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
      if (s === 'bare') await admin('POST', `/api/v1/namespaces/${ns(s)}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'lonely', ...template.metadata }, spec: template.spec });
      else await admin('POST', `/apis/apps/v1/namespaces/${ns(s)}/replicasets`, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' }, spec: { replicas, selector: { matchLabels: { app: 'web' } }, template } });
    }
    for (const s of Object.keys(SCENARIOS) as Scenario[]) {
      await until(`${s}'s pods created without their sidecars and Ready`, settled(s, false));
      created.set(s, await uidsOf(s));
    }
    await pointPodWebhook(url);
    await until('the pod webhook is back', webhookInjects);
  }, 30 * 60_000);

  afterAll(async () => {
    await manager?.stop();
    await stack.stop();
  });

  it('leaves every uninjected pod in place while no set asks, and while a set’s annotation is not Evict (a warning says so)', async () => {
    const res = await request('admin', 'PATCH', `${SIDECARSETS_PATH}/${setName('plain')}`, { metadata: { annotations: { [KEY]: 'evict' } } }, 'application/merge-patch+json');
    expect(res.status).toBe(200);
    expect(res.warnings.join('\n')).toContain(`${KEY}=evict: only Evict turns repair on; treated as off`);

    const result = await resync();
    expect(result.notInjected).toEqual({ 'bare-agent': 1, 'limit-agent': 3, 'pdb-agent': 1, 'plain-agent': 2, 'rs-agent': 2 });
    expect(result.repair).toEqual({ sets: 0, evicted: 0, refused: 0, ownerless: 0, held: 0 });
    for (const s of Object.keys(SCENARIOS) as Scenario[]) expect(await uidsOf(s)).toEqual(created.get(s));
  });

  it('only reports a pod without a controller, once, and never evicts it', async () => {
    await annotate('bare', 'Evict');
    expect((await resync()).repair).toEqual({ sets: 1, evicted: 0, refused: 0, ownerless: 1, held: 0 });
    await resync();
    const told = await eventsOf('bare', REASON_NO_CONTROLLER);
    expect(told).toEqual([expect.objectContaining({ type: 'Warning', involvedObject: expect.objectContaining({ kind: 'Pod', name: 'lonely', uid: created.get('bare')?.get('lonely') }) })]);
    expect(told[0]?.message).toMatch(/^SidecarSet bare-agent applies to this pod, .* but it has no controller to recreate it: recreate it yourself$/);
    expect(await uidsOf('bare')).toEqual(created.get('bare'));
  });

  it('evicts within maxUnavailable, and the ReplicaSet recreates each pod injected', async () => {
    await annotate('rs', 'Evict');
    const first = await resync();
    // maxUnavailable 1: one of the two Ready pods per resync.
    expect(first.repair).toMatchObject({ evicted: 1, held: 1, refused: 0 });
    const evicted = await eventsOf('rs', REASON_EVICTED);
    expect(evicted).toEqual([expect.objectContaining({ type: 'Normal', involvedObject: expect.objectContaining({ kind: 'Pod' }) })]);
    expect(evicted[0]?.message).toMatch(/^Evicted by SidecarSet rs-agent so that its ReplicaSet web recreates it with the set's sidecars/);
    expect(created.get('rs')?.get(evicted[0]?.involvedObject.name ?? '')).toBe(evicted[0]?.involvedObject.uid);

    await until('the evicted pod replaced by an injected one, Ready', async () => {
      const pods = await podsOf('rs');
      return pods.length === 2 && pods.every(active) && pods.filter((p) => injected(p) && isReady(p)).length === 1;
    });
    expect((await resync()).repair).toMatchObject({ evicted: 1, held: 0 });
    await until('every pod recreated injected and Ready', settled('rs', true));
    const last = await resync();
    expect(last.notInjected['rs-agent']).toBeUndefined();
    expect(await eventsOf('rs', REASON_EVICTED)).toHaveLength(2);
    for (const uid of created.get('rs')?.values() ?? []) expect([...(await uidsOf('rs')).values()]).not.toContain(uid);
  });

  it('waits while a PodDisruptionBudget allows no disruption (429), telling the pod once, and evicts once it does', async () => {
    const pdbPath = `/apis/policy/v1/namespaces/${ns('pdb')}/poddisruptionbudgets/web`;
    const budget = async () => admin<{ metadata: { generation: number }; status?: { observedGeneration?: number; currentHealthy?: number; disruptionsAllowed?: number } }>('GET', pdbPath);
    await until('the budget counts its one healthy pod', async () => {
      const b = await budget();
      return b.status?.observedGeneration === b.metadata.generation && b.status.currentHealthy === 1 && b.status.disruptionsAllowed === 0;
    });
    await annotate('pdb', 'Evict');
    expect((await resync()).repair).toMatchObject({ evicted: 0, refused: 1 });
    expect((await resync()).repair).toMatchObject({ evicted: 0, refused: 1 });
    const refused = await eventsOf('pdb', REASON_EVICTION_REFUSED);
    expect(refused).toEqual([expect.objectContaining({ type: 'Warning', involvedObject: expect.objectContaining({ name: [...(created.get('pdb')?.keys() ?? [])][0] }) })]);
    expect(refused[0]?.message).toMatch(/disruption budget.*A later resync tries again\.$/);
    expect(await uidsOf('pdb')).toEqual(created.get('pdb'));

    await admin('PATCH', pdbPath, { spec: { minAvailable: 0 } }, 'application/merge-patch+json');
    await until('the budget allows one disruption', async () => (await budget()).status?.disruptionsAllowed === 1);
    expect((await resync()).repair).toMatchObject({ evicted: 1, refused: 0 });
    await until('the pod recreated injected and Ready', settled('pdb', true));
  });

  it('evicts at most REPAIR_MAX_EVICTIONS_PER_RESYNC pods per resync, the rest in later resyncs', async () => {
    await annotate('limit', 'Evict');
    // maxUnavailable 10 would allow all three.
    expect((await resync(limited)).repair).toMatchObject({ evicted: 2, held: 1 });
    await until('the two recreated injected', async () => (await podsOf('limit')).filter((p) => active(p) && injected(p) && isReady(p)).length === 2);
    expect((await resync(limited)).repair).toMatchObject({ evicted: 1, held: 0 });
    await until('every pod recreated injected and Ready', settled('limit', true));
  });

  it('holds the reconciler’s evictions to a uid precondition and the pod’s own grace period, and out of namespaces pod-inject never sees', async () => {
    const [name, uid] = [...(created.get('plain') ?? new Map<string, string>()).entries()][0] ?? ['', ''];
    const eviction = (namespace: string, pod: string, deleteOptions: Record<string, unknown>) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace }, deleteOptions });
    const now = await request('status-sync', 'POST', `${podPath(ns('plain'), name)}/eviction`, eviction(ns('plain'), name, { preconditions: { uid }, gracePeriodSeconds: 0 }));
    expect(now.status).toBe(422);
    expect(now.body).toContain('sidecarset-status-sync-evictions');
    const unconditional = await request('status-sync', 'POST', `${podPath(ns('plain'), name)}/eviction`, eviction(ns('plain'), name, {}));
    expect(unconditional.status).toBe(422);

    await admin('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'repair-opted-out', labels: { 'sidecarset.kruise.io/injection': 'disabled' } } });
    const pod = await admin<Pod>('POST', '/api/v1/namespaces/repair-opted-out/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'kept' }, spec: { containers: [{ name: 'app', image: 'app:1' }] } });
    const optedOut = await request('status-sync', 'POST', `${podPath('repair-opted-out', 'kept')}/eviction`, eviction('repair-opted-out', 'kept', { preconditions: { uid: pod.metadata?.uid } }));
    expect(optedOut.status).toBe(422);
    expect(optedOut.body).toContain('pod webhook is never called');
    expect(await uidsOf('plain')).toEqual(created.get('plain'));
  });

  it('after every resync above, the set that never asked still has its uninjected pods, untouched', async () => {
    const result = await resync();
    expect(result.notInjected['plain-agent']).toBe(2);
    expect(await uidsOf('plain')).toEqual(created.get('plain'));
    expect(await eventsOf('plain', REASON_EVICTED)).toEqual([]);
  });

  it('evicts nothing, and says why, while no pod-inject webhook is registered: a recreated pod would come back uninjected', async () => {
    const config = await admin<{ webhooks: { name: string }[] }>('GET', MUTATING_PATH);
    const index = config.webhooks.findIndex((w) => w.name === POD_WEBHOOK_NAME);
    await admin('PATCH', MUTATING_PATH, [{ op: 'remove', path: `/webhooks/${index}` }], 'application/json-patch+json');
    await annotate('plain', 'Evict');
    const result = await reconciler.resync();
    expect(result.errors).toEqual([{ operation: 'read the pod webhook', message: 'the MutatingWebhookConfiguration holds no pod-inject webhook; no uninjected pod is evicted this resync' }]);
    expect(result.repair?.evicted).toBe(0);
    expect(await uidsOf('plain')).toEqual(created.get('plain'));
  });
});
