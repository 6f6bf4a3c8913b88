/**
 * The seed's workflow against a real kube-apiserver that calls our webhooks
 * over TLS, as a user would do it with kubectl. The functions read the
 * cluster as the least-privilege identity of infra/k8s/rbac.yaml.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { sidecarSetHash } from '../../lib/sidecarset/hash.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';

const SETS = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
let stack: LocalStack;


const logAgent = (image = 'fluent-bit:3.1'): SidecarSet => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'log-agent' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    volumes: [{ name: 'log-config', configMap: { name: 'log-agent' } }],
    containers: [
      {
        name: 'log-agent',
        image,
        env: [{ name: 'LOG_LEVEL', value: 'info' }],
        volumeMounts: [{ name: 'log-config', mountPath: '/etc/fluent-bit' }],
      },
    ],
  },
});

const webPod = (name: string, labels: Record<string, string> = { app: 'web' }): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
});

async function create(path: string, body: unknown): Promise<{ status: number; object: SidecarSet & Pod; message: string }> {
  const res = await stack.cp.request('admin', 'POST', path, body);
  const parsed = JSON.parse(res.body) as SidecarSet & Pod & { message?: string };
  return { status: res.status, object: parsed, message: parsed.message ?? '' };
}

describeWithControlPlane('the SidecarSet workflow on a real API server', () => {
  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    // The webhook path: pod-inject's workflow (the policy path's: injection-policy-path.integration.test.ts).
    stack = await startLocalStack({ injection: 'webhook' });
    for (const ns of ['shop', 'quiet']) {
      const labels = ns === 'quiet' ? { 'sidecarset.kruise.io/injection': 'disabled' } : {};
      const res = await stack.cp.request('admin', 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels } });
      expect(res.status).toBe(201);
    }
  }, 30 * 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  let stored: SidecarSet;

  it('1. stores a new SidecarSet with its defaults and both hash annotations', async () => {
    const res = await create(SETS, logAgent());
    expect(res.status).toBe(201);
    stored = res.object;
    expect(stored.spec?.updateStrategy).toMatchObject({ type: 'RollingUpdate', maxUnavailable: 1, partition: 0 });
    expect(stored.spec?.containers?.[0]).toMatchObject({ podInjectPolicy: 'BeforeAppContainer', imagePullPolicy: 'IfNotPresent', upgradeStrategy: { upgradeType: 'ColdUpgrade' }, shareVolumePolicy: { type: 'disabled' } });
    expect(stored.spec?.volumes?.[0]).toMatchObject({ configMap: { name: 'log-agent', defaultMode: 420 } });
    expect(stored.spec?.revisionHistoryLimit).toBe(10);
    expect(stored.metadata?.annotations?.['kruise.io/sidecarset-hash']).toBe(sidecarSetHash(stored));
    expect(stored.metadata?.annotations?.['kruise.io/sidecarset-hash-without-image']).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{64}$/);
  });

  it('2. refuses an invalid SidecarSet and names the fields', async () => {
    const res = await create(SETS, { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'broken' }, spec: { selector: { matchLabels: { app: 'x' } }, containers: [{ name: 'Bad_Name' }] } });
    expect(res.status).toBe(422);
    expect(res.message).toContain('admission webhook "sidecarset-validate.sidecarset.kruise.io" denied the request');
    expect(res.message).toContain('spec.containers[0].image: Required value');
    expect(res.message).toContain('spec.containers[0].name');
  });

  it('3. refuses a SidecarSet whose container name conflicts with an overlapping set', async () => {
    const clash = logAgent();
    clash.metadata = { name: 'log-agent-2' };
    clash.spec!.selector = { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] };
    const res = await create(SETS, clash);
    expect(res.status).toBe(422);
    expect(res.message).toContain('container log-agent already exist in log-agent');
  });

  it('4. injects the sidecar, env, volume and annotations into a matching pod', async () => {
    const res = await create('/api/v1/namespaces/shop/pods', webPod('web-1'));
    expect(res.status).toBe(201);
    const pod = res.object;
    expect(pod.spec?.containers.map((c) => c.name)).toEqual(['log-agent', 'app']);
    expect(pod.spec?.containers[0]?.env).toEqual([{ name: 'LOG_LEVEL', value: 'info' }, { name: 'IS_INJECTED', value: 'true' }]);
    expect(pod.spec?.containers[0]).not.toHaveProperty('podInjectPolicy');
    expect(pod.spec?.volumes?.map((v) => v.name)).toContain('log-config');
    const annotations = pod.metadata?.annotations ?? {};
    expect(annotations['kruise.io/sidecarset-injected-list']).toBe('log-agent');
    const hash = JSON.parse(annotations['kruise.io/sidecarset-hash'] ?? '{}') as Record<string, { hash: string; sidecarList: string[] }>;
    expect(hash['log-agent']?.hash).toBe(stored.metadata?.annotations?.['kruise.io/sidecarset-hash']);
    expect(hash['log-agent']?.sidecarList).toEqual(['log-agent']);
    expect(JSON.parse(annotations['kruise.io/sidecarset-hash-without-image'] ?? '{}')['log-agent'].hash).toBe(
      stored.metadata?.annotations?.['kruise.io/sidecarset-hash-without-image'],
    );
  });

  it.each([
    ['a pod the selector does not match', 'shop', { app: 'db' }],
    ['a pod in a system namespace', 'kube-system', { app: 'web' }],
    ['a pod in a namespace that opted out', 'quiet', { app: 'web' }],
  ])('5. stores %s untouched', async (_name, namespace, labels) => {
    const res = await create(`/api/v1/namespaces/${namespace}/pods`, webPod(`plain-${namespace}`, labels));
    expect(res.status).toBe(201);
    expect(res.object.spec?.containers.map((c) => c.name)).toEqual(['app']);
    expect(res.object.metadata?.annotations ?? {}).not.toHaveProperty('kruise.io/sidecarset-injected-list');
  });

  it('5. returns the injected pod on a dry-run create and stores nothing', async () => {
    const res = await create('/api/v1/namespaces/shop/pods?dryRun=All', webPod('dry-1'));
    expect(res.status).toBe(201);
    expect(res.object.spec?.containers.map((c) => c.name)).toEqual(['log-agent', 'app']);
    const get = await stack.cp.request('admin', 'GET', '/api/v1/namespaces/shop/pods/dry-1');
    expect(get.status).toBe(404);
  });

  it('6. allows an image update and changes the hash annotation', async () => {
    const res = await stack.cp.request(
      'admin',
      'PATCH',
      `${SETS}/log-agent`,
      [{ op: 'replace', path: '/spec/containers/0/image', value: 'fluent-bit:3.2' }],
      'application/json-patch+json',
    );
    expect(res.status).toBe(200);
    const updated = JSON.parse(res.body) as SidecarSet;
    const before = stored.metadata?.annotations ?? {};
    const after = updated.metadata?.annotations ?? {};
    expect(after['kruise.io/sidecarset-hash']).not.toBe(before['kruise.io/sidecarset-hash']);
    expect(after['kruise.io/sidecarset-hash']).toBe(sidecarSetHash(updated));
    expect(after['kruise.io/sidecarset-hash-without-image']).toBe(before['kruise.io/sidecarset-hash-without-image']);
  });

  it('7. did all of it reading the cluster as the least-privilege identity, without a refusal', () => {
    // A 403 as a number of its own: a random uid in a line may hold the digits 403.
    const failures = stack.logs.filter((l) => l.includes('"level":"error"') || /\b403\b/.test(l));
    expect(failures).toEqual([]);
    expect(stack.logs.some((l) => l.includes('"function":"pod-inject"') && l.includes('"outcome":"patched"'))).toBe(true);
  });
});
