/**
 * A canary over another set's base (issue 45 item 7) on a real API server,
 * with `npm start`'s stack: the webhooks, the reconciler's loop (a resync a
 * second) and the test kubelet. The base `log-agent` rolls its log-agent
 * sidecar; a canary created afterwards names it as its base and injects
 * another image under the same container name into the new pods it
 * selects. The base keeps counting only its own pods (Kruise's rule), and
 * now tells: one PodsTakenByCanary Event naming the canary and how many pods
 * it took, not one per resync, and `npm run -s status` shows the split.
 */
import { expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { APP_LABELS, counts, deploymentPod, imageOf } from '../../testkit/kruise-e2e.ts';
import { ScenarioStack } from '../e2e/scenario-stack.ts';

const NS = 'tenant-logs';
const BASE_IMAGE = 'fluent/fluent-bit:3.0';
const CANARY_IMAGE = 'example.com/someone-else/log-agent:1.0';
const TIMEOUT_MS = 180_000;
const MAIN = join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'functions', 'status-view', 'main.ts');

const scenario = new ScenarioStack({ reconcile: {}, kubelets: [{ namespaces: [NS], readyDelayMs: 300 }], namespaces: [NS] });

function logAgent(name: string, image: string, selector: Record<string, string>, extra: Partial<SidecarSet['metadata']> = {}, type = 'RollingUpdate'): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name, ...extra },
    spec: { namespace: NS, selector: { matchLabels: selector }, containers: [{ name: 'log-agent', image }], updateStrategy: { type } },
  };
}

describeWithControlPlane('a canary over another set’s base, on a real API server', () => {
  scenario.install();

  it(
    'the base tells, once, which canary took how many of its pods, and the status view shows the split',
    async () => {
      await scenario.createSet(logAgent('log-agent', BASE_IMAGE, APP_LABELS));
      const canary = { 'apps.kruise.io/sidecarset-canary': 'true', 'apps.kruise.io/sidecarset-base': 'log-agent' };
      await scenario.createSet(logAgent('log-agent-canary', CANARY_IMAGE, { ...APP_LABELS, track: 'canary' }, { annotations: canary }, 'NotUpdate'));

      const pods = await scenario.cluster.createPods([
        deploymentPod(NS, 'web-0'),
        deploymentPod(NS, 'web-1', { labels: { track: 'canary' } }),
        deploymentPod(NS, 'web-2', { labels: { track: 'canary' } }),
      ]);
      expect(pods.map((pod) => imageOf(pod, 'log-agent'))).toEqual([BASE_IMAGE, CANARY_IMAGE, CANARY_IMAGE]);
      // The base counts its own pod alone and has finished: what it said before, and says still.
      await scenario.cluster.waitForStatus('log-agent', counts(1, 1, 1, 1));

      const told = await scenario.cluster.waitForEvents('log-agent', 'PodsTakenByCanary', 30_000);
      expect(told).toEqual([
        expect.objectContaining({
          type: 'Warning',
          message: expect.stringMatching(/^2 pods this SidecarSet selects run a canary's sidecars instead of its own \(canary SidecarSets naming log-agent in apps\.kruise\.io\/sidecarset-base: log-agent-canary took 2\)/) as unknown as string,
        }),
      ]);
      // Resyncs run every second: a few more of them tell nothing new.
      await new Promise((r) => setTimeout(r, 4_000));
      const after = await scenario.cluster.waitForEvents('log-agent', 'PodsTakenByCanary');
      expect(after.map((e) => [e.message, (e as { count?: number }).count ?? 1])).toEqual([[told[0]?.message, 1]]);

      const dir = await mkdtemp(join(tmpdir(), 'canary-split-'));
      try {
        const kubeconfig = join(dir, 'kubeconfig');
        await writeFile(kubeconfig, scenario.stack.cp.kubeconfig('admin'), { mode: 0o600 });
        const view = spawnSync(process.execPath, [MAIN, '--kubeconfig', kubeconfig], { env: { ...process.env, KUBECONFIG: '' }, encoding: 'utf8', timeout: 60_000 });
        expect(view.status).toBe(0);
        const baseLine = view.stdout.split('\n').find((line) => line.startsWith('log-agent '));
        expect(baseLine).toMatch(/^log-agent\s+1\s+1\s+1\s+1\s+Finished\s+(policy|webhook)\s+finished: .*; split: 1 pod\(s\) run its sidecars, canary log-agent-canary took 2$/);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }

      // Once the canary's pods are gone, the base says so, once.
      await scenario.cluster.deletePod(NS, 'web-1');
      await scenario.cluster.deletePod(NS, 'web-2');
      const gone = await scenario.cluster.waitForEvents('log-agent', 'NoPodsTakenByCanary', 30_000);
      expect(gone).toEqual([expect.objectContaining({ type: 'Normal' })]);
    },
    TIMEOUT_MS,
  );
});
