/**
 * Native sidecars rolled in place (sidecarset.md "Native sidecars rolled in
 * place"; Kruise refuses such a set, kruise#1671) on a real kube-apiserver:
 * the set admitted through the local server's webhooks, pods created through
 * the API server and injected with the native sidecar, the test kubelet
 * running them and restarting a native sidecar whose image changed (as
 * Kubernetes' kubelet does: "Restart running sidecar containers which have
 * had their definition changed"), and the status reconciler as `npm start`
 * composes it rolling the new image in place. Every stored version of every
 * pod is watched (testkit/faults/rollout-recorder.ts): at no moment are
 * more than maxUnavailable updated pods unavailable, and each pod's native
 * sidecar image is written once.
 */
import { expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import type { Container, JsonObject, Pod } from '../../lib/kube/types.ts';
import { parseHashAnnotation } from '../../lib/sidecarset/pod-annotations.ts';
import { ANNOTATION_HASH, type SidecarSet } from '../../lib/sidecarset/types.ts';
import { recordRollout } from '../../testkit/faults/rollout-recorder.ts';
import { APP_LABELS, counts, deploymentPod, IMAGES, specOf } from '../../testkit/kruise-e2e.ts';
import { ScenarioStack } from './scenario-stack.ts';

const NS = 'native-sidecars';
const PODS = 5;
const MAX_UNAVAILABLE = 2;

const scenario = new ScenarioStack({ reconcile: {}, kubelets: [{ namespaces: [NS], readyDelayMs: 500 }] });

const initContainer = (pod: Pod, name: string): Container | undefined => pod.spec?.initContainers?.find((c) => c.name === name);
const initStatus = (pod: Pod, name: string): JsonObject | undefined => (pod.status?.initContainerStatuses as JsonObject[] | undefined)?.find((s) => s.name === name);

describeWithControlPlane('native sidecars rolled in place on a real API server', () => {
  scenario.install();

  it(
    'a set with a native sidecar: pods injected, its image changed, pods restarted in place within maxUnavailable, status counts right; the plain init container untouched',
    async () => {
      await scenario.cluster.namespace(NS);
      const set = await scenario.createSet({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: 'native-mesh' },
        spec: {
          namespace: NS,
          selector: { matchLabels: { ...APP_LABELS } },
          initContainers: [
            { name: 'setup', image: IMAGES.busybox, command: ['/bin/sh', '-c', 'true'] },
            { name: 'proxy', image: IMAGES.nginx, restartPolicy: 'Always', command: ['nginx', '-g', 'daemon off;'] },
          ],
          updateStrategy: { type: 'RollingUpdate', maxUnavailable: MAX_UNAVAILABLE },
        },
      } satisfies SidecarSet);
      const name = set.metadata?.name ?? '';

      const created = await scenario.cluster.createPods(Array.from({ length: PODS }, (_, i) => deploymentPod(NS, `native-${i}`)));
      for (const pod of created) {
        expect(initContainer(pod, 'proxy')).toMatchObject({ image: IMAGES.nginx, restartPolicy: 'Always' });
        expect(initContainer(pod, 'setup')?.image).toBe(IMAGES.busybox);
      }
      await scenario.cluster.waitForStatus(name, counts(PODS, PODS, PODS, PODS));
      const uids = new Map((await scenario.cluster.pods(NS)).map((p) => [p.metadata?.name, p.metadata?.uid]));

      // The new image, held by paused until every stored version of the pods is being watched
      // (paused is no part of the hash: unpausing leaves the hash the recorder judges by).
      const target = await scenario.cluster.updateSet(name, (s) => {
        const proxy = specOf(s).initContainers?.find((c) => c.name === 'proxy');
        if (proxy !== undefined) proxy.image = IMAGES.newNginx;
        specOf(s).updateStrategy = { ...specOf(s).updateStrategy, paused: true };
      });
      const recorder = await recordRollout(scenario.cluster.cp, NS, target, MAX_UNAVAILABLE, 'proxy');
      try {
        await scenario.cluster.waitForStatus(name, counts(PODS, 0, 0, PODS));
        await scenario.cluster.expectStatusHolds(name, counts(PODS, 0, 0, PODS));
        await scenario.cluster.updateSet(name, (s) => {
          specOf(s).updateStrategy = { ...specOf(s).updateStrategy, paused: false };
        });
        const done = await scenario.cluster.waitForStatus(name, counts(PODS, PODS, PODS, PODS), 120_000);
        expect(done.metadata?.annotations?.[ANNOTATION_HASH]).toBe(target.metadata?.annotations?.[ANNOTATION_HASH]);
        await recorder.caughtUp();

        expect(recorder.violations).toEqual([]);
        expect(recorder.gaps).toEqual([]);
        expect(recorder.maxUnavailableSeen()).toBeGreaterThan(0);
        expect(recorder.maxUnavailableSeen()).toBeLessThanOrEqual(MAX_UNAVAILABLE);
        expect(recorder.imageChanges()).toEqual({ pods: PODS, repeated: 0 });
        expect(recorder.deleted()).toEqual([]);

        const pods = await scenario.cluster.pods(NS);
        expect(pods).toHaveLength(PODS);
        for (const pod of pods) {
          // The same pod, its native sidecar restarted once with the new image; the plain init container as it was.
          expect(pod.metadata?.uid).toBe(uids.get(pod.metadata?.name));
          expect(initContainer(pod, 'proxy')?.image).toBe(IMAGES.newNginx);
          expect(initStatus(pod, 'proxy')).toMatchObject({ image: IMAGES.newNginx, ready: true, restartCount: 1 });
          expect(initContainer(pod, 'setup')?.image).toBe(IMAGES.busybox);
          expect(initStatus(pod, 'setup')).toMatchObject({ restartCount: 0, state: { terminated: { reason: 'Completed' } } });
          const entry = parseHashAnnotation(ANNOTATION_HASH, pod.metadata?.annotations?.[ANNOTATION_HASH]).get(name);
          expect(entry?.hash).toBe(target.metadata?.annotations?.[ANNOTATION_HASH]);
          expect(entry?.sidecarList).toEqual(['proxy']);
        }
      } finally {
        await recorder.stop();
      }
    },
    300_000,
  );
});
