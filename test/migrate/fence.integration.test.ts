/**
 * `npm run -s migrate -- fence` on a real kube-apiserver with
 * infra/k8s/rbac.yaml's pod policy in force and the project's webhook
 * configurations registered (pod-inject's namespaceSelector as rendered;
 * nothing listens at their URLs, and pod-inject's failurePolicy is Ignore):
 * pods injected as Kruise left them (no rollout fence) refuse the
 * reconciler's image patch; the tool, run as the administrator through the
 * kubeconfig it is given, writes the fence pod-inject would have written;
 * the same patch is then admitted, and only for the sidecars. Issue 45's
 * chain (forged bookkeeping, then the administrator's fence) is refused at
 * every step.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane, type ControlPlaneResponse } from '../../control-plane/harness.ts';
import { runMigrate } from '../../functions/migrate/cli.ts';
import { migrationSources } from '../../functions/migrate/compose.ts';
import { kubeFenceCluster } from '../../lib/adapters/kube-fence-backfill.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import type { Container, Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { ANNOTATION_FENCE_CONTAINERS, ANNOTATION_FENCE_KEYS, withoutFence } from '../../lib/sidecarset/rollout-fence.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { renderWebhookConfigurations } from '../../lib/webhook-config/webhook-configurations.ts';
import { ADMISSION_FUNCTIONS } from '../../lib/webhooks/registry.ts';
import { stringify } from 'yaml';
import { createNamespace, createPod, podPath, readPod } from '../../testkit/cluster-pods.ts';

const NS = 'fence-backfill';
const POLICY = 'sidecarset-status-sync-pod-writes';
const JSON_PATCH = 'application/json-patch+json';
const MERGE = 'application/merge-patch+json';

const agentSet = defaultSidecarSet({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'agent-set' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    containers: [{ name: 'agent', image: 'agent:1' }],
    patchPodMetadata: [{ patchPolicy: 'Overwrite', annotations: { 'example.com/team': 'blue' } }],
  },
});
const hotSet = defaultSidecarSet({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'hot-set' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    containers: [{ name: 'proxy', image: 'proxy:1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } }],
  },
});

/** A pod as Kruise injected it: the project's injection, the way Kruise writes it, without the fence pod-inject adds. */
function kruisePod(name: string, sets: SidecarSet[]): Pod {
  const plain: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1' }] } };
  return withoutFence(injectPod({ pod: plain, namespace: NS, sidecarSets: sets, namespaceLabels: new Map(), now: new Date() }).pod);
}

/** A JSON Patch setting the images of `names` (by their index in spec.containers). */
function imagePatch(pod: Pod, names: string[], image: string): unknown[] {
  const containers: Container[] = pod.spec?.containers ?? [];
  return names.map((n) => ({ op: 'replace', path: `/spec/containers/${containers.findIndex((c) => c.name === n)}/image`, value: image }));
}

/** A set selecting `labels`' pods, with one sidecar and a patchPodMetadata of its own. */
const chainSet = (name: string, labels: Record<string, string>, sidecar: Container, annotations: Record<string, string> = {}): SidecarSet =>
  defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: { selector: { matchLabels: labels }, containers: [sidecar], ...(Object.keys(annotations).length === 0 ? {} : { patchPodMetadata: [{ patchPolicy: 'Overwrite', annotations }] }) },
  });
/** Issue 45's sets: one writing an AWS role onto the pods it selects (team=payments), and the log agent (logs=on). */
const roleSet = chainSet('role-set', { team: 'payments' }, { name: 'role-agent', image: 'role-agent:1' }, { 'iam.amazonaws.com/role': 'arn:aws:iam::123456789012:role/payments' });
const logSet = chainSet('log-set', { logs: 'on' }, { name: 'log-agent', image: 'log-agent:1' });
const ADMIN_ROLE = 'arn:aws:iam::123456789012:role/admin';
/** A forged kruise.io/sidecarset-hash naming `set` with `sidecarList`. */
const forgedHashOf = (set: string, sidecarList: string[]): string => JSON.stringify({ [set]: { updateTimestamp: '2026-01-01T00:00:00Z', hash: 'h', sidecarSetName: set, sidecarList } });

