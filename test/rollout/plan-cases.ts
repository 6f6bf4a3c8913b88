/**
 * Random rollout plans from a seed, for the golden table of plan-golden.test.ts:
 * sets with every update strategy knob, pods in every standing (updated, in
 * flight, not ready, not upgradable, not selected, unmatched, broken
 * annotations, digest images, HotUpgrade), listed in a random order.
 */
import { applyPatch } from '../../lib/admission/json-patch-apply.ts';
import type { JsonPatchOperation } from '../../lib/admission/json-patch.ts';
import type { Pod } from '../../lib/kube/types.ts';
import type { PlanOptions, RolloutPlan } from '../../lib/rollout/plan.ts';
import { podUpdatePatch } from '../../lib/rollout/pod-patch.ts';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { hotSet, injected, kubelet } from './hot-fixtures.ts';
import { rolloutPod, rolloutSet, type PodOptions } from './fixtures.ts';

/** mulberry32: a small seeded generator, so the table is the same on every machine. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface PlanCase {
  set: SidecarSet;
  pods: Pod[];
  options: PlanOptions;
}

const TIMES = [undefined, '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', '2026-01-03T00:00:00Z', 'garbage'];

/** A pod whose patch cannot be made: `patchFor` throws for it (set aside). */
const broken = (pod: Pod): JsonPatchOperation[] => {
  if (pod.metadata?.labels?.broken === 'true') throw new Error(`pod ${pod.metadata.name} is broken`);
  return [];
};

export function planCases(seed: number, count: number): PlanCase[] {
  const r = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(r() * items.length)] as T;
  const chance = (p: number): boolean => r() < p;
  const cases: PlanCase[] = [];
  for (let c = 0; c < count; c++) {
    if (chance(0.1)) {
      cases.push(hotCase(r, pick, chance));
      continue;
    }
    const strategy: SidecarSetUpdateStrategy = { type: chance(0.03) ? 'NotUpdate' : 'RollingUpdate', ...(chance(0.03) ? { paused: true } : {}) };
    strategy.maxUnavailable = pick([1, 3, '10%', '50%', '50%', 100, 100, 0, undefined, 'garbage'] as const);
    const partition = pick([undefined, undefined, 0, 1, 3, '20%', '99%', '100%']);
    if (partition !== undefined) strategy.partition = partition;
    if (chance(0.15)) strategy.selector = { matchLabels: { canary: 'true' } };
    const priority = pick(['none', 'none', 'weight', 'order', 'empty']);
    if (priority === 'weight') strategy.priorityStrategy = { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { zone: 'a' } } }, { weight: pick([30, 50, 70]), matchSelector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] } }] };
    if (priority === 'order') strategy.priorityStrategy = { orderPriority: [{ orderedKey: 'rank' }, { orderedKey: 'tier' }] };
    if (priority === 'empty') strategy.priorityStrategy = {};
    const scatter = pick(['none', 'none', 'zone*', 'zone-a', 'two', 'empty-value']);
    if (scatter === 'zone*') strategy.scatterStrategy = [{ key: 'zone', value: '*' }];
    if (scatter === 'zone-a') strategy.scatterStrategy = [{ key: 'zone', value: 'a' }];
    if (scatter === 'two') strategy.scatterStrategy = [{ key: 'tier', value: '*' }, { key: 'zone', value: 'b' }];
    if (scatter === 'empty-value') strategy.scatterStrategy = [{ key: 'rank', value: '' }];
    const set = rolloutSet({ strategy });
    const pods: Pod[] = [];
    const n = Math.floor(r() * 41);
    for (let i = 0; i < n; i++) {
      const labels: Record<string, string> = {};
      if (chance(0.7)) labels.zone = pick(['a', 'b', 'c']);
      if (chance(0.5)) labels.tier = pick(['t-1', 't-2', 't-10', 'x']);
      if (chance(0.4)) labels.rank = pick(['r1', 'r2', 'r-9', 'none']);
      if (chance(0.3)) labels.canary = 'true';
      if (chance(0.05)) labels.broken = 'true';
      const updated = chance(0.4);
      const o: PodOptions = {
        name: `p-${String(i).padStart(3, '0')}`,
        namespace: pick(['default', 'a', 'b']),
        updated,
        inconsistent: updated && chance(0.1),
        ready: !chance(0.1),
        otherFields: chance(0.08),
        labels,
        ...(chance(0.1) ? { nodeName: '' } : {}),
        ...(chance(0.1) ? { phase: pick(['Pending', 'Unknown', '']) } : {}),
        created: pick(TIMES),
        readySince: pick(TIMES),
        restarts: pick([0, 0, 1, 2]),
        ...(chance(0.1) ? { sidecarReady: chance(0.5) } : {}),
      };
      const pod = rolloutPod(set, o);
      mutate(pod, pick, chance);
      pods.push(pod);
    }
    // The API server's order is namespace/name; a reader's list may come in any.
    for (let i = pods.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [pods[i], pods[j]] = [pods[j] as Pod, pods[i] as Pod];
    }
    cases.push({ set, pods, options: chance(0.5) ? { patchFor: broken } : {} });
  }
  return cases;
}

