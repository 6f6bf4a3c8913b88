/**
 * Kruise's e2e "SidecarSet HotUpgrade" upgrade scenarios
 * (test/e2e/apps/sidecarset_hotupgrade.go; rollout.md §7 scenarios 25 and
 * 26; 24, the injection, is in kruise-e2e-inject) on a real kube-apiserver:
 * pods injected by the local server's webhooks, the test kubelet restarting
 * containers whose image changed, and the status reconciler as `npm start`
 * composes it. Each scenario waits for what Kruise's waits for and asserts
 * what Kruise asserts; it also checks what Kruise's e2e leaves unchecked:
 * the flip is told on the pod (ResetContainerSucceed), and at no stored
 * moment is the working container the empty one.
 *
 * Where these depart from Kruise's: Kruise sleeps 5 s, 30 s or a minute
 * before each wait; here each wait is bounded instead, and a state that must
 * last (the failed image holding the second pod) is checked to still hold
 * after several more resyncs. Pods are created by hand (no Deployment controller).
 */
import { expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { watchPods } from '../../control-plane/pod-watch.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { hotContainersOf } from '../../lib/sidecarset/pod-state.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { baseSidecarSet, counts, deploymentPod, IMAGES, imageOf, sidecarAt, specOf } from '../../testkit/kruise-e2e.ts';
import { ScenarioStack } from './scenario-stack.ts';

const SCENARIO_TIMEOUT_MS = 180_000;
const NAMESPACES = ['hot-upgrade-image', 'hot-upgrade-failed-image'];

const scenario = new ScenarioStack({ reconcile: {}, kubelets: [{ namespaces: NAMESPACES, readyDelayMs: 300 }] });

/** Kruise's base set with only nginx-sidecar, HotUpgrade with busybox as the empty image, RollingUpdate. */
async function createHotSet(ns: string): Promise<SidecarSet> {
  const set = baseSidecarSet(ns);
  set.spec = { ...set.spec, updateStrategy: { type: 'RollingUpdate' }, containers: [{ ...sidecarAt(set), image: IMAGES.nginx, upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: IMAGES.busybox } }] };
  return scenario.createSet(set);
}

/** The working and the empty container of nginx-sidecar as the pod's annotation names them, with their images. */
function hotPair(pod: Pod): { working: string; workingImage?: string; empty: string; emptyImage?: string } {
  const { working, other } = hotContainersOf(pod, 'nginx-sidecar');
  return { working, workingImage: imageOf(pod, working), empty: other, emptyImage: imageOf(pod, other) };
}

async function resetEvents(ns: string): Promise<{ type: string; reason: string; message: string; involvedObject: { name: string } }[]> {
  const selector = encodeURIComponent('involvedObject.kind=Pod,reason=ResetContainerSucceed');
  const list = await scenario.cluster.admin<{ items: { type: string; reason: string; message: string; involvedObject: { name: string } }[] }>('GET', `/api/v1/namespaces/${ns}/events?fieldSelector=${selector}`);
  return list.items;
}

/** Watches the namespace's pods as an informer does and records any version whose working container holds the empty image. */
function watchWorkingNeverEmpty(ns: string): { stop: () => Promise<string[]> } {
  const problems: string[] = [];
  const check = (pod: Pod) => {
    const pair = hotPair(pod);
    if (pair.workingImage === IMAGES.busybox) problems.push(`${pod.metadata?.name}@${pod.metadata?.resourceVersion}: the working container ${pair.working} holds the empty image`);
  };
  const watch = watchPods(scenario.cluster.cp, [ns], {
    listed: (_namespace, pods) => {
      pods.forEach(check);
    },
    changed: (type, pod) => {
      if (type !== 'DELETED') check(pod);
    },
    failed: (message) => problems.push(`watch: ${message}`),
  });
  return {
    stop: async () => {
      await watch.stop();
      return problems;
    },
  };
}

