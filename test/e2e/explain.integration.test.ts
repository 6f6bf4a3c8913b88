/**
 * `npm run -s explain` against a real kube-apiserver: the CLI runs as a
 * child process with a kubeconfig to the test API server, as a user runs
 * it, on real pods (injected by the pod webhook's code, made Ready by the
 * test kubelet) while the reconciler's resyncs (composed as on AWS, as the
 * functions' identity) roll a set. The pod explain says goes next is the
 * one the resync then updates; the others say what holds them. Bad input (no
 * such pod, an unreadable kubeconfig, an unreachable server) is one line.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { composeStatusSync, type StatusSyncRuntime } from '../../functions/status-sync/compose.ts';
import type { PodExplanation } from '../../lib/explain/explain.ts';
import { createPod } from '../../testkit/cluster-pods.ts';
import { freePort } from '../../testkit/free-port.ts';
import { adminRequest, listPods, NEW_IMAGE, readSet, seedRollout, SIDECAR, startRolloutCluster, updateSidecarImage, type RolloutCluster } from '../../testkit/faults/rollout-fixture.ts';
import { capturingLogger } from '../../testkit/reviews.ts';
import { OPT_OUT_LABEL, OPT_OUT_VALUE, renderWebhookConfigurations } from '../../lib/webhook-config/webhook-configurations.ts';
import { FUNCTION_NAMES } from '../../lib/webhooks/registry.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAIN = join(projectRoot, 'functions', 'explain', 'main.ts');
const SET = 'explained';

/** Standard error without the lines naming the cluster (checked once on their own; a note follows while an npm start of this checkout runs). */
const answerOf = (stderr: string): string => stderr.split(/(?<=\n)/).filter((line) => !line.startsWith('cluster: context ') && !line.startsWith("note: npm start's embedded cluster")).join('');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The first line of standard error: the cluster named. */
  clusterLine: string;
}

/** The CLI as a child process (killed after 60 s, which fails the test); `--kubeconfig` names the cluster, nothing of this environment's. */
function run(args: string[]): Promise<Run> {
  const child = spawn(process.execPath, [MAIN, ...args], { cwd: projectRoot, env: { ...process.env, KUBECONFIG: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const cluster = () => stderr.split('\n')[0] ?? '';
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolveRun) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr: answerOf(stderr), clusterLine: cluster() });
    }),
  );
}

