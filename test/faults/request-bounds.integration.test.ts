/**
 * The reconciler's requests on the real API server, with a fault proxy in
 * front of it: a read whose answer is held past its attempt timeout is sent
 * again and completes (the retry is told); a guarded pod write likewise;
 * an outage that lasts fails after the bounded attempts, in bounded time.
 * And pod lists are paged by bytes: pods of a megabyte are read a few at a
 * time, no page passes the cap, no pod is missed or read twice, and what
 * is held of a page at once is one pod's text.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { kubePodPages, kubePodWriter, kubeSetPods } from '../../lib/adapters/kube-pods.ts';
import type { KubeClientOptions, RequestRetry } from '../../lib/adapters/kube-request.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { PAGE_MAX_BYTES } from '../../lib/adapters/pod-page-size.ts';
import { startFaultProxy, type FaultProxy } from '../../testkit/faults/fault-proxy.ts';

let cp: ControlPlane;
let proxy: FaultProxy;

async function create(path: string, body: unknown): Promise<void> {
  const res = await cp.request('admin', 'POST', path, body);
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.body.slice(0, 300)}`);
}

const pod = (name: string, labels: Record<string, string>, filler = 0) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  // Annotations may hold 256 KiB in all; the rest of a big pod is a container argument.
  metadata: { name, labels, ...(filler === 0 ? {} : { annotations: { 'example.com/blob': 'a'.repeat(200_000) } }) },
  spec: { containers: [{ name: 'app', image: 'app:1', ...(filler === 0 ? {} : { args: ['b'.repeat(filler)] }) }] },
});

// The writer's write below re-images an app container, which the reconciler's pod policy refuses its identities (rbac.yaml): it writes as admin.
const throughProxy = (options: KubeClientOptions, user: 'functions' | 'admin' = 'functions') =>
  kubeConfigClient(parseKubeConfig(cp.kubeconfig(user).replace(cp.url, `https://127.0.0.1:${proxy.port}`), 'through the fault proxy'), options);
const direct = () => kubeConfigClient(parseKubeConfig(cp.kubeconfig('functions'), 'functions'));

describeWithControlPlane('requests that get no answer in time', () => {
  beforeAll(async () => {
    cp = await startControlPlane();
    await cp.apply(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'retry' } }));
    for (let i = 0; i < 5; i++) await create('/api/v1/namespaces/retry/pods', pod(`p-${i}`, { app: 'retry' }));
    proxy = await startFaultProxy({ targetPort: Number(new URL(cp.url).port) });
  }, 180_000);

  afterAll(async () => {
    await proxy.close();
    await cp.stop();
  });

  it('a list whose answer is held past its attempt timeout is sent again and completes, the retry told', async () => {
    const retries: RequestRetry[] = [];
    const pods = kubeSetPods(throughProxy({ attemptTimeoutMs: 1_000, onRetry: (r) => retries.push(r) }));
    proxy.blackhole();
    const healed = setTimeout(() => {
      proxy.passThrough();
    }, 1_500);
    try {
      const listed = await pods.list({ namespace: 'retry', labelSelector: 'app=retry' });
      expect(listed.pods).toHaveLength(5);
    } finally {
      clearTimeout(healed);
      proxy.passThrough();
    }
    expect(retries.length).toBeGreaterThanOrEqual(1);
    expect(retries[0]).toMatchObject({ method: 'GET', attempt: 2, reason: expect.stringMatching(/timeout/i) });
  }, 60_000);

  it('a guarded pod write (a JSON Patch testing the resourceVersion) is sent again after no answer, and lands once', async () => {
    const stored = JSON.parse((await cp.request('admin', 'GET', '/api/v1/namespaces/retry/pods/p-0')).body) as { metadata: { resourceVersion: string } };
    const retries: RequestRetry[] = [];
    const writer = kubePodWriter(throughProxy({ attemptTimeoutMs: 1_000, onRetry: (r) => retries.push(r) }, 'admin'));
    proxy.blackhole();
    const healed = setTimeout(() => {
      proxy.passThrough();
    }, 1_500);
    let outcome: unknown;
    try {
      outcome = await writer
        .patch('retry', 'p-0', [
          { op: 'test', path: '/metadata/resourceVersion', value: stored.metadata.resourceVersion },
          { op: 'replace', path: '/spec/containers/0/image', value: 'app:2' },
        ])
        .catch((error: unknown) => error);
    } finally {
      clearTimeout(healed);
      proxy.passThrough();
    }
    expect(retries.map((r) => r.method)).toContain('PATCH');
    // Either the retry wrote it, or the first attempt had landed and the retry's test says so: never a second write.
    if (outcome instanceof Error) expect(outcome.name).toBe('WriteConflictError');
    else expect(outcome).toMatchObject({ outcome: 'written' });
    const after = JSON.parse((await cp.request('admin', 'GET', '/api/v1/namespaces/retry/pods/p-0')).body) as { spec: { containers: { image: string }[] } };
    expect(after.spec.containers[0]?.image).toBe('app:2');
  }, 60_000);

  it('an outage that lasts fails the list after the bounded attempts, with the reason, in bounded time', async () => {
    const pods = kubeSetPods(throughProxy({ attemptTimeoutMs: 500 }));
    proxy.blackhole();
    const started = performance.now();
    let failure: unknown;
    try {
      await pods.list({ namespace: 'retry', labelSelector: 'app=retry' });
    } catch (error) {
      failure = error;
    } finally {
      proxy.passThrough();
    }
    expect(failure).toBeInstanceOf(KubeApiError);
    expect((failure as Error).message).toMatch(/\(3 attempts\)$/);
    // Three attempts of 0.5 s and the pauses between them (0.25 s, 1 s), with room for a busy machine.
    expect(performance.now() - started).toBeLessThan(15_000);
  }, 60_000);

  it('reads pods of a megabyte a few per page: no page passes the cap, none is missed or read twice', async () => {
    await cp.apply(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'big' } }));
    for (let i = 0; i < 24; i++) await create('/api/v1/namespaces/big/pods', pod(`big-${String(i).padStart(2, '0')}`, { app: 'big' }, 800_000));
    for (let i = 0; i < 30; i++) await create('/api/v1/namespaces/big/pods', pod(`small-${String(i).padStart(2, '0')}`, { app: 'big' }));
    const pages: { limit: number; bytes: number; items: number; largestItemBytes: number; abandoned: boolean }[] = [];
    const all = kubePodPages(direct(), { onPage: (p) => pages.push(p) });
    const names: string[] = [];
    for await (const page of all.pages()) names.push(...page.filter((p) => p.namespace === 'big').map((p) => p.name));
    expect({ names: names.length, distinct: new Set(names).size, pages }).toMatchObject({ names: 54, distinct: 54 });
    const read = pages.filter((p) => !p.abandoned);
    expect(Math.max(...read.map((p) => p.bytes))).toBeLessThanOrEqual(PAGE_MAX_BYTES);
    // 24 MB of pods do not fit one page of 16 MiB: a page was abandoned at the cap and asked for again, smaller.
    expect(pages.some((p) => p.abandoned)).toBe(true);
    // After a page of megabyte pods, the next asks for a handful.
    const afterBig = read.findIndex((p) => p.bytes / Math.max(1, p.items) > 500_000);
    expect(afterBig).toBeGreaterThanOrEqual(0);
    expect(read[afterBig + 1]?.limit ?? 0).toBeLessThanOrEqual(8);
    // What reading held at once is one pod's text, not a page's: a page of megabyte pods is several megabytes,
    // and each pod was parsed and summarised as its bytes arrived.
    expect(Math.max(...read.map((p) => p.bytes))).toBeGreaterThan(3_000_000);
    expect(Math.max(...read.map((p) => p.largestItemBytes))).toBeLessThan(1_100_000);
    // The rollout's list of a set's pods reads the same way.
    const setPages: { bytes: number; abandoned: boolean }[] = [];
    const listed = await kubeSetPods(direct(), { onPage: (p) => setPages.push(p) }).list({ namespace: 'big', labelSelector: 'app=big' });
    expect(listed.pods).toHaveLength(54);
    expect(Math.max(...setPages.filter((p) => !p.abandoned).map((p) => p.bytes))).toBeLessThanOrEqual(PAGE_MAX_BYTES);
  }, 300_000);
});
