/**
 * Kruise's e2e "inject pod sidecar with canary sidecarSet"
 * (test/e2e/apps/v1beta1/sidecarset.go of v1.9.0) on a real kube-apiserver:
 * a NotUpdate base set with one nginx sidecar (1.20.1) and a NotUpdate
 * canary of it (1.21.1) selecting the same pods, both
 * admitted by the validating webhook (the canary shares its container name
 * with its base); two pods created through the API server get the canary's
 * sidecar, and the reconciler (as `npm start` composes it) reports the base
 * with no pods and the canary with both.
 *
 * Where this departs from Kruise's: the two pods are created by hand (no
 * Deployment controller), and the canary's status is awaited on matchedPods
 * and updatedPods, the counts Kruise's spec names (its ready counts are left
 * at 0 in the spec's expectation; here they are whatever the test kubelet
 * makes of the pods, and are not compared).
 */
import { expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { baseSidecarSet, counts, deploymentPod, imageOf } from '../../testkit/kruise-e2e.ts';
import { ScenarioStack } from './scenario-stack.ts';

const NS = 'canary';
const STABLE = 'nginx:1.20.1';
const CANARY = 'nginx:1.21.1';
const TIMEOUT_MS = 180_000;

const scenario = new ScenarioStack({ reconcile: {}, kubelets: [{ namespaces: [NS], readyDelayMs: 300 }], namespaces: [NS] });

/** NewBaseSidecarSet(ns) as the spec trims it: no init container, the nginx sidecar alone, NotUpdate (in v1alpha1, the version the scenario helpers write). */
function nginxSet(name: string, image: string, annotations: Record<string, string> = {}): SidecarSet {
  const base = baseSidecarSet(NS);
  const nginx = { ...(base.spec?.containers?.[0] ?? { name: 'nginx-sidecar' }), image };
  return {
    ...base,
    metadata: { name, labels: { app: 'sidecar' }, annotations },
    spec: {
      namespace: NS,
      selector: base.spec?.selector ?? {},
      containers: [nginx],
      updateStrategy: { type: 'NotUpdate' },
    },
  };
}

describeWithControlPlane("Kruise's canary SidecarSet e2e scenario on a real API server", () => {
  scenario.install();

  it(
    'inject pod sidecar with canary sidecarSet: every pod gets the canary image, the base matches none, the canary both',
    async () => {
      const base = await scenario.createSet(nginxSet('test-sidecarset-stable', STABLE));
      const baseName = base.metadata?.name ?? '';
      await scenario.createSet(nginxSet('test-sidecarset-canary', CANARY, { 'apps.kruise.io/sidecarset-canary': 'true', 'apps.kruise.io/sidecarset-base': baseName }));

      const pods = await scenario.cluster.createPods([deploymentPod(NS, 'deployment-test-stable-0', { labels: { version: 'stable' } }), deploymentPod(NS, 'deployment-test-stable-1', { labels: { version: 'stable' } })]);
      expect(pods).toHaveLength(2);
      const images = pods.map((pod) => imageOf(pod, 'nginx-sidecar'));
      expect(images).toEqual([CANARY, CANARY]);

      await scenario.cluster.waitForStatus(baseName, counts(0, 0, 0, 0));
      const deadline = Date.now() + 60_000;
      for (;;) {
        const canary = await scenario.cluster.getSet('test-sidecarset-canary');
        const status = canary.status ?? {};
        if (status.observedGeneration === canary.metadata?.generation && status.matchedPods === 2 && status.updatedPods === 2) break;
        if (Date.now() > deadline) throw new Error(`the canary never reached matchedPods 2, updatedPods 2: ${JSON.stringify(status)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    TIMEOUT_MS,
  );
});
