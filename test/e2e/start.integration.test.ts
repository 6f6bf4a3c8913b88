/**
 * `npm start` with no cluster configured, as a user runs it: an embedded
 * cluster comes up with everything installed, the kubeconfig it writes works,
 * a pod created through it is injected, and Ctrl-C leaves nothing behind.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { waitForCrd } from '../../functions/server/local-stack.ts';
import { untilInjected } from '../../functions/server/until-injected.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Kubeconfig {
  clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { user: { token: string } }[];
}

function api(kc: Kubeconfig, method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> {
  const server = new URL(kc.clusters[0]!.cluster.server);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: server.port,
        method,
        path,
        ca: Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data'], 'base64'),
        headers: { authorization: `Bearer ${kc.users[0]!.user.token}`, 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describeWithControlPlane('npm start without a cluster', () => {
  let child: ChildProcess;
  let output = '';
  let workdir: string;
  let kubeconfigPath: string;

  beforeAll(async () => {
    // A working directory of its own, so its .cache/local-cluster is not shared.
    workdir = await mkdtemp(join(tmpdir(), 'npm-start-'));
    // A 1 s status loop instead of the default 30 s, so the test sees a resync soon.
    const env = { ...process.env, STATUS_SYNC_INTERVAL_MS: '1000' };
    for (const k of ['KUBECONFIG', 'KUBECONFIG_CONTENT', 'KUBECONFIG_SECRET_ARN', 'EKS_CLUSTER_NAME']) Reflect.deleteProperty(env, k);
    child = spawn(process.execPath, [join(projectRoot, 'functions/server/main.ts'), '--port', '0', '--tls-dir', join(workdir, 'tls')], { cwd: workdir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 120_000;
    while (!output.includes('Press Ctrl-C to stop')) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not come up:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    kubeconfigPath = /--kubeconfig (\S+) apply/.exec(output)?.[1] ?? '';
  }, 180_000);

  afterAll(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await rm(workdir, { recursive: true, force: true });
  });

  it('prints how to use the kubeconfig it wrote, and that kubeconfig reaches the cluster', async () => {
    expect(output).toContain('kubectl --kubeconfig');
    expect(output).toContain('apply -f examples/sidecarset.yaml');
    const kc = parse(await readFile(kubeconfigPath, 'utf8')) as Kubeconfig;
    expect((await api(kc, 'GET', '/readyz')).status).toBe(200);
  });

  it('injects a pod created through that kubeconfig', async () => {
    const kc = parse(await readFile(kubeconfigPath, 'utf8')) as Kubeconfig;
    const set = parse(await readFile(join(projectRoot, 'examples/sidecarset.yaml'), 'utf8')) as unknown;
    // examples/sidecarset.yaml is written in v1beta1, the stored version.
    expect((await api(kc, 'POST', '/apis/apps.kruise.io/v1beta1/sidecarsets', set)).status).toBe(201);
    // The policy path (npm start's default) sees a new set once the API server's param cache has it: wait for that, as
    // docs/INJECTION-POLICY.md says, with dry runs (bounded: a set never seen fails here).
    const pod = parse(await readFile(join(projectRoot, 'examples/pod.yaml'), 'utf8')) as Pod;
    await untilInjected((method, path, body) => api(kc, method, path, body), 'default', pod);
    const res = await api(kc, 'POST', '/api/v1/namespaces/default/pods', pod);
    expect(res.status).toBe(201);
    const created = JSON.parse(res.body) as { spec: { containers: { name: string }[] } };
    expect(created.spec.containers.map((c) => c.name)).toEqual(['log-agent', 'app']);
  });

  it('keeps the SidecarSet\'s status current: the injected pod is MATCHED', async () => {
    expect(output).toContain('SidecarSet statuses are reconciled every 1 s');
    const kc = parse(await readFile(kubeconfigPath, 'utf8')) as Kubeconfig;
    const deadline = Date.now() + 20_000;
    let status: unknown;
    do {
      await new Promise((r) => setTimeout(r, 250));
      status = (JSON.parse((await api(kc, 'GET', '/apis/apps.kruise.io/v1alpha1/sidecarsets/log-agent')).body) as { status?: unknown }).status;
    } while ((status as { matchedPods?: number } | undefined)?.matchedPods !== 1 && Date.now() < deadline);
    expect(status).toEqual({ observedGeneration: 1, matchedPods: 1, updatedPods: 1, readyPods: 0, updatedReadyPods: 0, latestRevision: expect.stringMatching(/^log-agent-[bcdfghjklmnpqrstvwxz2456789]+$/), collisionCount: 0 });
    expect(output).toContain('"message":"resync","function":"status-sync"');
  });

  it('stops the cluster and exits cleanly on Ctrl-C', async () => {
    const pids = [...output.matchAll(/"(?:etcd|apiServer)Pid":(\d+)/g)].map((m) => Number(m[1]));
    expect(pids).toHaveLength(2);
    const kc = parse(await readFile(kubeconfigPath, 'utf8')) as Kubeconfig;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => { resolve(code); }));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    await expect(api(kc, 'GET', '/readyz')).rejects.toThrow();
    // The kubeconfig pointed at the server that is gone: it is removed with it.
    await expect(readFile(kubeconfigPath, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
  });
});

describeWithControlPlane('npm start with a cluster given', () => {
  let cp: ControlPlane;
  let child: ChildProcess;
  let output = '';
  let workdir: string;

  beforeAll(async () => {
    workdir = await mkdtemp(join(tmpdir(), 'npm-start-given-'));
    cp = await startControlPlane();
    const kubeconfig = join(workdir, 'kubeconfig');
    await writeFile(kubeconfig, cp.kubeconfig('functions'));
    child = spawn(process.execPath, [join(projectRoot, 'functions/server/main.ts'), '--kubeconfig', kubeconfig, '--port', '0', '--tls-dir', join(workdir, 'tls')], {
      cwd: workdir,
      env: { ...process.env, STATUS_SYNC_INTERVAL_MS: '1000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 60_000;
    while (!output.includes('Press Ctrl-C to stop')) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not come up:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 180_000);

  afterAll(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await cp.stop();
    await rm(workdir, { recursive: true, force: true });
  });

  it('prints the manifests to apply, and once applied the cluster calls it, converts through it and pods are injected', async () => {
    const webhooks = join(workdir, 'tls', 'webhooks.yaml');
    const crd = join(workdir, 'tls', 'crd.yaml');
    // The cluster (v1.36.3) serves MutatingAdmissionPolicy v1: the policy path, its file last.
    const policy = join(workdir, 'tls', 'injection-policy.yaml');
    expect(output).toContain(`kubectl apply --server-side -f ${crd} -f infra/k8s/rbac.yaml -f ${webhooks} -f ${policy}`);
    // The printed CRD converts through this server (not the harness's webhook): a v1alpha1 write below needs it.
    const crdText = await readFile(crd, 'utf8');
    expect(crdText).toMatch(/url: https:\/\/127\.0\.0\.1:\d+\/sidecarset-convert\//);
    await cp.apply(crdText);
    await waitForCrd(cp, 'sidecarsets.apps.kruise.io');
    await cp.apply(await readFile(webhooks, 'utf8'));
    await cp.apply(await readFile(policy, 'utf8'));
    const set = parse(await readFile(join(projectRoot, 'examples/sidecarset.yaml'), 'utf8')) as unknown;
    const created = await cp.request('admin', 'POST', '/apis/apps.kruise.io/v1beta1/sidecarsets', set);
    expect(created.status).toBe(201);
    expect(created.body).toContain('kruise.io/sidecarset-hash');
    const pod = parse(await readFile(join(projectRoot, 'examples/pod.yaml'), 'utf8')) as Pod;
    await untilInjected((method, path, body) => cp.request('admin', method, path, body), 'default', pod);
    const res = await cp.request('admin', 'POST', '/api/v1/namespaces/default/pods', pod);
    expect(res.status).toBe(201);
    expect((JSON.parse(res.body) as { spec: { containers: { name: string }[] } }).spec.containers.map((c) => c.name)).toEqual(['log-agent', 'app']);
  });

  it("leaves that cluster's SidecarSets alone without --reconcile, and says so", async () => {
    expect(output).toContain('SidecarSets in that cluster are not reconciled (no status written, no pod rolled, no secret rotated): start with --reconcile to reconcile them.');
    // Several of the resyncs a reconciling server would run (STATUS_SYNC_INTERVAL_MS=1000): no status is written.
    await new Promise((r) => setTimeout(r, 3_000));
    const stored = JSON.parse((await cp.request('admin', 'GET', '/apis/apps.kruise.io/v1alpha1/sidecarsets/log-agent')).body) as { status?: unknown };
    expect(stored.status).toBeUndefined();
  });

  it('answers /readyz once it can list SidecarSets, saying only that, and logs from where once', async () => {
    const port = / on https:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1];
    const ca = await readFile(join(workdir, 'tls', 'ca.crt'));
    const probe = () =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        httpsRequest({ host: '127.0.0.1', port, path: '/readyz', ca }, (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => {
            resolve({ status: r.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
          });
        })
          .on('error', reject)
          .end();
      });
    const answers = await Promise.all(Array.from({ length: 20 }, probe));
    expect(new Set(answers.map((a) => `${a.status} ${a.body}`))).toEqual(new Set(['200 {"status":"ready"}']));
    const readyLines = output.split('\n').filter((line) => line.includes('"message":"ready"'));
    expect(readyLines).toHaveLength(1);
    expect(readyLines[0]).toContain(`SidecarSets readable from ${cp.url}`);
  });
});
