import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { existsSync } from 'node:fs';
import { parse } from 'yaml';
import { controlPlaneVersions, ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import type { ControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane } from '../../control-plane/harness.ts';
import type { ControlPlane } from '../../control-plane/harness.ts';

// The first run builds etcd and kube-apiserver from source: minutes, not seconds.
const buildTimeoutMs = 30 * 60_000;
const startTimeoutMs = 5 * 60_000;

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describeWithControlPlane('the test control plane', () => {
  let binaries: ControlPlaneBinaries;
  let controlPlane: ControlPlane | undefined;

  beforeAll(async () => {
    binaries = await ensureControlPlaneBinaries();
  }, buildTimeoutMs);

  afterAll(async () => {
    await controlPlane?.stop();
  }, startTimeoutMs);

  it(
    'starts etcd and kube-apiserver on loopback and reports ready',
    async () => {
      controlPlane = await startControlPlane({ binaries });
      expect(controlPlane.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(controlPlane.caCert).toContain('-----BEGIN CERTIFICATE-----');

      const ready = await controlPlane.request('admin', 'GET', '/readyz');
      expect(ready).toEqual({ status: 200, body: 'ok', warnings: [] });
      const version = await controlPlane.request('admin', 'GET', '/version');
      // The build stamps the version pinned in tools/kube-apiserver/go.mod.
      const { kubernetes } = await controlPlaneVersions();
      expect(JSON.parse(version.body).gitVersion).toBe(kubernetes);
    },
    startTimeoutMs,
  );

  it('lets the admin create a namespace', async () => {
    const cp = controlPlane!;
    const created = await cp.request('admin', 'POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'admin-made' },
    });
    expect(created.status).toBe(201);
  });

  it('lets the functions identity list pods and namespaces, as infra/k8s/rbac.yaml grants', async () => {
    const cp = controlPlane!;
    const namespaces = await cp.request('functions', 'GET', '/api/v1/namespaces');
    expect(namespaces.status).toBe(200);
    const list = JSON.parse(namespaces.body) as { items: { metadata: { name: string } }[] };
    expect(list.items.map((item) => item.metadata.name)).toContain('admin-made');
    expect((await cp.request('functions', 'GET', '/api/v1/pods')).status).toBe(200);
    expect((await cp.request('functions', 'GET', '/api/v1/namespaces/admin-made')).status).toBe(200);
  });

  it('forbids the functions identity anything rbac.yaml does not grant', async () => {
    const cp = controlPlane!;
    const created = await cp.request('functions', 'POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'functions-made' },
    });
    expect(created.status).toBe(403);
    expect(JSON.parse(created.body).message).toContain('User "sidecarset-functions" cannot create resource "namespaces"');
    expect((await cp.request('functions', 'GET', '/api/v1/secrets')).status).toBe(403);
  });

  it('writes kubeconfigs that carry the CA and each identity', () => {
    const cp = controlPlane!;
    const config = parse(cp.kubeconfig('functions'));
    expect(config['current-context']).toBe('functions');
    expect(config.clusters[0].cluster.server).toBe(cp.url);
    expect(Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64').toString()).toBe(cp.caCert);
    expect(config.users[0].user.token).toBe(cp.functionsToken);
    expect(parse(cp.kubeconfig('admin')).users[0].user.token).toBe(cp.adminToken);
  });

  it(
    'restarts the API server alone on the same address and CA, keeping what etcd stored',
    async () => {
      const cp = controlPlane!;
      const created = await cp.request('admin', 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'survives-restart' } });
      expect(created.status).toBe(201);
      const before = cp.pids.kubeApiserver;

      await cp.stopApiServer();
      expect(isRunning(before)).toBe(false);
      expect(isRunning(cp.pids.etcd)).toBe(true);
      await expect(cp.request('admin', 'GET', '/readyz')).rejects.toThrow(/ECONNREFUSED/);

      await cp.startApiServer();
      expect(cp.pids.kubeApiserver).not.toBe(before);
      expect(isRunning(cp.pids.kubeApiserver)).toBe(true);
      // request() pins the original CA: the restarted server serves the same certificate chain.
      const again = await cp.request('admin', 'GET', '/api/v1/namespaces/survives-restart');
      expect(again.status).toBe(200);
    },
    startTimeoutMs,
  );

  it(
    'stops both processes and removes its directory',
    async () => {
      const cp = controlPlane!;
      expect(isRunning(cp.pids.etcd)).toBe(true);
      expect(isRunning(cp.pids.kubeApiserver)).toBe(true);
      expect(existsSync(cp.dir)).toBe(true);

      await cp.stop();
      controlPlane = undefined;

      expect(isRunning(cp.pids.etcd)).toBe(false);
      expect(isRunning(cp.pids.kubeApiserver)).toBe(false);
      expect(existsSync(cp.dir)).toBe(false);
      // stop() may be called again (afterAll, signal hooks) without effect.
      await cp.stop();
    },
    startTimeoutMs,
  );
  it(
    'compacts etcd so that a continue token of a list read from etcd expires with 410 Gone',
    async () => {
      const cp = await startControlPlane({ binaries, apiServerArgs: ['--watch-cache=false'] });
      try {
        for (const name of ['compact-a', 'compact-b', 'compact-c']) {
          expect((await cp.request('admin', 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })).status).toBe(201);
        }
        const first = JSON.parse((await cp.request('admin', 'GET', '/api/v1/namespaces?limit=1')).body);
        const token: string = first.metadata.continue;
        expect(token).not.toBe('');
        // A write moves the revision past the token's, so the compaction covers it.
        await cp.request('admin', 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'compact-d' } });

        const revision = await cp.compactEtcd();
        expect(revision).toBeGreaterThan(0);
        const next = await cp.request('admin', 'GET', `/api/v1/namespaces?limit=1&continue=${encodeURIComponent(token)}`);
        expect(next.status).toBe(410);
        expect(JSON.parse(next.body).reason).toBe('Expired');
      } finally {
        await cp.stop();
      }
    },
    startTimeoutMs,
  );
});
