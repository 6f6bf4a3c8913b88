/**
 * The test kubelet on the real control plane: what it writes to a new pod,
 * to a pod whose image changes (good, bad, the same image spelled another
 * way), to a pod being deleted, and that stop() leaves nothing running.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { defaultBadImage, imageIdOf } from '../../control-plane/kubelet-status.ts';
import { DEFAULT_PULL_DELAY_MS, startTestKubelet, type TestKubelet } from '../../control-plane/test-kubelet.ts';
import type { Container, JsonObject, Pod } from '../../lib/kube/types.ts';
import { createNamespace, createPod, isReady, podPath, readPod, setImage, waitForPod } from '../../testkit/cluster-pods.ts';
import { pod as podObject } from '../../testkit/sidecarset-objects.ts';

const startTimeoutMs = 5 * 60_000;
// The kubelet's readiness delay: 60 polls (50 ms) to see the not-ready state in, short enough to wait for.
const readyDelayMs = 3_000;
const namespace = 'kubelet';

function newPod(name: string, containers: Container[], initContainers?: Container[], spec: Record<string, unknown> = {}): Pod {
  const pod = podObject({ containers, ...(initContainers ? { initContainers } : {}), spec });
  return { ...pod, metadata: { ...pod.metadata, name, namespace } };
}

function statusOf(pod: Pod | undefined, name: string): JsonObject {
  const found = [...(pod?.status?.containerStatuses ?? []), ...((pod?.status?.initContainerStatuses as JsonObject[] | undefined) ?? [])].find((s) => s.name === name);
  if (found === undefined) throw new Error(`no status for container ${name}: ${JSON.stringify(pod?.status)}`);
  return found;
}

function conditionOf(pod: Pod | undefined, type: string): string | undefined {
  return pod?.status?.conditions?.find((c) => c.type === type)?.status;
}

const restartedOnce = (name: string) => (pod: Pod | undefined) => pod?.status?.containerStatuses?.find((s) => s.name === name)?.restartCount === 1;

describe('the test kubelet\'s image IDs and bad images', () => {
  it('gives one image, however spelled, one ID, and another image another', () => {
    expect(imageIdOf('nginx')).toBe(imageIdOf('docker.io/library/nginx:latest'));
    expect(imageIdOf('index.docker.io/library/nginx:latest')).toBe(imageIdOf('nginx:latest'));
    expect(imageIdOf('nginx:1.25')).not.toBe(imageIdOf('nginx:1.27'));
    expect(imageIdOf('registry.example.com:5000/team/proxy:v2')).toMatch(/^registry\.example\.com:5000\/team\/proxy@sha256:[0-9a-f]{64}$/);
  });

  it('reports the digest a reference names', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    expect(imageIdOf(`nginx@${digest}`)).toBe(`docker.io/library/nginx@${digest}`);
    expect(imageIdOf(`nginx:1.25@${digest}`)).toBe(`docker.io/library/nginx@${digest}`);
  });

  it.each([
    ['nginx:invalid', true],
    ['busybox:bad', true],
    ['example.com/bad-proxy:1', true],
    ['nginx:1.25', false],
    // The registry is not part of the name.
    ['badregistry.example.com/proxy:1', false],
  ])('treats %s as bad: %s', (image, bad) => {
    expect(defaultBadImage(image)).toBe(bad);
  });
});

describeWithControlPlane('the test kubelet', () => {
  let cp: ControlPlane;
  let kubelet: TestKubelet;
  const errors: string[] = [];

  beforeAll(async () => {
    cp = await startControlPlane();
    await createNamespace(cp, namespace);
    kubelet = startTestKubelet(cp, { namespaces: [namespace], readyDelayMs, onError: (message) => errors.push(message) });
  }, startTimeoutMs);

  afterAll(async () => {
    await kubelet.stop();
    await cp.stop();
  }, startTimeoutMs);

  it('starts a new pod: Running, Ready, every container running and ready with its image and a digest', async () => {
    await createPod(
      cp,
      newPod('fresh', [{ name: 'app', image: 'nginx:1.25' }, { name: 'log', image: 'busybox' }], [
        { name: 'setup', image: 'busybox:1.36' },
        { name: 'proxy', image: 'envoy:v1', restartPolicy: 'Always' },
      ]),
    );
    const pod = await waitForPod(cp, namespace, 'fresh', isReady);
    expect(pod?.status?.phase).toBe('Running');
    for (const type of ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready']) expect(conditionOf(pod, type)).toBe('True');
    expect(statusOf(pod, 'app')).toMatchObject({
      image: 'nginx:1.25',
      imageID: imageIdOf('nginx:1.25'),
      ready: true,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) } },
    });
    expect(statusOf(pod, 'app').imageID).toMatch(/^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
    expect(statusOf(pod, 'log')).toMatchObject({ image: 'busybox', imageID: imageIdOf('docker.io/library/busybox:latest'), ready: true });
    expect(statusOf(pod, 'setup')).toMatchObject({ ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } });
    expect(statusOf(pod, 'proxy')).toMatchObject({ image: 'envoy:v1', ready: true, started: true, state: { running: {} } });
    // Binding is a scheduler's job.
    expect(pod?.spec?.nodeName).toBeUndefined();
  });

  it('restarts a container whose image changed: restart count 1, not ready, then ready after the pull and readiness delays', async () => {
    const created = await createPod(cp, newPod('update', [{ name: 'app', image: 'app:1' }, { name: 'sidecar', image: 'nginx:1.25' }]));
    await waitForPod(cp, namespace, 'update', isReady);
    const changedAt = Date.now();
    await setImage(cp, created, 'sidecar', 'nginx:1.27');
    const restarted = await waitForPod(cp, namespace, 'update', restartedOnce('sidecar'));
    expect(statusOf(restarted, 'sidecar')).toMatchObject({
      image: 'nginx:1.27',
      imageID: imageIdOf('nginx:1.27'),
      ready: false,
      restartCount: 1,
      lastState: { terminated: { reason: 'Completed' } },
      state: { running: {} },
    });
    expect(imageIdOf('nginx:1.27')).not.toBe(imageIdOf('nginx:1.25'));
    expect(conditionOf(restarted, 'Ready')).toBe('False');
    expect(conditionOf(restarted, 'ContainersReady')).toBe('False');
    // The other container was not touched.
    expect(statusOf(restarted, 'app')).toMatchObject({ ready: true, restartCount: 0 });

    const ready = await waitForPod(cp, namespace, 'update', isReady);
    // Not before both delays, the default pull's included (the kubelet may only count them from when it saw the change).
    expect(Date.now() - changedAt).toBeGreaterThanOrEqual(readyDelayMs + DEFAULT_PULL_DELAY_MS);
    expect(statusOf(ready, 'sidecar')).toMatchObject({ image: 'nginx:1.27', ready: true, restartCount: 1 });
    expect(conditionOf(ready, 'ContainersReady')).toBe('True');
  });

  it("keeps conditions other writers own (a reconciler's SidecarSetUpgradable) through a restart, as the kubelet's status manager does", async () => {
    const created = await createPod(cp, newPod('foreign-condition', [{ name: 'app', image: 'app:1' }, { name: 'sidecar', image: 'nginx:1.25' }]));
    await waitForPod(cp, namespace, 'foreign-condition', isReady);
    const upgradable = { type: 'SidecarSetUpgradable', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'AllSidecarsetUpgradable', message: '{"log":true}' };
    const res = await cp.request('admin', 'PATCH', `${podPath(namespace, 'foreign-condition')}/status`, { status: { conditions: [upgradable] } }, 'application/strategic-merge-patch+json');
    expect(res.status).toBe(200);
    await setImage(cp, created, 'sidecar', 'nginx:1.27');
    await waitForPod(cp, namespace, 'foreign-condition', restartedOnce('sidecar'));
    const ready = await waitForPod(cp, namespace, 'foreign-condition', (pod) => isReady(pod) && statusOf(pod, 'sidecar').restartCount === 1);
    expect(ready?.status?.conditions?.find((c) => c.type === 'SidecarSetUpgradable')).toEqual(upgradable);
  });

  it('keeps a bad image waiting, never Ready, and recovers once the image is fixed', async () => {
    const created = await createPod(cp, newPod('bad', [{ name: 'app', image: 'app:1' }, { name: 'sidecar', image: 'nginx:1.25' }]));
    await waitForPod(cp, namespace, 'bad', isReady);
    await setImage(cp, created, 'sidecar', 'nginx:invalid');
    const backingOff = await waitForPod(cp, namespace, 'bad', (pod) => (statusOf(pod, 'sidecar').state as JsonObject).waiting !== undefined && JSON.stringify(pod?.status).includes('ImagePullBackOff'));
    expect(statusOf(backingOff, 'sidecar')).toMatchObject({ image: 'nginx:invalid', imageID: '', ready: false, restartCount: 1, state: { waiting: { reason: 'ImagePullBackOff' } } });
    expect(conditionOf(backingOff, 'Ready')).toBe('False');
    // A readiness delay after the back-off (itself a delay after the change), still not ready.
    await new Promise((resolve) => setTimeout(resolve, readyDelayMs));
    await kubelet.idle();
    const still = await readPod(cp, namespace, 'bad');
    expect(conditionOf(still, 'Ready')).toBe('False');
    expect(statusOf(still, 'sidecar')).toMatchObject({ ready: false, imageID: '' });

    const stored = await readPod(cp, namespace, 'bad');
    await setImage(cp, stored!, 'sidecar', 'nginx:1.27');
    const fixed = await waitForPod(cp, namespace, 'bad', isReady);
    // The bad image never ran, so fixing it stops nothing: still one restart.
    expect(statusOf(fixed, 'sidecar')).toMatchObject({ image: 'nginx:1.27', imageID: imageIdOf('nginx:1.27'), ready: true, restartCount: 1 });
  });

  it('gives the same image spelled another way the same image ID, and still restarts the container', async () => {
    const created = await createPod(cp, newPod('same', [{ name: 'sidecar', image: 'nginx' }]));
    const before = await waitForPod(cp, namespace, 'same', isReady);
    await setImage(cp, created, 'sidecar', 'docker.io/library/nginx:latest');
    const after = await waitForPod(cp, namespace, 'same', (pod) => restartedOnce('sidecar')(pod) && isReady(pod));
    expect(statusOf(after, 'sidecar')).toMatchObject({ image: 'docker.io/library/nginx:latest', imageID: statusOf(before, 'sidecar').imageID });
    // Nothing to pull: ready the readiness delay after the restart, not the pull's 5 s more (whole seconds, as
    // the API server stores times; the margin is for a loaded machine's late timers).
    const startedAt = Date.parse((statusOf(after, 'sidecar').state as { running: { startedAt: string } }).running.startedAt);
    const readyAt = Date.parse(String(after?.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime));
    expect(readyAt - startedAt).toBeGreaterThanOrEqual(readyDelayMs - 1_000);
    expect(readyAt - startedAt).toBeLessThan(readyDelayMs + DEFAULT_PULL_DELAY_MS - 1_000);
  });

  it('confirms the deletion of a pod bound to a node', async () => {
    // Only a bound pod waits for its kubelet; the API server deletes an unbound one at once.
    await createPod(cp, newPod('doomed', [{ name: 'app', image: 'app:1' }], undefined, { nodeName: 'node-1', terminationGracePeriodSeconds: 3600 }));
    await waitForPod(cp, namespace, 'doomed', isReady);
    const deletions = kubelet.counters.deletions;
    const res = await cp.request('admin', 'DELETE', podPath(namespace, 'doomed'));
    expect(res.status).toBe(200);
    expect((JSON.parse(res.body) as Pod).metadata?.deletionTimestamp).toBeDefined();
    await waitForPod(cp, namespace, 'doomed', (pod) => pod === undefined);
    expect(kubelet.counters.deletions).toBe(deletions + 1);
  });

  it('counts what it did, with no errors on the way', async () => {
    await kubelet.idle();
    expect(kubelet.counters.podsStarted).toBe(6);
    // update, foreign-condition, bad (to bad and to good: one instance stopped), same.
    expect(kubelet.counters.restarts).toBe(5);
    expect(kubelet.counters.writes).toBeGreaterThanOrEqual(6 + 5);
    expect(errors).toEqual([]);
  });

  it('stop() ends its watch, timers and requests, even with a step pending', async () => {
    const other = 'kubelet-stop';
    await createNamespace(cp, other);
    await kubelet.idle();
    const count = (type: string) => process.getActiveResourcesInfo().filter((t) => t === type).length;
    const before = { timers: count('Timeout'), sockets: count('TCPSocketWrap') };
    const second = startTestKubelet(cp, { namespaces: [other], readyDelayMs: 3_600_000 });
    try {
      const created = await createPod(cp, { ...newPod('pending', [{ name: 'app', image: 'app:1' }]), metadata: { name: 'pending', namespace: other } });
      await waitForPod(cp, other, 'pending', isReady);
      await setImage(cp, created, 'app', 'app:2');
      await waitForPod(cp, other, 'pending', restartedOnce('app'));
      // The watch's socket is live (a TLS socket counts as TCPSocketWrap). The hour-long readiness timer is too, but
      // other timers of the process come and go meanwhile, so the timer count is only checked after stop().
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(count('TCPSocketWrap')).toBeGreaterThan(before.sockets);
    } finally {
      await second.stop();
    }
    // Other short-lived handles of the process (the harness's own requests) may still be closing: give them
    // a few seconds; the kubelet's hour-long timer or its watch would still be there.
    for (const deadline = Date.now() + 5_000; Date.now() < deadline && (count('Timeout') > before.timers || count('TCPSocketWrap') > before.sockets); ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(count('Timeout')).toBeLessThanOrEqual(before.timers);
    expect(count('TCPSocketWrap')).toBeLessThanOrEqual(before.sockets);
    // Nothing pending after stop: idle() answers at once, and stop() again is harmless.
    await second.idle();
    await second.stop();
    expect(conditionOf(await readPod(cp, other, 'pending'), 'Ready')).toBe('False');
  });

  it('redoes a status write refused for a concurrent change (409) from a fresh read, keeping that change', async () => {
    const other = 'kubelet-race';
    await createNamespace(cp, other);
    let raced = 0;
    // A writer that changes the pod just before the kubelet's first status write lands: a real 409, on cue.
    const racing: ControlPlane = {
      ...cp,
      request: async (user, method, path, body, contentType) => {
        if (method === 'PATCH' && path.endsWith('/status') && raced === 0) {
          raced++;
          const res = await cp.request('admin', 'PATCH', path.slice(0, -'/status'.length), { metadata: { labels: { raced: 'yes' } } }, 'application/merge-patch+json');
          expect(res.status).toBe(200);
        }
        return cp.request(user, method, path, body, contentType);
      },
    };
    const racer = startTestKubelet(racing, { namespaces: [other] });
    try {
      await createPod(cp, { ...newPod('raced', [{ name: 'app', image: 'app:1' }]), metadata: { name: 'raced', namespace: other } });
      const pod = await waitForPod(cp, other, 'raced', isReady);
      expect(pod?.metadata?.labels).toMatchObject({ raced: 'yes' });
      await racer.idle();
      expect(raced).toBe(1);
      expect(racer.counters).toMatchObject({ conflicts: 1, podsStarted: 1, errors: 0 });
    } finally {
      await racer.stop();
    }
  });

  it('starts a new pod only after startDelayMs', async () => {
    const other = 'kubelet-slow';
    await createNamespace(cp, other);
    const startDelayMs = 5_000;
    const slow = startTestKubelet(cp, { namespaces: [other], startDelayMs });
    try {
      const createdAt = Date.now();
      await createPod(cp, { ...newPod('slow', [{ name: 'app', image: 'app:1' }]), metadata: { name: 'slow', namespace: other } });
      await new Promise((resolve) => setTimeout(resolve, startDelayMs / 10));
      expect((await readPod(cp, other, 'slow'))?.status?.containerStatuses).toBeUndefined();
      await waitForPod(cp, other, 'slow', isReady);
      expect(Date.now() - createdAt).toBeGreaterThanOrEqual(startDelayMs);
    } finally {
      await slow.stop();
    }
  });

  it('never has more than writeConcurrency requests in flight', async () => {
    const other = 'kubelet-bounded';
    await createNamespace(cp, other);
    let inFlight = 0;
    let most = 0;
    const counting: ControlPlane = {
      ...cp,
      request: async (...args) => {
        inFlight++;
        most = Math.max(most, inFlight);
        try {
          return await cp.request(...args);
        } finally {
          inFlight--;
        }
      },
    };
    const bounded = startTestKubelet(counting, { namespaces: [other], writeConcurrency: 2, readyDelayMs: 0 });
    try {
      const names = Array.from({ length: 40 }, (_, i) => `pod-${i}`);
      const created = await Promise.all(names.map((name) => createPod(cp, { ...newPod(name, [{ name: 'app', image: 'app:1' }]), metadata: { name, namespace: other } })));
      await Promise.all(names.map((name) => waitForPod(cp, other, name, isReady)));
      await Promise.all(created.map((pod) => setImage(cp, pod, 'app', 'app:2')));
      await Promise.all(names.map((name) => waitForPod(cp, other, name, (pod) => restartedOnce('app')(pod) && isReady(pod))));
      await bounded.idle();
      expect(bounded.counters).toMatchObject({ podsStarted: 40, restarts: 40 });
      // Up to the bound, never past it (the watch's list goes through the same client, before any write).
      expect(most).toBe(2);
    } finally {
      await bounded.stop();
    }
  });

  it('keeps serving after the API server restarts, listing again when its version is too old to resume from', async () => {
    errors.length = 0;
    const relists = kubelet.counters.relists;
    // A write the kubelet's watch does not see, then a compaction past it:
    // the version the kubelet last saw is gone (410), so it must list again.
    await createNamespace(cp, 'kubelet-elsewhere');
    await cp.stopApiServer();
    await cp.compactEtcd();
    await cp.startApiServer();
    await createPod(cp, newPod('after-restart', [{ name: 'app', image: 'app:1' }]));
    await waitForPod(cp, namespace, 'after-restart', isReady);
    // The watch was cut off, and said so; then the list was taken again.
    expect(errors.length).toBeGreaterThan(0);
    expect(kubelet.counters.relists).toBeGreaterThanOrEqual(relists + 1);
  }, startTimeoutMs);
});