/** The rarer shapes: digest images, in-place states, broken or foreign annotations, pods that do not match. */
export function mutate(pod: Pod, pick: <T>(items: readonly T[]) => T, chance: (p: number) => boolean): void {
  const annotations = pod.metadata!.annotations!;
  const sidecar = pod.spec!.containers[0]!;
  const status = pod.status!.containerStatuses![0]!;
  if (chance(0.1)) {
    // A digest image: its status imageID matches it or not.
    const digest = `centos@sha256:${'a'.repeat(64)}`;
    sidecar.image = digest;
    status.imageID = chance(0.5) ? `docker.io/library/${digest}` : `docker.io/library/centos@sha256:${'b'.repeat(64)}`;
  }
  if (chance(0.05)) annotations['kruise.io/sidecarset-inplace-update-state'] = pick(['garbage', 'null', '{"test-sidecarset":{"lastContainerStatuses":{"sidecar1":{"imageID":"id-centos:6.7"}}}}']);
  if (chance(0.03)) annotations['kruise.io/sidecarset-hash'] = pick(['garbage', '{"test-sidecarset":"h"}', '{"test-sidecarset":{"hash":5},"other":"x"}']);
  if (chance(0.03)) annotations['kruise.io/sidecarset-hash-without-image'] = 'garbage';
  if (chance(0.02)) delete annotations['kruise.io/sidecarset-injected-list'];
  if (chance(0.02)) annotations['kruise.io/sidecarset-injected-list'] = 'other,test-sidecarset';
  if (chance(0.02)) pod.spec!.containers = pod.spec!.containers.slice(1);
  if (chance(0.03)) pod.status!.containerStatuses = pod.status!.containerStatuses!.slice(0, 1);
  if (chance(0.02)) pod.metadata!.deletionTimestamp = '2026-01-01T00:00:00Z';
  if (chance(0.02)) pod.status!.phase = 'Succeeded';
  if (chance(0.03)) pod.metadata!.labels = { ...pod.metadata!.labels, app: 'other' };
  if (chance(0.05)) status.state = { waiting: { reason: pick(['ImagePullBackOff', 'CrashLoopBackOff', 'not a reason!']) } };
}

/** A HotUpgrade set and pods at the old or the new image, some swapped half way. */
export function hotCase(r: () => number, pick: <T>(items: readonly T[]) => T, chance: (p: number) => boolean, size = 8, updatedShare = 0.4): PlanCase {
  const strategy: SidecarSetUpdateStrategy = { type: 'RollingUpdate', maxUnavailable: pick([1, 2, '50%']) };
  const set = hotSet('mesh:2', '999', strategy);
  const pods: Pod[] = [];
  const n = 1 + Math.floor(r() * size);
  for (let i = 0; i < n; i++) {
    let pod = injected('mesh:1', `h-${i}`);
    // Some pods got the update and the kubelet restarted them (the new container ready, or failing): mid swap.
    if (chance(updatedShare)) {
      pod = applyPatch(pod, podUpdatePatch({ pod, set, latestRevision: 'rev', injectedList: 'hot-set', now: new Date('2026-12-01T00:00:00Z') })) as Pod;
      if (chance(0.8)) pod = kubelet(pod, chance(0.3) ? ['mesh:2'] : []);
    }
    pods.push(pod);
  }
  return { set, pods, options: {} };
}

/** What a plan decided, by pod name: the golden table's row. */
export function decisionOf(plan: RolloutPlan): unknown {
  const name = (pod: Pod): string => `${pod.metadata?.namespace}/${pod.metadata?.name}`;
  return {
    status: plan.status,
    updates: plan.updates.map((u) => [name(u.pod), u.images, u.patch === undefined ? 'no patch' : 'patch']),
    notUpgradable: plan.notUpgradable.map(name),
    flips: plan.flips.map((f) => [name(f.pod), f.flips]),
    swapping: plan.swapping,
    waiting: plan.waiting ?? null,
    unavailable: plan.unavailable ?? null,
    setAside: plan.setAside?.map((s) => [name(s.pod), s.why]) ?? null,
  };
}

/** Cases the table holds: enough to reach every branch many times, few enough to keep the file small. */
export const GOLDEN_SEED = 23;
export const GOLDEN_CASES = 400;