describeWithControlPlane('migrate fence on a real kube-apiserver', () => {
  let controlPlane: ControlPlane | undefined;
  let dir = '';
  let kubeconfigFile = '';
  const cp = (): ControlPlane => {
    if (controlPlane === undefined) throw new Error('the control plane did not start');
    return controlPlane;
  };
  const asReconciler = async (pod: Pod, body: unknown, type = JSON_PATCH): Promise<ControlPlaneResponse> => cp().request('status-sync', 'PATCH', podPath(NS, pod.metadata?.name ?? ''), body, type);
  const current = async (name: string): Promise<Pod> => {
    const pod = await readPod(cp(), NS, name);
    if (pod === undefined) throw new Error(`pod ${name} is gone`);
    return pod;
  };
  async function migrate(argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runMigrate(argv, { out: (t) => (out += t), err: (t) => (err += t) }, (file) => migrationSources(file, {}, () => undefined));
    return { code, out, err };
  }

  let agentPod: Pod;
  let forged: Pod;

  beforeAll(async () => {
    controlPlane = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await controlPlane.apply(await readFile(join(process.cwd(), 'infra', 'k8s', 'crd.yaml'), 'utf8'));
    dir = await mkdtemp(join(tmpdir(), 'migrate-fence-'));
    kubeconfigFile = join(dir, 'admin.yaml');
    await writeFile(kubeconfigFile, controlPlane.kubeconfig('admin'), { mode: 0o600 });
    await createNamespace(controlPlane, NS);
    await createNamespace(controlPlane, 'tenant-b');
    for (const set of [agentSet, hotSet, roleSet, logSet]) {
      for (const deadline = Date.now() + 30_000; ; ) {
        const res = await controlPlane.request('admin', 'POST', '/apis/apps.kruise.io/v1alpha1/sidecarsets', { apiVersion: set.apiVersion, kind: set.kind, metadata: { name: set.metadata?.name, annotations: set.metadata?.annotations }, spec: set.spec });
        if (res.status === 201) break;
        if (Date.now() > deadline) throw new Error(`creating SidecarSet ${set.metadata?.name ?? ''}: ${res.status} ${res.body.slice(0, 300)}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    // Registered after the sets (sidecarset-validate would refuse them: nothing listens); pod-inject Ignores its failures.
    const targets = Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, { url: `https://127.0.0.1:9/${fn}/${'s'.repeat(43)}` }])) as Parameters<typeof renderWebhookConfigurations>[0]['targets'];
    await controlPlane.apply(renderWebhookConfigurations({ targets, caPem: controlPlane.caCert, podFailurePolicy: 'Ignore' }).map((c) => stringify(c)).join('---\n'));
    agentPod = await createPod(controlPlane, kruisePod('agent-pod', [agentSet]));
    await createPod(controlPlane, kruisePod('hot-pod', [hotSet]));
    // A pod whose creator wrote Kruise's hash annotation listing the application container.
    const forgedHash = JSON.stringify({ 'agent-set': { updateTimestamp: '2026-01-01T00:00:00Z', hash: 'h', sidecarSetName: 'agent-set', sidecarList: ['agent', 'app'] } });
    const base = kruisePod('forged-pod', [agentSet]);
    forged = await createPod(controlPlane, { ...base, metadata: { ...base.metadata, annotations: { ...base.metadata?.annotations, 'kruise.io/sidecarset-hash': forgedHash } } });
    // RBAC and the policy reach the API server through watches: wait until the writer may patch pods and the policy refuses a relabel.
    for (const deadline = Date.now() + 30_000; ; ) {
      const res = await asReconciler(forged, { metadata: { labels: { app: 'probe' } } }, MERGE);
      if (res.status === 422 && res.body.includes(POLICY)) break;
      if (res.status === 200) await cp().request('admin', 'PATCH', podPath(NS, 'forged-pod'), { metadata: { labels: { app: 'web' } } }, MERGE);
      if (Date.now() > deadline) throw new Error(`the writer policy is not in force after 30 s: ${res.status} ${res.body}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 30 * 60_000);

  afterAll(async () => {
    await controlPlane?.stop();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('the reconciler may not re-image a sidecar of a pod Kruise injected (no fence)', async () => {
    const res = await asReconciler(agentPod, imagePatch(agentPod, ['agent'], 'agent:2'));
    expect(res.status).toBe(422);
    expect(res.body).toContain(POLICY);
  });

  it('a dry run prints what it would write and writes nothing', async () => {
    const result = await migrate(['fence', '--kubeconfig', kubeconfigFile, '-n', NS, '--dry-run']);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out.split('\n').filter((l) => l !== '').sort()).toEqual([
      '3 pod(s) carry kruise.io/sidecarset-hash: 2 would be fenced, 0 already fenced, 1 skipped, 0 failed (dry run: nothing written)',
      `skipped ${NS}/forged-pod: sidecarList of agent-set names app, which SidecarSet agent-set does not declare as a sidecar`,
      `would fence ${NS}/agent-pod: rollout-containers="agent" rollout-annotations="example.com/team"`,
      `would fence ${NS}/hot-pod: rollout-containers="proxy-1,proxy-2" rollout-annotations=""`,
    ].sort());
    expect((await current('agent-pod')).metadata?.resourceVersion).toBe(agentPod.metadata?.resourceVersion);
  });

  it('run as the administrator, writes the fence, after which the policy admits the reconciler’s sidecar image patch and still refuses the application’s', async () => {
    const result = await migrate(['fence', '--kubeconfig', kubeconfigFile, '-n', NS]);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toContain(`fenced ${NS}/agent-pod: rollout-containers="agent" rollout-annotations="example.com/team"\n`);
    expect(result.out).toContain('2 fenced, 0 already fenced, 1 skipped, 0 failed\n');

    const agent = await current('agent-pod');
    expect(agent.metadata?.annotations).toMatchObject({ [ANNOTATION_FENCE_CONTAINERS]: 'agent', [ANNOTATION_FENCE_KEYS]: 'example.com/team' });
    expect((await asReconciler(agent, imagePatch(agent, ['agent'], 'agent:2'))).status).toBe(200);
    expect((await asReconciler(agent, { metadata: { annotations: { 'example.com/team': 'green' } } }, MERGE)).status).toBe(200);
    const app = await current('agent-pod');
    const refused = await asReconciler(app, imagePatch(app, ['app'], 'nginx:2'));
    expect(refused.status).toBe(422);

    const hot = await current('hot-pod');
    expect(hot.metadata?.annotations?.[ANNOTATION_FENCE_CONTAINERS]).toBe('proxy-1,proxy-2');
    expect((await asReconciler(hot, imagePatch(hot, ['proxy-1', 'proxy-2'], 'proxy:2'))).status).toBe(200);

    // The forged pod was skipped: still no fence, still refused.
    const still = await current('forged-pod');
    expect(still.metadata?.annotations?.[ANNOTATION_FENCE_CONTAINERS]).toBeUndefined();
    expect((await asReconciler(still, imagePatch(still, ['agent'], 'agent:2'))).status).toBe(422);
  });

  it('run again, changes no fence', async () => {
    const before = (await current('agent-pod')).metadata?.resourceVersion;
    const result = await migrate(['fence', '--kubeconfig', kubeconfigFile, '-n', NS]);
    expect(result.code).toBe(0);
    expect(result.out).toContain(`skipped ${NS}/agent-pod: already fenced (its fence is never changed)\n`);
    expect(result.out).toContain('0 fenced, 2 already fenced, 1 skipped, 0 failed\n');
    expect((await current('agent-pod')).metadata?.resourceVersion).toBe(before);
  });

  it('a write whose pod changed since it was read is refused as a conflict, not applied', async () => {
    const pod = await createPod(cp(), kruisePod('raced-pod', [agentSet]));
    await cp().request('admin', 'PATCH', podPath(NS, 'raced-pod'), { metadata: { labels: { moved: 'yes' } } }, MERGE);
    const cluster = kubeFenceCluster(kubeConfigClient(parseKubeConfig(cp().kubeconfig('admin'), 'the test control plane')), 'kruise-system');
    expect(await cluster.patchPod(pod, { containers: 'agent', keys: '' })).toBe('conflict');
    expect((await current('raced-pod')).metadata?.annotations?.[ANNOTATION_FENCE_CONTAINERS]).toBeUndefined();
  });

  it('a kubeconfig that is not there exits 2 with one line', async () => {
    const result = await migrate(['fence', '--kubeconfig', join(dir, 'missing.yaml')]);
    expect(result.code).toBe(2);
    expect(result.err.trim().split('\n')).toHaveLength(1);
  });

  // Issue 45, item 1: the reconciler's identity forges Kruise's bookkeeping on pods no set injected, an administrator runs
  // migrate fence, then the reconciler writes an AWS role and re-images a tenant's own container. Every step is refused.
  it('refuses the chain of forged bookkeeping fenced by the administrator: the forgery, the fence, the role and the re-image', async () => {
    const plain = (namespace: string, name: string, containers: Container[]): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels: { app: name } }, spec: { containers } });
    const victims = [
      { pod: await createPod(cp(), plain('tenant-b', 'b-role', [{ name: 'app', image: 'b:1' }])), hash: forgedHashOf('role-set', []) },
      { pod: await createPod(cp(), plain('tenant-b', 'b-logs', [{ name: 'app', image: 'b:1' }, { name: 'log-agent', image: 'tenant-b/own-log-agent:7' }])), hash: forgedHashOf('log-set', ['log-agent']) },
      { pod: await createPod(cp(), plain('kube-system', 'k-role', [{ name: 'app', image: 'k:1' }])), hash: forgedHashOf('role-set', []) },
    ];
    const path = (pod: Pod): string => podPath(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');
    const reconciler = (pod: Pod, body: unknown, type = MERGE): Promise<ControlPlaneResponse> => cp().request('status-sync', 'PATCH', path(pod), body, type);
    // 1. The forgery: bookkeeping on a pod without the fence is refused.
    for (const { pod, hash } of victims) {
      const res = await reconciler(pod, { metadata: { annotations: { 'kruise.io/sidecarset-hash': hash } } });
      expect([res.status, res.body]).toEqual([422, expect.stringContaining('only on a pod carrying the rollout fence')]);
    }
    // 2. Anyone who may write the pod (its creator, an administrator) writes the same text; migrate fence does not trust it.
    for (const { pod, hash } of victims) expect((await cp().request('admin', 'PATCH', path(pod), { metadata: { annotations: { 'kruise.io/sidecarset-hash': hash } } }, MERGE)).status).toBe(200);
    const tenant = await migrate(['fence', '--kubeconfig', kubeconfigFile, '-n', 'tenant-b']);
    const system = await migrate(['fence', '--kubeconfig', kubeconfigFile, '-n', 'kube-system']);
    expect([tenant.code, system.code]).toEqual([0, 0]);
    expect(`${tenant.out}${system.out}`.split('\n').filter((l) => l !== '').sort()).toEqual([
      '1 pod(s) carry kruise.io/sidecarset-hash: 0 fenced, 0 already fenced, 1 skipped, 0 failed',
      '2 pod(s) carry kruise.io/sidecarset-hash: 0 fenced, 0 already fenced, 2 skipped, 0 failed',
      'skipped kube-system/k-role: pod-inject is never called for pods of namespace kube-system (its registered namespaceSelector or objectSelector leaves the pod out)',
      'skipped tenant-b/b-logs: SidecarSet log-set, which its kruise.io/sidecarset-hash names, does not select the pod (its selector)',
      'skipped tenant-b/b-role: SidecarSet role-set, which its kruise.io/sidecarset-hash names, does not select the pod (its selector)',
    ]);
    // 3. The payoff: an AWS role on the tenant's and the system's pods, the tenant's own container re-imaged.
    for (const { pod } of victims) {
      const now = await readPod(cp(), pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');
      expect(now?.metadata?.annotations?.[ANNOTATION_FENCE_CONTAINERS]).toBeUndefined();
      expect((await reconciler(pod, { metadata: { annotations: { 'iam.amazonaws.com/role': ADMIN_ROLE } } })).status).toBe(422);
    }
    const logs = victims[1]?.pod as Pod;
    expect((await reconciler(logs, imagePatch(logs, ['log-agent'], 'evil/log-agent:1'), JSON_PATCH)).status).toBe(422);
  });
});