describeWithControlPlane('npm run -s explain on a real API server', () => {
  let cluster: RolloutCluster;
  let statusSync: StatusSyncRuntime;
  let dir: string;
  let kubeconfig: string;
  let podNames: string[];

  beforeAll(async () => {
    cluster = await startRolloutCluster({ readyDelayMs: 300 });
    dir = await mkdtemp(join(tmpdir(), 'explain-'));
    kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, cluster.cp.kubeconfig('admin'), { mode: 0o600 });
    ({ podNames } = await seedRollout(cluster, { name: SET, pods: 3, maxUnavailable: 1 }));
    // A pod of the same namespace the set's selector leaves out.
    await createPod(cluster.cp, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'other', namespace: SET, labels: { app: 'other' } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } });
    statusSync = await composeStatusSync({ KUBECONFIG_CONTENT: cluster.cp.kubeconfig('functions') }, { logger: capturingLogger().logger });
  }, 30 * 60_000);

  afterAll(async () => {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('tells that the set injected a pod, what it injected and that the pod runs its current sidecars', async () => {
    const result = await run([podNames[0] as string, '-n', SET, '--kubeconfig', kubeconfig]);
    expect(result.clusterLine).toBe(`cluster: context "admin", server ${cluster.cp.url} (--kubeconfig ${kubeconfig})`);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Pod ${SET}/${podNames[0]}\n${SET}: applies\n {2}injection path \\(where the injection policy is installed\\): [^\n]*\n {2}injected at creation by (pod-inject|the injection policy)\n {2}injected: containers: ${SIDECAR}; revision: ${SET}-\\w+\n {2}rollout: runs the set's current sidecars\n$`));
  });

  it('names the selector term and the label a pod lacks', async () => {
    const result = await run(['other', '--namespace', SET, '--kubeconfig', kubeconfig]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`Pod ${SET}/other\n${SET}: does not apply: spec.selector: matchLabels wants app=${SET}; the pod has app=other\n`);
  });

  it('says which pod the next reconcile updates, and that pod is the one the next resync updates; the others wait on maxUnavailable', async () => {
    await updateSidecarImage(cluster.cp, await readSet(cluster.cp, SET), NEW_IMAGE);
    const explained = await Promise.all(podNames.map(async (name) => {
      const result = await run([name, '-n', SET, '--kubeconfig', kubeconfig, '-o', 'json']);
      expect(result.code).toBe(0);
      return JSON.parse(result.stdout) as PodExplanation;
    }));
    const holds = explained.map((e) => e.sets[0]?.rollout?.hold?.kind);
    expect(holds.filter((h) => h === 'next')).toHaveLength(1);
    expect(holds.filter((h) => h === 'max-unavailable')).toHaveLength(2);
    const next = podNames[holds.indexOf('next')];

    const text = await run([podNames[holds.indexOf('max-unavailable')] as string, '-n', SET, '--kubeconfig', kubeconfig]);
    expect(text.stdout).toContain('rollout: Waiting (not running the current sidecars yet)');
    expect(text.stdout).toContain('held by updateStrategy.maxUnavailable 1: waiting for 0 updated pod(s) to become ready');

    await statusSync.resync();
    const pods = (await listPods(cluster.cp, SET)).items;
    const patched = pods.filter((p) => p.spec?.containers.find((c) => c.name === SIDECAR)?.image === NEW_IMAGE).map((p) => p.metadata?.name);
    expect(patched).toEqual([next]);
  });

  it('exits 2 with one line for a pod that does not exist and for an unreadable kubeconfig, 1 for a server that does not answer', async () => {
    const missing = await run(['nope', '-n', SET, '--kubeconfig', kubeconfig]);
    expect(missing).toMatchObject({ code: 2, stdout: '', stderr: `explain: pod nope not found in namespace ${SET}\n` });

    const garbage = join(dir, 'garbage');
    await writeFile(garbage, 'clusters: [\n');
    const bad = await run(['nope', '--kubeconfig', garbage]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain(garbage);

    const port = await freePort();
    const unreachable = join(dir, 'unreachable');
    await writeFile(unreachable, cluster.cp.kubeconfig('admin').replace(/https:\/\/127\.0\.0\.1:\d+/, `https://127.0.0.1:${port}`));
    const down = await run([podNames[0] as string, '-n', SET, '--kubeconfig', unreachable]);
    expect(down.code).toBe(1);
    expect(down.stdout).toBe('');
    expect(down.stderr).toMatch(/^explain: get pod explained\/pod-00000: .*ECONNREFUSED/);
    expect(down.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('tells a pod the API server no longer sends to the pod webhook (its namespace opted out) that no set applies, naming the term', async () => {
    const targets = Object.fromEntries(FUNCTION_NAMES.map((name) => [name, { url: `https://127.0.0.1:1/${name}` }])) as Parameters<typeof renderWebhookConfigurations>[0]['targets'];
    const [mutating] = renderWebhookConfigurations({ targets, podFailurePolicy: 'Ignore' });
    // Last in the suite: the configuration's SidecarSet webhook points nowhere, so no set is written after it.
    await adminRequest(cluster.cp, 'POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', mutating);
    await adminRequest(cluster.cp, 'PATCH', `/api/v1/namespaces/${SET}`, { metadata: { labels: { [OPT_OUT_LABEL]: OPT_OUT_VALUE } } }, 'application/merge-patch+json');
    const result = await run([podNames[0] as string, '-n', SET, '--kubeconfig', kubeconfig]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `${SET}: does not apply: the API server does not call the pod webhook pod-inject.sidecarset.kruise.io for this pod: its namespaceSelector: matchExpressions[1] wants ${OPT_OUT_LABEL} NotIn [${OPT_OUT_VALUE}]; the namespace ${SET} has ${OPT_OUT_LABEL}=${OPT_OUT_VALUE}`,
    );
    expect(result.stdout).toContain('injected at creation by pod-inject (the set would not inject it today)');
  });
});
