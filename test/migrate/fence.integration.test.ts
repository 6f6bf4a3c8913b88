/**
 * `npm run -s migrate -- fence` on a real kube-apiserver with
 * infra/k8s/rbac.yaml's pod policy in force: pods injected as Kruise left
 * them (no rollout fence) refuse the reconciler's image patch; the tool, run
 * as the administrator through the kubeconfig it is given, writes the fence
 * pod-inject would have written; the same patch is then admitted, and only
 * for the sidecars.
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
    for (const set of [agentSet, hotSet]) {
      for (const deadline = Date.now() + 30_000; ; ) {
        const res = await controlPlane.request('admin', 'POST', '/apis/apps.kruise.io/v1alpha1/sidecarsets', { apiVersion: set.apiVersion, kind: set.kind, metadata: { name: set.metadata?.name, annotations: set.metadata?.annotations }, spec: set.spec });
        if (res.status === 201) break;
        if (Date.now() > deadline) throw new Error(`creating SidecarSet ${set.metadata?.name ?? ''}: ${res.status} ${res.body.slice(0, 300)}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
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
});

