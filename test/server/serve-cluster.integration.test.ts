/**
 * `npm start -- --kubeconfig FILE` against a real kube-apiserver (issue 23
 * item 6): it serves the cluster's webhooks but reconciles its SidecarSets
 * (statuses, rollouts, secret rotation) only with --reconcile, and refuses
 * --reconcile, saying why, where OpenKruise's own SidecarSet controller
 * shows (its manager Deployment, or its mutating webhooks for SidecarSets
 * and pods).
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { crdPath, waitForCrd } from '../../functions/server/local-stack.ts';
import { createNamespace, createPod } from '../../testkit/cluster-pods.ts';
import { SECRET } from '../../testkit/reviews.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SET_PATH = '/apis/apps.kruise.io/v1alpha1/sidecarsets/agent';

interface Run {
  /** Resolves with the exit code once the process ends. */
  exited: Promise<number | null>;
  stderr: () => string;
  stop: () => void;
}

function npmStart(args: readonly string[]): Run {
  const child = spawn('npm', ['--silent', 'start', '--', ...args], {
    cwd: projectRoot,
    env: { ...process.env, WEBHOOK_SECRET: SECRET, WEBHOOK_SECRET_ARN: '', ALLOW_UNAUTHENTICATED_CALLERS: '', ALLOWED_CALLER_CIDRS: '', STATUS_SYNC_INTERVAL_MS: '1000', KUBECONFIG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout.on('data', () => undefined);
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { exited, stderr: () => stderr, stop: () => child.kill('SIGTERM') };
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`still not ${what} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describeWithControlPlane('npm start -- --kubeconfig FILE on a real kube-apiserver', () => {
  let controlPlane: ControlPlane | undefined;
  let dir: string;
  let kubeconfig: string;
  const cp = (): ControlPlane => {
    if (controlPlane === undefined) throw new Error('the control plane did not start');
    return controlPlane;
  };
  const setStatus = async (): Promise<Record<string, unknown> | undefined> => {
    const res = await cp().request('admin', 'GET', SET_PATH);
    return (JSON.parse(res.body) as { status?: Record<string, unknown> }).status;
  };
  const podImage = async (): Promise<string | undefined> => {
    const res = await cp().request('admin', 'GET', '/api/v1/namespaces/served/pods/web-0');
    return (JSON.parse(res.body) as { spec: { containers: { name: string; image: string }[] } }).spec.containers.find((c) => c.name === 'agent')?.image;
  };

  beforeAll(async () => {
    controlPlane = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    dir = await mkdtemp(join(tmpdir(), 'sidecarset-serve-'));
    kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, controlPlane.kubeconfig('admin'));
    await controlPlane.apply(await readFile(crdPath, 'utf8'));
    await waitForCrd(controlPlane, 'sidecarsets.apps.kruise.io');
    await createNamespace(controlPlane, 'served');
    // A pod injected with agent:1 (as Kruise or the webhook would have), and the set now at agent:2: a rollout is due.
    const res = await controlPlane.request('admin', 'POST', '/apis/apps.kruise.io/v1alpha1/sidecarsets', {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'agent' },
      spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'agent', image: 'agent:2' }], updateStrategy: { type: 'RollingUpdate' } },
    });
    if (res.status !== 201) throw new Error(`create SidecarSet: ${res.status} ${res.body}`);
    await createPod(controlPlane, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-0', namespace: 'served', labels: { app: 'web' } },
      spec: { containers: [{ name: 'app', image: 'app:1' }, { name: 'agent', image: 'agent:1' }] },
    });
  }, 30 * 60_000);

  afterAll(async () => {
    await controlPlane?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('without --reconcile: serves, says the cluster is not reconciled, and writes no status', async () => {
    const run = npmStart(['--kubeconfig', kubeconfig, '--port', '0', '--tls-dir', join(dir, 'tls-a')]);
    try {
      await until('serving', () => run.stderr().includes('are not reconciled'), 120_000);
      expect(run.stderr()).toContain('start with --reconcile to reconcile them');
      // The cluster (v1.36.3) serves MutatingAdmissionPolicy v1: the policy path, its file among those to apply.
      const policyFile = join(dir, 'tls-a', 'injection-policy.yaml');
      expect(run.stderr()).toContain(`-f ${join(dir, 'tls-a', 'webhooks.yaml')} -f ${policyFile}`);
      expect(run.stderr()).toContain('Injection: the MutatingAdmissionPolicy injects the SidecarSets it takes');
      expect(await readFile(policyFile, 'utf8')).toContain('kind: MutatingAdmissionPolicyBinding');
      expect(await readFile(join(dir, 'tls-a', 'webhooks.yaml'), 'utf8')).toContain('matchConditions');
      // Five status intervals: a status loop would have written by now.
      await new Promise((resolve) => setTimeout(resolve, 5000));
      expect(await setStatus()).toBeUndefined();
      expect(await podImage()).toBe('agent:1');
    } finally {
      run.stop();
      await run.exited;
    }
  }, 300_000);

  it('with --reconcile: reconciles the cluster (its resync writes the set’s status)', async () => {
    // The webhook path asked for: no policy file, pod-inject for every pod.
    const run = npmStart(['--kubeconfig', kubeconfig, '--reconcile', '--port', '0', '--tls-dir', join(dir, 'tls-b'), '--injection', 'webhook']);
    try {
      await until('reconciled', async () => (await setStatus()) !== undefined, 60_000).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}; the server said:\n${run.stderr()}`);
      });
      expect(await setStatus()).toMatchObject({ observedGeneration: 1 });
      // The reconciler may write before the server has said what to apply.
      await until('serving', () => run.stderr().includes('Press Ctrl-C'), 60_000);
      expect(run.stderr()).toContain('Injection: pod-inject for every pod (--injection webhook).');
      expect(run.stderr()).not.toContain('injection-policy.yaml');
    } finally {
      run.stop();
      await run.exited;
    }
  }, 300_000);

  it.each<[string, string, object, RegExp]>([
    [
      'the kruise-controller-manager Deployment',
      '/apis/apps/v1/namespaces/kruise-system/deployments',
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'kruise-controller-manager', namespace: 'kruise-system' },
        spec: { replicas: 2, selector: { matchLabels: { 'control-plane': 'controller-manager' } }, template: { metadata: { labels: { 'control-plane': 'controller-manager' } }, spec: { containers: [{ name: 'manager', image: 'openkruise/kruise-manager:v1.8.2' }] } } },
      },
      /Deployment kruise-system\/kruise-controller-manager \(2 replica\(s\)\)/,
    ],
    [
      "Kruise's mutating webhooks for SidecarSets and pods",
      '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'kruise-mutating-webhook-configuration' },
        webhooks: ['mpod.kb.io', 'msidecarset.kb.io'].map((name) => ({
          name,
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Ignore',
          // Nothing matches: the object only has to be there.
          objectSelector: { matchLabels: { 'never-matches': 'true' } },
          clientConfig: { service: { name: 'kruise-webhook-service', namespace: 'kruise-system', path: '/mutate-pod' } },
          rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
        })),
      },
      /MutatingWebhookConfiguration kruise-mutating-webhook-configuration holds Kruise's SidecarSet webhooks \(msidecarset\.kb\.io, mpod\.kb\.io\)/,
    ],
  ])('with --reconcile where %s shows Kruise’s SidecarSet controller: refuses, saying why, and touches nothing', async (_what, path, object, sign) => {
    const created = await cp().request('admin', 'POST', path, object);
    expect(created.status).toBe(201);
    const name = (object as { metadata: { name: string } }).metadata.name;
    try {
      await cp().request('admin', 'PATCH', `${SET_PATH}/status`, { status: null }, 'application/merge-patch+json');
      const run = npmStart(['--kubeconfig', kubeconfig, '--reconcile', '--port', '0', '--tls-dir', join(dir, `tls-${name}`)]);
      expect(await run.exited).toBe(2);
      expect(run.stderr()).toMatch(/^server: refusing to reconcile https:\/\/127\.0\.0\.1:\d+: OpenKruise's own SidecarSet controller runs there/m);
      expect(run.stderr()).toMatch(sign);
      expect(run.stderr()).toContain('start without --reconcile to serve the webhooks only');
      expect(await setStatus()).toBeUndefined();
    } finally {
      await cp().request('admin', 'DELETE', `${path}/${name}`);
    }
  }, 300_000);
});
