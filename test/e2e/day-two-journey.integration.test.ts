/**
 * The first week of day-2 work as one journey, on the real kube-apiserver
 * with the test kubelet and the local stack as `npm start` composes it:
 * an operator rolls a sidecar forward, pauses, holds half the pods with a
 * partition, resumes, rolls back to an image whose command carries shell
 * characters, while a tenant breaks one pod's annotation and a bad image is
 * pushed; then a HotUpgrade sidecar is rolled forward and back.
 *
 * Each step waits (bounded) for what an operator would wait for, the four
 * counts of `kubectl get sidecarset`, and checks what an operator would be
 * told: the Events on the SidecarSet, the pod's condition. The rollout's
 * trust issues this journey was written against: a rollback wedged on the
 * revision write (the data re-encoded by the API server), one pod's broken
 * annotation stopped the whole set, a stuck image was never reported.
 */
import { expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { hotContainersOf } from '../../lib/sidecarset/pod-state.ts';
import { CONDITION_SIDECARSET_UPGRADABLE } from '../../lib/rollout/upgradable-condition.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { podPath } from '../../testkit/cluster-pods.ts';
import { baseSidecarSet, conditionOf, counts, deploymentPod, IMAGES, imageOf, sidecarAt, specOf } from '../../testkit/kruise-e2e.ts';
import { ScenarioStack } from './scenario-stack.ts';

const JOURNEY_TIMEOUT_MS = 600_000;
const NS = 'day-two';
const HOT_NS = 'day-two-hot';
/** Every character Go's encoder escapes in JSON, and text it leaves as is. */
const SHELL_COMMAND = ['sh', '-c', 'echo a && echo b > /tmp/x < /dev/null # \u2028\u2029 café ☕'];
/** How long a rollout may make no progress before it is reported stalled, short for the test. */
const STALL_MS = 4_000;

const scenario = new ScenarioStack({ reconcile: { env: { ROLLOUT_STALL_MS: String(STALL_MS) } }, kubelets: [{ namespaces: [NS, HOT_NS], readyDelayMs: 300 }], namespaces: [NS, HOT_NS] });

function logLines(fragment: string): string[] {
  return scenario.stack.logs.filter((line) => line.includes(fragment));
}

async function podEvents(ns: string): Promise<{ type: string; reason: string; message: string }[]> {
  const list = await scenario.cluster.admin<{ items: { type: string; reason: string; message: string }[] }>('GET', `/api/v1/namespaces/${ns}/events`);
  return list.items;
}

async function setEvents(setName: string): Promise<{ type: string; reason: string; message: string }[]> {
  const selector = encodeURIComponent(`involvedObject.kind=SidecarSet,involvedObject.name=${setName}`);
  const list = await scenario.cluster.admin<{ items: { type: string; reason: string; message: string }[] }>('GET', `/api/v1/events?fieldSelector=${selector}`);
  return list.items;
}

/** Waits (bounded) for an Event on the set whose reason and message match; throws with the set's Events seen. */
async function waitForSetEvent(setName: string, reason: string, test: (message: string) => boolean, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await setEvents(setName);
    const hit = events.find((event) => event.reason === reason && test(event.message));
    if (hit !== undefined) return hit.message;
    if (Date.now() > deadline) throw new Error(`SidecarSet ${setName}: no matching ${reason} Event within ${timeoutMs} ms; seen: ${JSON.stringify(events.map((e) => [e.reason, e.message]))}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function images(pods: readonly Pod[], container: string): (string | undefined)[] {
  return pods.map((pod) => imageOf(pod, container));
}

describeWithControlPlane('the day-2 journey of an operator and a tenant on a real API server', () => {
  scenario.install();

  it(
    'forward, pause, partition, resume, a rollback with shell characters, a broken pod, a bad image: every step lands and is told',
    async () => {
      const base = baseSidecarSet(NS);
      base.metadata = { ...base.metadata, name: 'journey' };
      base.spec = {
        ...base.spec,
        containers: [{ ...sidecarAt(base), command: SHELL_COMMAND, env: [{ name: 'NOTE', value: '<b>&amp;</b> \u2028 naïve' }] }],
        patchPodMetadata: [{ patchPolicy: 'MergePatchJson', annotations: { 'journey.example.com/config': '{"sidecar":1}' } }],
        updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 },
      };
      const set = await scenario.cluster.createSet(base);
      const name = set.metadata?.name ?? '';
      await scenario.cluster.createPods(Array.from({ length: 4 }, (_, i) => deploymentPod(NS, `app-${i}`)));
      await scenario.cluster.waitForStatus(name, counts(4, 4, 4, 4));

      // Forward.
      await scenario.cluster.updateSet(name, (s) => {
        sidecarAt(s).image = IMAGES.newNginx;
      });
      await scenario.cluster.waitForStatus(name, counts(4, 4, 4, 4));
      expect(images(await scenario.cluster.pods(NS), 'nginx-sidecar')).toEqual(Array(4).fill(IMAGES.newNginx));

      // Pause, then change the image: nothing moves.
      await scenario.cluster.updateSet(name, (s) => {
        specOf(s).updateStrategy = { ...specOf(s).updateStrategy, paused: true };
      });
      await scenario.cluster.updateSet(name, (s) => {
        sidecarAt(s).image = IMAGES.busybox;
      });
      await scenario.cluster.waitForStatus(name, counts(4, 0, 0, 4));
      await scenario.cluster.expectStatusHolds(name, counts(4, 0, 0, 4));

      // Resume with a partition holding half the pods, then resume fully.
      await scenario.cluster.updateSet(name, (s) => {
        specOf(s).updateStrategy = { ...specOf(s).updateStrategy, paused: false, partition: 2 };
      });
      await scenario.cluster.waitForStatus(name, counts(4, 2, 2, 4));
      await scenario.cluster.expectStatusHolds(name, counts(4, 2, 2, 4));
      await scenario.cluster.updateSet(name, (s) => {
        specOf(s).updateStrategy = { ...specOf(s).updateStrategy, partition: 0 };
      });
      await scenario.cluster.waitForStatus(name, counts(4, 4, 4, 4));

      // Roll back to the previous image: its revision exists, with the shell characters in its data.
      await scenario.cluster.updateSet(name, (s) => {
        sidecarAt(s).image = IMAGES.newNginx;
      });
      await scenario.cluster.waitForStatus(name, counts(4, 4, 4, 4));
      expect(images(await scenario.cluster.pods(NS), 'nginx-sidecar')).toEqual(Array(4).fill(IMAGES.newNginx));
      const rolledBack = await scenario.cluster.getSet(name);
      const revisions = await scenario.cluster.revisions(name);
      const latest = revisions.find((revision) => revision.metadata?.name === rolledBack.status?.latestRevision);
      expect(latest?.revision).toBe(Math.max(...revisions.map((revision) => revision.revision ?? 0)));
      expect(logLines('register the revision')).toEqual([]);

      // A tenant breaks one pod's annotation; the next rollout skips that pod only and says so.
      await scenario.cluster.admin('PATCH', podPath(NS, 'app-1'), { metadata: { annotations: { 'journey.example.com/config': 'not json {' } } }, 'application/merge-patch+json');
      await scenario.cluster.updateSet(name, (s) => {
        sidecarAt(s).image = IMAGES.nginx;
      });
      await scenario.cluster.waitForStatus(name, counts(4, 3, 3, 4));
      const pods = await scenario.cluster.pods(NS);
      expect(images(pods, 'nginx-sidecar')).toEqual([IMAGES.nginx, IMAGES.newNginx, IMAGES.nginx, IMAGES.nginx]);
      const failed = await waitForSetEvent(name, 'PodUpdateFailed', (message) => message.includes(`${NS}/app-1`));
      expect(failed).toMatch(/json|JSON/);
      const broken = await scenario.cluster.waitForPodState(NS, 'app-1', (pod) => conditionOf(pod, CONDITION_SIDECARSET_UPGRADABLE)?.status === 'False', 'told it is not upgradable');
      expect(conditionOf(broken, CONDITION_SIDECARSET_UPGRADABLE)?.message ?? '').toContain('journey.example.com/config');

      // The tenant fixes the annotation: the pod is rolled.
      await scenario.cluster.admin('PATCH', podPath(NS, 'app-1'), { metadata: { annotations: { 'journey.example.com/config': '{}' } } }, 'application/merge-patch+json');
      await scenario.cluster.waitForStatus(name, counts(4, 4, 4, 4));

      // A bad image: the first pod cannot pull it, the rollout stalls and says why, naming the pod.
      await scenario.cluster.updateSet(name, (s) => {
        sidecarAt(s).image = IMAGES.invalid;
      });
      const stalled = await waitForSetEvent(name, 'RolloutStalled', (message) => message.includes('ImagePullBackOff') || message.includes('ErrImagePull'), STALL_MS + 60_000);
      expect(stalled).toMatch(/app-\d/);
      const stuck = await scenario.cluster.getSet(name);
      expect(stuck.status?.updatedPods).toBe(1);
      expect(stuck.status?.updatedReadyPods).toBe(0);
      // No RolloutFinished while a pod is stuck.
      expect((await setEvents(name)).filter((event) => event.reason === 'RolloutFinished' && event.message.includes(IMAGES.invalid))).toEqual([]);

      // Rolling back from the bad image heals the stuck pod.
      await scenario.cluster.updateSet(name, (s) => {
        sidecarAt(s).image = IMAGES.nginx;
      });
      await scenario.cluster.waitForStatus(name, counts(4, 4, 4, 4));
      expect(images(await scenario.cluster.pods(NS), 'nginx-sidecar')).toEqual(Array(4).fill(IMAGES.nginx));
      expect(logLines('register the revision')).toEqual([]);
      expect((await podEvents(NS)).filter((event) => event.type === 'Warning' && event.reason === 'FailedCreate')).toEqual([]);
    },
    JOURNEY_TIMEOUT_MS,
  );

  it(
    'a HotUpgrade sidecar with shell characters rolls forward and back, the working container never the empty one',
    async () => {
      const base = baseSidecarSet(HOT_NS);
      base.metadata = { ...base.metadata, name: 'journey-hot' };
      base.spec = {
        ...base.spec,
        initContainers: [],
        containers: [{ ...sidecarAt(base), command: SHELL_COMMAND, upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: IMAGES.busybox } }],
        updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 },
      };
      const set: SidecarSet = await scenario.cluster.createSet(base);
      const name = set.metadata?.name ?? '';
      await scenario.cluster.createPods([deploymentPod(HOT_NS, 'hot-0'), deploymentPod(HOT_NS, 'hot-1')]);
      await scenario.cluster.waitForStatus(name, counts(2, 2, 2, 2));

      for (const image of [IMAGES.newNginx, IMAGES.nginx, IMAGES.newNginx]) {
        await scenario.cluster.updateSet(name, (s) => {
          sidecarAt(s).image = image;
        });
        await scenario.cluster.waitForStatus(name, counts(2, 2, 2, 2), 120_000);
        for (const pod of await scenario.cluster.pods(HOT_NS)) {
          const { working, other } = hotContainersOf(pod, 'nginx-sidecar');
          expect(imageOf(pod, working)).toBe(image);
          // Flipped after the swap: the idle container goes back to the empty image.
          await scenario.cluster.waitForPodState(HOT_NS, pod.metadata?.name ?? '', (p) => imageOf(p, other) === IMAGES.busybox, 'flipped');
        }
      }
      expect(logLines('register the revision')).toEqual([]);
    },
    JOURNEY_TIMEOUT_MS,
  );
});
