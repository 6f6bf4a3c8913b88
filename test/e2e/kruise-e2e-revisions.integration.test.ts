/**
 * Kruise's e2e revision scenarios (test/e2e/apps/sidecarset.go; rollout.md
 * §7 scenarios 20 to 23) on a real kube-apiserver: the ControllerRevision
 * history the reconciler keeps in kruise-system, and the revisions the pod
 * webhook injects (injectionStrategy.revision, Always and Partial). Pods are
 * created through the API server and injected by the local server's
 * webhooks; the test kubelet runs them; the reconciler is the status loop as
 * `npm start` composes it (a resync every second, an admitted SidecarSet
 * change at once, in-flight sets requeued every REQUEUE_AFTER_MS).
 *
 * One difference in timing, not in outcome: the reconciler trims the history
 * at the end of a set's reconcile, just after writing its status (Kruise trims
 * just before), so for a moment after observedGeneration catches up an
 * eleventh revision may still be listed; the checks read the list once it
 * has settled (within a bounded wait) rather than at that instant.
 */
import { expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { isObject } from '../../lib/kube/json.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { LABEL_CUSTOM_VERSION, type ControllerRevision } from '../../lib/sidecarset/revisions.ts';
import { recordedEntry } from '../../lib/sidecarset/pod-annotations.ts';
import { ANNOTATION_HASH, type SidecarSet } from '../../lib/sidecarset/types.ts';
import { baseSidecarSet, counts, deploymentPod, imageOf, sidecarAt, specOf } from '../../testkit/kruise-e2e.ts';
import { ScenarioStack } from './scenario-stack.ts';

const SCENARIO_TIMEOUT_MS = 180_000;
const NAMESPACES = ['history', 'history-data', 'injection-revision', 'canary'];

const scenario = new ScenarioStack({ reconcile: {}, kubelets: [{ namespaces: NAMESPACES, readyDelayMs: 300 }], namespaces: NAMESPACES });

function named(set: SidecarSet, name: string, labels?: Record<string, string>): SidecarSet {
  return { ...set, metadata: { ...set.metadata, name, ...(labels ? { labels } : {}) } };
}

/** The revision's recorded spec (`data.spec`); throws when it has none. */
function recordedSpec(revision: ControllerRevision): Record<string, unknown> {
  const spec = isObject(revision.data) ? revision.data.spec : undefined;
  if (!isObject(spec)) throw new Error(`revision ${revision.metadata?.name ?? ''} has no data.spec: ${JSON.stringify(revision.data)}`);
  return spec;
}

/**
 * Kruise's revisionChecker: `count` revisions, each recording volumes,
 * containers, initContainers and imagePullSecrets, in `order` of revision
 * numbers when given. Waits (bounded) for the reconcile's history trim to land.
 */
async function expectRevisions(setName: string, count: number, order?: number[]): Promise<ControllerRevision[]> {
  const deadline = Date.now() + 10_000;
  let list = await scenario.cluster.revisions(setName);
  while (list.length !== count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    list = await scenario.cluster.revisions(setName);
  }
  expect(list).toHaveLength(count);
  for (const revision of list) expect(Object.keys(recordedSpec(revision))).toEqual(expect.arrayContaining(['volumes', 'containers', 'initContainers', 'imagePullSecrets']));
  if (order !== undefined) expect(list.map((r) => r.revision)).toEqual(order);
  return list;
}

function sidecarImages(pods: readonly Pod[], image: string): number {
  return pods.flatMap((p) => p.spec?.containers ?? []).filter((c) => c.image === image).length;
}

describeWithControlPlane("Kruise's SidecarSet revision e2e scenarios on a real API server", () => {
  scenario.install();

  it(
    '20. history revision checker: 15 imagePullSecrets versions keep the newest 10 revisions; going back to an old spec renumbers its revision',
    async () => {
      const name = 'e2e-test-for-history-revisions';
      const base = named(baseSidecarSet('history'), name);
      specOf(base).imagePullSecrets = [{ name: 'secret-1' }];
      await scenario.createSet(base);
      await scenario.cluster.waitForReconcile(name);
      await expectRevisions(name, 1);

      for (let i = 2; i <= 15; i++) {
        await scenario.cluster.updateSet(name, (s) => {
          specOf(s).imagePullSecrets = [{ name: `secret-${i}` }];
        });
        await scenario.cluster.waitForReconcile(name);
      }
      await expectRevisions(name, 10, [6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);

      // Revision 12's spec again: that revision is reused (same name) and becomes number 16.
      const twelve = (await scenario.cluster.revisions(name)).find((r) => r.revision === 12);
      await scenario.cluster.updateSet(name, (s) => {
        specOf(s).imagePullSecrets = [{ name: 'secret-12' }];
      });
      const stored = await scenario.cluster.waitForReconcile(name);
      const list = await expectRevisions(name, 10, [6, 7, 8, 9, 10, 11, 13, 14, 15, 16]);
      expect(list.at(-1)?.metadata?.name).toBe(twelve?.metadata?.name);
      expect(stored.status?.latestRevision).toBe(twelve?.metadata?.name);
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    '21. history revision data checker: each revision records its own patchPodMetadata',
    async () => {
      const name = 'e2e-test-for-history-revision-data';
      const base = named(baseSidecarSet('history-data'), name);
      specOf(base).imagePullSecrets = [{ name: 'secret-1' }];
      specOf(base).patchPodMetadata = [{ patchPolicy: 'Retain', annotations: { 'sidecarset.kruise.io/test': 'version-1' } }];
      await scenario.createSet(base);
      await scenario.cluster.waitForReconcile(name);

      await scenario.cluster.updateSet(name, (s) => {
        specOf(s).patchPodMetadata = [{ patchPolicy: 'Retain', annotations: { 'sidecarset.kruise.io/test': 'version-2' } }];
      });
      await scenario.cluster.waitForReconcile(name);
      const list = await expectRevisions(name, 2);
      expect(list.map((r) => recordedSpec(r).patchPodMetadata)).toEqual([
        [{ patchPolicy: 'Retain', annotations: { 'sidecarset.kruise.io/test': 'version-1' } }],
        [{ patchPolicy: 'Retain', annotations: { 'sidecarset.kruise.io/test': 'version-2' } }],
      ]);
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    '22. injectionStrategy.revision: a paused set injects the revision of customVersion 3 into a new pod; unpaused, the pod is rolled to the newest',
    async () => {
      const name = 'e2e-test-for-injection-strategy-revision';
      const tags = ['latest', '1.21.1', '1.21', '1.20.1', '1.20', '1.19.10'];
      const nginx = (tag: string) => `nginx:${tag}`;
      const base = named(baseSidecarSet('injection-revision'), name, { app: 'sidecar', [LABEL_CUSTOM_VERSION]: '0' });
      specOf(base).updateStrategy = { ...specOf(base).updateStrategy, paused: true };
      sidecarAt(base).image = nginx(tags[0]!);
      await scenario.createSet(base);
      await scenario.cluster.waitForReconcile(name);
      for (let i = 1; i < 6; i++) {
        await scenario.cluster.updateSet(name, (s) => {
          sidecarAt(s).image = nginx(tags[i]!);
          s.metadata!.labels![LABEL_CUSTOM_VERSION] = String(i);
        });
        await scenario.cluster.waitForReconcile(name);
        expect(await scenario.cluster.revisions(name)).toHaveLength(i + 1);
      }

      const pick = 3;
      const list = await scenario.cluster.revisions(name);
      expect(list).toHaveLength(6);
      // Each revision carries the custom version the set had when it was registered.
      expect(list.map((r) => r.metadata?.labels?.[LABEL_CUSTOM_VERSION])).toEqual(['0', '1', '2', '3', '4', '5']);
      await scenario.cluster.updateSet(name, (s) => {
        specOf(s).injectionStrategy = { revision: { customVersion: String(pick), policy: 'Always' } };
      });

      const [pod] = await scenario.cluster.createPods([deploymentPod('injection-revision', 'deployment-test-0')]);
      expect(pod?.spec?.containers[0]?.image).toBe(nginx(tags[pick]!));
      expect(recordedEntry(pod?.metadata?.annotations?.[ANNOTATION_HASH], name)?.controllerRevision).toBe(list[pick]?.metadata?.name);
      // Not in Kruise's scenario: while paused, the pod on the old revision is left alone.
      await scenario.cluster.waitForStatus(name, counts(1, 0, 0, 1));
      await scenario.cluster.expectStatusHolds(name, counts(1, 0, 0, 1));
      expect((await scenario.cluster.pods('injection-revision'))[0]?.spec?.containers[0]?.image).toBe(nginx(tags[pick]!));

      await scenario.cluster.updateSet(name, (s) => {
        specOf(s).updateStrategy = { ...specOf(s).updateStrategy, paused: false };
      });
      await scenario.cluster.waitForStatus(name, counts(1, 1, 1, 1));
      const [rolled] = await scenario.cluster.pods('injection-revision');
      expect(rolled?.spec?.containers[0]?.image).toBe(nginx(tags[5]!));
      expect(recordedEntry(rolled?.metadata?.annotations?.[ANNOTATION_HASH], name)?.controllerRevision).toBe(list[5]?.metadata?.name);
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    '23. canary upgrade (Partial): a change that cannot roll in place reaches new canary pods only; new stable pods get the pinned stable revision',
    async () => {
      const ns = 'canary';
      const name = 'e2e-test-for-canary-upgrade';
      const [stableImage, canaryImage] = ['nginx:1.20.1', 'nginx:1.21.1'];
      const base = named(baseSidecarSet(ns), name, { [LABEL_CUSTOM_VERSION]: '0' });
      sidecarAt(base).image = stableImage;
      await scenario.createSet(base);
      await scenario.cluster.waitForReconcile(name);
      const stable = (i: number) => deploymentPod(ns, `deployment-test-stable-${i}`, { labels: { version: 'stable' }, main: { imagePullPolicy: 'IfNotPresent' } });
      const canary = (i: number) => deploymentPod(ns, `deployment-test-canary-${i}`, { labels: { version: 'canary' }, main: { imagePullPolicy: 'IfNotPresent' } });
      await scenario.cluster.createPods([stable(0), canary(0)]);
      for (const version of ['stable', 'canary']) {
        const pods = await scenario.cluster.pods(ns, { app: 'sidecarset', version });
        expect(pods).toHaveLength(1);
        expect([sidecarImages(pods, stableImage), sidecarImages(pods, canaryImage)]).toEqual([1, 0]);
      }

      await scenario.cluster.updateSet(name, (s) => {
        sidecarAt(s).image = canaryImage;
        // An env change: no pod can be updated in place.
        sidecarAt(s).env = [{ name: 'SOME_ENV', value: 'SOME_VAL' }];
        specOf(s).updateStrategy = { ...specOf(s).updateStrategy, selector: { matchLabels: { version: 'canary' } } };
        specOf(s).injectionStrategy = { revision: { customVersion: '0', policy: 'Partial' } };
        s.metadata!.labels = { [LABEL_CUSTOM_VERSION]: '1' };
      });
      await scenario.cluster.waitForStatus(name, counts(2, 0, 0, 2));

      await scenario.cluster.createPods([stable(1), canary(1)]);
      const stablePods = await scenario.cluster.pods(ns, { app: 'sidecarset', version: 'stable' });
      expect(stablePods).toHaveLength(2);
      expect([sidecarImages(stablePods, stableImage), sidecarImages(stablePods, canaryImage)]).toEqual([2, 0]);
      const canaryPods = await scenario.cluster.pods(ns, { app: 'sidecarset', version: 'canary' });
      expect(canaryPods).toHaveLength(2);
      expect([sidecarImages(canaryPods, stableImage), sidecarImages(canaryPods, canaryImage)]).toEqual([1, 1]);
      // The new canary pod is the one with the new sidecar (and its env).
      const fresh = canaryPods.find((p) => p.metadata?.name === 'deployment-test-canary-1');
      expect(imageOf(fresh!, 'nginx-sidecar')).toBe(canaryImage);
      expect(fresh?.spec?.containers.find((c) => c.name === 'nginx-sidecar')?.env).toEqual(expect.arrayContaining([{ name: 'SOME_ENV', value: 'SOME_VAL' }]));
      // Not in Kruise's scenario: each new pod records the revision it was injected from (custom version 0, or the newest).
      const [pinned, newest] = await scenario.cluster.revisions(name);
      expect([pinned?.metadata?.labels?.[LABEL_CUSTOM_VERSION], newest?.metadata?.labels?.[LABEL_CUSTOM_VERSION]]).toEqual(['0', '1']);
      const revisionOf = (pod: Pod | undefined) => recordedEntry(pod?.metadata?.annotations?.[ANNOTATION_HASH], name)?.controllerRevision;
      expect(revisionOf(fresh)).toBe(newest?.metadata?.name);
      expect(revisionOf(stablePods.find((p) => p.metadata?.name === 'deployment-test-stable-1'))).toBe(pinned?.metadata?.name);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