describeWithControlPlane("Kruise's SidecarSet HotUpgrade e2e scenarios on a real API server", () => {
  scenario.install();

  it(
    '25. upgrade hot sidecar container image: the new image runs in nginx-sidecar-2, then back in nginx-sidecar-1; any other change is not upgradable',
    async () => {
      const ns = NAMESPACES[0] as string;
      await scenario.cluster.namespace(ns);
      const set = await createHotSet(ns);
      const name = set.metadata?.name ?? '';
      const [pod] = await scenario.cluster.createPods([deploymentPod(ns, 'deployment-test-0')]);
      expect(hotPair(pod as Pod)).toEqual({ working: 'nginx-sidecar-1', workingImage: IMAGES.nginx, empty: 'nginx-sidecar-2', emptyImage: IMAGES.busybox });
      const watch = watchWorkingNeverEmpty(ns);

      await scenario.cluster.updateSet(name, (s) => {
        sidecarAt(s).image = IMAGES.newNginx;
      });
      await scenario.cluster.waitForStatus(name, counts(1, 1, 1, 1));
      let [now] = await scenario.cluster.pods(ns);
      expect(hotPair(now as Pod)).toEqual({ working: 'nginx-sidecar-2', workingImage: IMAGES.newNginx, empty: 'nginx-sidecar-1', emptyImage: IMAGES.busybox });
      const annotations = now?.metadata?.annotations ?? {};
      expect([annotations['version.sidecarset.kruise.io/nginx-sidecar-1'], annotations['versionalt.sidecarset.kruise.io/nginx-sidecar-2']]).toEqual(['0', '0']);
      expect(Number(annotations['version.sidecarset.kruise.io/nginx-sidecar-2'])).toBeGreaterThan(1);

      await scenario.cluster.updateSet(name, (s) => {
        sidecarAt(s).image = IMAGES.nginx;
      });
      await scenario.cluster.waitForStatus(name, counts(1, 1, 1, 1));
      [now] = await scenario.cluster.pods(ns);
      expect(hotPair(now as Pod)).toEqual({ working: 'nginx-sidecar-1', workingImage: IMAGES.nginx, empty: 'nginx-sidecar-2', emptyImage: IMAGES.busybox });
      expect((await resetEvents(ns)).map((e) => [e.involvedObject.name, e.type, e.message])).toEqual([
        ['deployment-test-0', 'Normal', 'reset sidecar container image empty successfully'],
        ['deployment-test-0', 'Normal', 'reset sidecar container image empty successfully'],
      ]);

      // Anything but the image: not upgradable in place, as with ColdUpgrade.
      await scenario.cluster.updateSet(name, (s) => {
        sidecarAt(s).env = [{ name: 'PROXY', value: '127.0.0.1' }];
      });
      await scenario.cluster.waitForStatus(name, counts(1, 0, 0, 1));
      await scenario.cluster.expectStatusHolds(name, counts(1, 0, 0, 1));
      expect(await watch.stop()).toEqual([]);
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    '26. hot failed image: the bad image holds the rollout at one pod; the fix goes into the failed container and both pods end on nginx-sidecar-2',
    async () => {
      const ns = NAMESPACES[1] as string;
      await scenario.cluster.namespace(ns);
      const set = await createHotSet(ns);
      const name = set.metadata?.name ?? '';
      const pods = await scenario.cluster.createPods([deploymentPod(ns, 'deployment-test-0'), deploymentPod(ns, 'deployment-test-1')]);
      for (const pod of pods) expect(hotPair(pod)).toEqual({ working: 'nginx-sidecar-1', workingImage: IMAGES.nginx, empty: 'nginx-sidecar-2', emptyImage: IMAGES.busybox });
      const watch = watchWorkingNeverEmpty(ns);

      await scenario.cluster.updateSet(name, (s) => {
        sidecarAt(s).image = IMAGES.invalid;
      });
      await scenario.cluster.waitForStatus(name, counts(2, 1, 0, 1));
      await scenario.cluster.expectStatusHolds(name, counts(2, 1, 0, 1));
      // The pod with the bad image still runs the old version in its other container.
      const failed = (await scenario.cluster.pods(ns)).find((p) => imageOf(p, 'nginx-sidecar-2') === IMAGES.invalid);
      expect(failed === undefined ? undefined : imageOf(failed, 'nginx-sidecar-1')).toBe(IMAGES.nginx);

      await scenario.cluster.updateSet(name, (s) => {
        sidecarAt(s).image = IMAGES.newNginx;
      });
      await scenario.cluster.waitForStatus(name, counts(2, 2, 2, 2));
      for (const pod of await scenario.cluster.pods(ns)) {
        expect(hotPair(pod)).toEqual({ working: 'nginx-sidecar-2', workingImage: IMAGES.newNginx, empty: 'nginx-sidecar-1', emptyImage: IMAGES.busybox });
      }
      expect(await watch.stop()).toEqual([]);
      expect(specOf(await scenario.cluster.getSet(name)).containers?.[0]?.image).toBe(IMAGES.newNginx);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
