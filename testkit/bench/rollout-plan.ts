/**
 * The rollout plan's compute time for a large set (issue 16: a 100,000-pod
 * plan within 1 s), pure and in-process: a set over N pods in 50 namespaces,
 * a third updated (a tenth of those restarting), one in eleven not ready.
 */
import { performance } from 'node:perf_hooks';
import type { Pod } from '../../lib/kube/types.ts';
import { planRollout } from '../../lib/rollout/plan.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { summarize, type Summary } from './stats.ts';

/** The bench's SidecarSet: one cold sidecar, `image`, this update strategy. */
export function benchSet(image: string, strategy: SidecarSetUpdateStrategy): SidecarSet {
  return defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'bench', uid: 'u' },
    spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'log-agent', image }], updateStrategy: { type: 'RollingUpdate', ...strategy } },
  });
}

/** A third of the pods updated (a tenth of those still restarting), the rest on the old hash; three zones. */
export function benchPods(count: number, current: SidecarSet, old: SidecarSet): Pod[] {
  const hashOf = (s: SidecarSet) => s.metadata?.annotations?.['kruise.io/sidecarset-hash'] ?? '';
  const withoutImage = current.metadata?.annotations?.['kruise.io/sidecarset-hash-without-image'] ?? '';
  const entry = (hash: string) => JSON.stringify({ bench: { updateTimestamp: '2026-01-01T00:00:00Z', hash, sidecarSetName: 'bench', sidecarList: ['log-agent'] } });
  const newHash = entry(hashOf(current));
  const oldHash = entry(hashOf(old));
  const without = entry(withoutImage);
  return Array.from({ length: count }, (_, i) => {
    const updated = i % 3 === 0;
    const restarting = updated && i % 30 === 0;
    const image = updated ? 'agent:2' : 'agent:1';
    return {
      metadata: {
        name: `pod-${String(i).padStart(6, '0')}`,
        namespace: `ns-${i % 50}`,
        resourceVersion: String(1000 + i),
        creationTimestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
        labels: { app: 'web', zone: `z${i % 3}`, tier: `t-${i % 7}` },
        annotations: {
          'kruise.io/sidecarset-injected-list': 'bench',
          'kruise.io/sidecarset-hash': updated ? newHash : oldHash,
          'kruise.io/sidecarset-hash-without-image': without,
          ...(restarting
            ? { 'kruise.io/sidecarset-inplace-update-state': '{"bench":{"revision":"r","updateTimestamp":"2026-01-01T00:00:00Z","lastContainerStatuses":{"log-agent":{"imageID":"id-1"}}}}' }
            : {}),
        },
      },
      spec: { nodeName: `node-${i % 500}`, containers: [{ name: 'log-agent', image }, { name: 'app', image: 'app:1' }] },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: i % 11 === 0 ? 'False' : 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }],
        containerStatuses: [
          { name: 'log-agent', image: restarting ? 'agent:1' : image, imageID: restarting ? 'id-1' : `id-${image}`, ready: true, restartCount: i % 4 },
          { name: 'app', image: 'app:1', imageID: 'id-app', ready: true, restartCount: 0 },
        ],
      },
    };
  });
}

export const PLAN_CASES: readonly [string, SidecarSetUpdateStrategy][] = [
  ['maxUnavailable 10%', { maxUnavailable: '10%' }],
  ['maxUnavailable 10%, partition 20%, orderPriority, scatter zone=*', { maxUnavailable: '10%', partition: '20%', priorityStrategy: { orderPriority: [{ orderedKey: 'tier' }] }, scatterStrategy: [{ key: 'zone', value: '*' }] }],
];

export interface PlanTime {
  name: string;
  wall: Summary;
  /** CPU time of this process (GC threads included): what the plan costs when the machine is shared. */
  cpu: Summary;
  updates: number;
}

export function planTimes(podCount: number, runs: number): PlanTime[] {
  const old = benchSet('agent:1', {});
  return PLAN_CASES.map(([name, strategy]) => {
    const current = benchSet('agent:2', strategy);
    const list = benchPods(podCount, current, old);
    const wall: number[] = [];
    const cpu: number[] = [];
    let updates = 0;
    for (let r = 0; r < runs; r++) {
      const start = performance.now();
      const cpuStart = process.cpuUsage();
      const plan = planRollout(current, list, new Map());
      const used = process.cpuUsage(cpuStart);
      wall.push(performance.now() - start);
      cpu.push((used.user + used.system) / 1000);
      updates = plan.updates.length;
    }
    return { name, wall: summarize(wall), cpu: summarize(cpu), updates };
  });
}
