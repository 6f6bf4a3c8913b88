/**
 * `npm start`'s embedded cluster runs kube-controller-manager (the local
 * stack's `controllerManager`): with the test kubelet, a Deployment's pods
 * are made by its ReplicaSet, injected by the webhook and Ready; a
 * StatefulSet and a Job make theirs; a PodDisruptionBudget counts healthy
 * pods; a new namespace gets its `default` ServiceAccount; deleting the
 * Deployment deletes its ReplicaSet and pods (garbage collection); stop()
 * ends the controller manager with the rest.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { untilInjected } from '../../functions/server/until-injected.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { isReady } from '../../testkit/cluster-pods.ts';

const startTimeoutMs = 5 * 60_000;
const template = (app: string) => ({ metadata: { labels: { app } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } });

describeWithControlPlane('the embedded cluster with kube-controller-manager', () => {
  let stack: LocalStack;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the shape it reads
  const get = async <T>(path: string): Promise<{ status: number; value: T }> => {
    const res = await stack.cp.request('admin', 'GET', path);
    return { status: res.status, value: (res.status === 200 ? JSON.parse(res.body) : undefined) as T };
  };
  const create = async (path: string, body: object): Promise<void> => {
    const res = await stack.cp.request('admin', 'POST', path, body);
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.body}`);
  };
  const podsOf = async (app: string): Promise<Pod[]> => (await get<{ items: Pod[] }>(`/api/v1/namespaces/default/pods?labelSelector=app%3D${app}`)).value.items;
  async function until<T>(what: string, read: () => Promise<T>, holds: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (holds(value)) return value;
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms; last seen ${JSON.stringify(value).slice(0, 600)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  beforeAll(async () => {
    stack = await startLocalStack({ controllerManager: true, testKubelet: { readyDelayMs: 100 } });
    await stack.cp.apply(await readFile('examples/sidecarset.yaml', 'utf8'));
    // The policy path (the default) sees the new set once the API server's param cache has it: before the controllers make pods.
    const probe = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe', labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'busybox' }] } };
    await untilInjected((method, path, body) => stack.cp.request('admin', method, path, body), 'default', probe);
  }, startTimeoutMs);

  afterAll(async () => {
    const pid = stack.cp.pids.controllerManager;
    await stack.stop();
    // stop() ended it: signal 0 to a gone process throws ESRCH.
    expect(() => process.kill(pid ?? 0, 0)).toThrow();
  }, startTimeoutMs);

  it('runs a Deployment: its ReplicaSet makes 3 pods, each injected with the example sidecar and Ready, and the Deployment counts them available', async () => {
    await create('/apis/apps/v1/namespaces/default/deployments', { metadata: { name: 'web' }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: template('web') } });
    const pods = await until('3 Ready pods', () => podsOf('web'), (p) => p.length === 3 && p.every(isReady));
    for (const pod of pods) expect(pod.spec?.containers.map((c) => c.name)).toEqual(['log-agent', 'main']);
    const deployment = await until('the Deployment available', () => get<{ status?: { availableReplicas?: number } }>('/apis/apps/v1/namespaces/default/deployments/web'), (d) => d.value.status?.availableReplicas === 3);
    expect(deployment.status).toBe(200);
  });

  it('keeps a PodDisruptionBudget\'s status: 3 healthy pods, 2 disruptions allowed with minAvailable 1', async () => {
    await create('/apis/policy/v1/namespaces/default/poddisruptionbudgets', { metadata: { name: 'web' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } } });
    const pdb = await until('the PDB counted', () => get<{ status?: { currentHealthy?: number; disruptionsAllowed?: number } }>('/apis/policy/v1/namespaces/default/poddisruptionbudgets/web'), (p) => p.value.status?.currentHealthy === 3);
    expect(pdb.value.status?.disruptionsAllowed).toBe(2);
  });

  it('runs a StatefulSet (its pods in order, each Ready) and a Job (its pod made and counted active)', async () => {
    await create('/apis/apps/v1/namespaces/default/statefulsets', { metadata: { name: 'db' }, spec: { replicas: 2, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: template('db') } });
    await create('/apis/batch/v1/namespaces/default/jobs', { metadata: { name: 'once' }, spec: { template: { metadata: { labels: { app: 'once' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } } } });
    const db = await until('2 Ready StatefulSet pods', () => podsOf('db'), (p) => p.length === 2 && p.every(isReady));
    expect(db.map((p) => p.metadata?.name).sort()).toEqual(['db-0', 'db-1']);
    const job = await until('the Job active', () => get<{ status?: { active?: number } }>('/apis/batch/v1/namespaces/default/jobs/once'), (j) => j.value.status?.active === 1);
    expect(job.status).toBe(200);
  });

  it('gives a new namespace its default ServiceAccount', async () => {
    await create('/api/v1/namespaces', { metadata: { name: 'team-a' } });
    const sa = await until('the default ServiceAccount', () => get('/api/v1/namespaces/team-a/serviceaccounts/default'), (r) => r.status === 200);
    expect(sa.status).toBe(200);
  });

  it('deletes what a deleted Deployment owned: its ReplicaSet and its pods (garbage collection)', async () => {
    const res = await stack.cp.request('admin', 'DELETE', '/apis/apps/v1/namespaces/default/deployments/web', { propagationPolicy: 'Background' });
    expect(res.status).toBe(200);
    await until('no ReplicaSet left', () => get<{ items: unknown[] }>('/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Dweb'), (r) => r.value.items.length === 0);
    await until('no pod left', () => podsOf('web'), (p) => p.length === 0);
  });
});
