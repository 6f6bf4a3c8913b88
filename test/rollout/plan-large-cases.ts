/**
 * Large random rollout plans from a seed, for plan-large-golden.test.ts:
 * what plan-cases.ts draws, at hundreds to thousands of pods, with what only
 * a large list shows: many namespaces (`a` and `a-b` among them, which sort
 * apart as `namespace/name` keys and as pairs), lists sorted or not, every
 * pod's hash annotation text its own (an update time per pod), creation and
 * ready times in every format a reader may meet, many scatter values
 * (long ones, ""), order suffixes past what a double holds exactly, more
 * unavailable pods per reason than are named, and HotUpgrade sets of many pods.
 */
import { createHash } from 'node:crypto';
import type { Pod } from '../../lib/kube/types.ts';
import type { RolloutPlan } from '../../lib/rollout/plan.ts';
import type { SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { decisionOf, hotCase, mutate, random, type PlanCase } from './plan-cases.ts';
import { rolloutPod, rolloutSet, type PodOptions } from './fixtures.ts';

/** Creation and ready times: the API server's form (one per pod, or shared), and what else Date.parse reads or refuses. */
const odd = ['2026-01-01T00:00:00.250Z', '2026-01-01T02:00:00+02:00', '2026-02-30T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01t00:00:00z', 'garbage', '', undefined];
const timeOf = (pick: <T>(items: readonly T[]) => T, chance: (p: number) => boolean, i: number): string | undefined =>
  chance(0.15) ? pick(odd) : chance(0.5) ? new Date(Date.UTC(2026, 0, 1) + (i % 977) * 60_000).toISOString().replace('.000Z', 'Z') : '2026-01-01T00:00:00Z';

export function largeCases(seed: number, count: number): PlanCase[] {
  const r = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(r() * items.length)] as T;
  const chance = (p: number): boolean => r() < p;
  const cases: PlanCase[] = [];
  for (let c = 0; c < count; c++) {
    if (c % 8 === 7) {
      // Mid swap (the reconcile flips), or none updated yet (the reconcile takes a batch of hot updates).
      cases.push(hotCase(r, pick, chance, 300, c % 16 === 7 ? 0.4 : 0));
      continue;
    }
    const strategy: SidecarSetUpdateStrategy = { type: 'RollingUpdate', ...(chance(0.04) ? { paused: true } : {}) };
    strategy.maxUnavailable = pick([1, 25, '10%', '30%', '50%', '50%', 1000, 1000, 'garbage'] as const);
    const partition = pick([undefined, undefined, 0, 7, '20%', '60%']);
    if (partition !== undefined) strategy.partition = partition;
    if (chance(0.15)) strategy.selector = { matchLabels: { canary: 'true' } };
    const priority = pick(['none', 'weight', 'order', 'order', 'huge-weight']);
    if (priority === 'weight') strategy.priorityStrategy = { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { zone: 'z1' } } }, { weight: 30, matchSelector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] } }] };
    if (priority === 'huge-weight') strategy.priorityStrategy = { weightPriority: [{ weight: 1e308, matchSelector: { matchLabels: { app: 'web' } } }, { weight: 1e308, matchSelector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] } }] };
    if (priority === 'order') strategy.priorityStrategy = { orderPriority: [{ orderedKey: pick(['rank', 'tier']) }, { orderedKey: 'tier' }] };
    const scatter = pick(['none', 'zone*', 'zone*', 'zone-one', 'empty', 'several', 'long*']);
    if (scatter === 'zone*') strategy.scatterStrategy = [{ key: 'zone', value: '*' }];
    if (scatter === 'zone-one') strategy.scatterStrategy = [{ key: 'zone', value: 'z2' }];
    if (scatter === 'empty') strategy.scatterStrategy = [{ key: 'zone', value: '' }];
    if (scatter === 'several') strategy.scatterStrategy = [{ key: 'tier', value: '*' }, { key: 'zone', value: 'z0' }, { key: 'zone', value: '*' }, { key: 'rank', value: '' }];
    if (scatter === 'long*') strategy.scatterStrategy = [{ key: 'long', value: '*' }, { key: 'zone', value: 'z1' }];
    const set = rolloutSet({ strategy });
    const setName = set.metadata!.name!;
    const n = pick([150, 600, 2500]);
    const zones = pick([2, 5, 40]);
    const namespaces = pick([['default'], ['a', 'a-b', 'a.b', 'b'], Array.from({ length: 60 }, (_, k) => `ns-${k}`)]);
    // How often a pod is not ready or mid update: enough of them hold maxUnavailable.
    const trouble = pick([0, 0.01, 0.1]);
    const pods: Pod[] = [];
    for (let i = 0; i < n; i++) {
      const labels: Record<string, string> = {};
      if (chance(0.9)) labels.zone = chance(0.05) ? '' : `z${Math.floor(r() * zones)}`;
      if (chance(0.6)) labels.tier = pick(['t-1', 't-2', 't-10', 'x', `t-${'9'.repeat(17)}`, 't-0000000000000000003']);
      if (chance(0.4)) labels.rank = `r${Math.floor(r() * 12)}`;
      if (chance(0.3)) labels.long = `${'v'.repeat(200)}${Math.floor(r() * 4)}`;
      if (chance(0.2)) labels.canary = 'true';
      if (chance(0.02)) labels.broken = 'true';
      const updated = chance(0.35);
      const o: PodOptions = {
        name: `p-${String(i).padStart(5, '0')}`,
        namespace: pick(namespaces),
        updated,
        inconsistent: updated && chance(trouble),
        ready: !chance(trouble),
        otherFields: chance(0.05),
        labels,
        ...(chance(0.05) ? { nodeName: '' } : {}),
        ...(chance(0.05) ? { phase: pick(['Pending', 'Unknown']) } : {}),
        created: timeOf(pick, chance, i),
        readySince: timeOf(pick, chance, i * 7),
        restarts: pick([0, 0, 1, 2, 5]),
        ...(chance(trouble / 2) ? { sidecarReady: false } : {}),
      };
      const pod = rolloutPod(set, o);
      // Every pod's own update time: no two hash annotation texts alike.
      const annotations = pod.metadata!.annotations!;
      const hashText = JSON.parse(annotations['kruise.io/sidecarset-hash']!) as Record<string, { updateTimestamp: string }>;
      hashText[setName]!.updateTimestamp = new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString().replace('.000Z', 'Z');
      annotations['kruise.io/sidecarset-hash'] = JSON.stringify(hashText);
      mutate(pod, pick, chance);
      pods.push(pod);
    }
    if (chance(0.5)) {
      const key = (p: Pod): string => `${p.metadata!.namespace}/${p.metadata!.name}`;
      pods.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    } else {
      for (let i = pods.length - 1; i > 0; i--) {
        const j = Math.floor(r() * (i + 1));
        [pods[i], pods[j]] = [pods[j] as Pod, pods[i] as Pod];
      }
    }
    cases.push({ set, pods, options: chance(0.5) ? { patchFor: (pod) => { if (pod.metadata?.labels?.broken === 'true') throw new Error(`pod ${pod.metadata.name} is broken`); return []; } } : {} });
  }
  return cases;
}

/**
 * A large plan's row: the counts, waiting reason, unavailable tally and the
 * first updates as they are, and a digest of the whole decision
 * ({@link decisionOf}: every update in order with its images, every
 * not-upgradable pod, flip and set-aside pod), which keeps the file small.
 */
export function largeDecisionOf(plan: RolloutPlan): unknown {
  const whole = decisionOf(plan) as { updates: unknown[] };
  return {
    status: plan.status,
    waiting: plan.waiting ?? null,
    unavailable: plan.unavailable ?? null,
    swapping: plan.swapping,
    sizes: { updates: plan.updates.length, notUpgradable: plan.notUpgradable.length, flips: plan.flips.length, setAside: plan.setAside?.length ?? 0 },
    firstUpdates: whole.updates.slice(0, 8),
    digest: createHash('sha256').update(JSON.stringify(whole)).digest('hex'),
  };
}

export const LARGE_SEED = 2023;
export const LARGE_CASES = 48;
