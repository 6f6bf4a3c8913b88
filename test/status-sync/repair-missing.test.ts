import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { planRepair, webhookSeesPod, type RepairInput } from '../../lib/status-sync/repair-missing.ts';
import { controllerOf } from '../../lib/sidecarset/pod-state.ts';
import { renderWebhookConfigurations } from '../../lib/webhook-config/webhook-configurations.ts';
import type { PodWebhookSelectors } from '../../lib/ports.ts';

const NS = 'shop';
const SET_CREATED = '2026-01-01T00:00:00Z';
const AFTER = '2026-01-01T00:10:00Z';

function sidecarSet(spec: Record<string, unknown> = {}, name = 'agent', metadata: Record<string, unknown> = {}): SidecarSet {
  return defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name, creationTimestamp: SET_CREATED, ...metadata },
    spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'agent', image: 'agent:1' }], ...spec },
  });
}

interface PodOptions {
  ready?: boolean;
  owned?: boolean;
  created?: string;
  labels?: Record<string, string>;
  namespace?: string;
  deleting?: boolean;
  containers?: string[];
}

function pod(name: string, o: PodOptions = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: o.namespace ?? NS,
      uid: `uid-${name}`,
      labels: o.labels ?? { app: 'web' },
      creationTimestamp: o.created ?? AFTER,
      ...(o.owned === false ? {} : { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'rs', controller: true }] }),
      ...(o.deleting === true ? { deletionTimestamp: AFTER } : {}),
    },
    spec: { containers: (o.containers ?? ['app']).map((c) => ({ name: c, image: `${c}:1` })) },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
  };
}

/** A pod the set injected (as pod-inject would), Ready or not. */
function injected(set: SidecarSet, name: string, ready = true): Pod {
  const plain = pod(name, { ready });
  const out = injectPod({ pod: plain, namespace: NS, sidecarSets: [set], namespaceLabels: new Map([[NS, {}]]), now: new Date(AFTER) });
  const images = (out.pod.spec?.containers ?? []).map((c) => ({ name: c.name, image: c.image, imageID: c.image, ready }));
  return { ...out.pod, status: { ...(plain.status ?? {}), containerStatuses: images } };
}

const EVERY_POD: PodWebhookSelectors = {};
const LABELS = new Map([[NS, { 'kubernetes.io/metadata.name': NS }]]);

function plan(set: SidecarSet, pods: Pod[], extra: Partial<RepairInput> = {}) {
  return planRepair({ set, clusterSets: [set], pods, namespaceLabels: LABELS, podWebhook: EVERY_POD, evictionBudget: 10, ...extra });
}

const names = (pods: readonly Pod[]): string[] => pods.map((p) => p.metadata?.name ?? '');

describe('which uninjected pods a set evicts', () => {
  const set = sidecarSet({ updateStrategy: { type: 'RollingUpdate', maxUnavailable: 10 } });

  it.each<[string, Pod, 'evict' | 'ownerless' | 'left']>([
    ['a controller-owned pod the set selects and never injected', pod('a'), 'evict'],
    ['a pod without a controller (reported only)', pod('a', { owned: false }), 'ownerless'],
    ['a pod the set does not select', pod('a', { labels: { app: 'other' } }), 'left'],
    ['a pod created before the set', pod('a', { created: '2025-12-31T00:00:00Z' }), 'left'],
    ['a pod created in the set’s own second', pod('a', { created: SET_CREATED }), 'left'],
    ['a pod that already carries a container of the set’s name', pod('a', { containers: ['app', 'agent'] }), 'left'],
    ['a pod being deleted', pod('a', { deleting: true }), 'left'],
    ['a pod in a namespace whose labels are unknown', pod('a', { namespace: 'elsewhere' }), 'left'],
  ])('%s', (_, subject, expected) => {
    const out = plan(set, [subject]);
    expect(names(out.evict)).toEqual(expected === 'evict' ? ['a'] : []);
    expect(names(out.ownerless)).toEqual(expected === 'ownerless' ? ['a'] : []);
  });

  it('never evicts a pod the set already injected', () => {
    expect(plan(set, [injected(set, 'done')]).evict).toEqual([]);
  });

  it('evicts nothing while the set’s injection is paused, as pod-inject would skip it', () => {
    const paused = sidecarSet({ updateStrategy: { type: 'RollingUpdate', maxUnavailable: 10 }, injectionStrategy: { paused: true } });
    expect(plan(paused, [pod('a')]).evict).toEqual([]);
  });

  it('leaves a pod a canary of the set would inject instead (pod-inject’s own verdict)', () => {
    const canary = sidecarSet({ selector: { matchLabels: { app: 'web', track: 'canary' } }, containers: [{ name: 'agent', image: 'agent:2' }] }, 'agent-canary', {
      annotations: { 'apps.kruise.io/sidecarset-base': 'agent', 'apps.kruise.io/sidecarset-canary': 'true' },
    });
    const out = planRepair({ set, clusterSets: [set, canary], pods: [pod('c', { labels: { app: 'web', track: 'canary' } }), pod('b')], namespaceLabels: LABELS, podWebhook: EVERY_POD, evictionBudget: 10 });
    expect(names(out.evict)).toEqual(['b']);
  });
});

describe('where the API server calls pod-inject', () => {
  const [mutating] = renderWebhookConfigurations({ targets: { 'sidecarset-default': { url: 'https://x/a' }, 'sidecarset-validate': { url: 'https://x/b' }, 'pod-inject': { url: 'https://x/c' }, 'pod-change': { url: 'https://x/d' } }, excludedNamespaces: ['tools'] });
  const podWebhook = (mutating?.webhooks as { name: string; namespaceSelector: unknown }[] | undefined)?.find((w) => w.name === 'pod-inject.sidecarset.kruise.io');

  it.each<[string, Record<string, string>, boolean]>([
    ['an ordinary namespace', { 'kubernetes.io/metadata.name': 'shop' }, true],
    ['kube-system', { 'kubernetes.io/metadata.name': 'kube-system' }, false],
    ['a namespace the deployment excluded', { 'kubernetes.io/metadata.name': 'tools' }, false],
    ['a namespace opted out by label', { 'kubernetes.io/metadata.name': 'shop', 'sidecarset.kruise.io/injection': 'disabled' }, false],
  ])('%s', (_, labels, seen) => {
    const ns = labels['kubernetes.io/metadata.name'] ?? '';
    expect(webhookSeesPod({ namespaceSelector: podWebhook?.namespaceSelector }, ns, {}, new Map([[ns, labels]]))).toBe(seen);
  });

  it('evicts no pod of a namespace the webhook is not called for: it would come back uninjected', () => {
    const set = sidecarSet({ updateStrategy: { type: 'RollingUpdate', maxUnavailable: 10 } });
    const out = planRepair({ set, clusterSets: [set], pods: [pod('a')], namespaceLabels: new Map([[NS, { 'kubernetes.io/metadata.name': NS, 'sidecarset.kruise.io/injection': 'disabled' }]]), podWebhook: { namespaceSelector: podWebhook?.namespaceSelector }, evictionBudget: 10 });
    expect(out.evict).toEqual([]);
  });

  it('evicts no pod the webhook’s objectSelector leaves out', () => {
    const set = sidecarSet({ updateStrategy: { type: 'RollingUpdate', maxUnavailable: 10 } });
    expect(plan(set, [pod('a')], { podWebhook: { objectSelector: { matchLabels: { inject: 'yes' } } } }).evict).toEqual([]);
  });
});

describe('how many a set evicts in one resync', () => {
  it.each<[string, number | string | undefined, number, number, number]>([
    // [what, maxUnavailable, ready uninjected pods, updated pods not ready, evicted]
    ['maxUnavailable 1 (Kruise’s default) evicts one ready pod', undefined, 3, 0, 1],
    ['maxUnavailable 2 evicts two', 2, 3, 0, 2],
    ['pods already unavailable take their slots', 2, 3, 1, 1],
    ['no slot left evicts none', 1, 3, 1, 0],
    ['a percentage is of every pod the set applies to, rounded up', '50%', 3, 0, 2],
  ])('%s', (_, maxUnavailable, uninjected, notReady, evicted) => {
    const set = sidecarSet(maxUnavailable === undefined ? {} : { updateStrategy: { type: 'RollingUpdate', maxUnavailable } });
    const pods = [...Array.from({ length: uninjected }, (_, i) => pod(`u${i}`)), ...Array.from({ length: notReady }, (_, i) => injected(set, `i${i}`, false))];
    const out = plan(set, pods);
    expect(out.evict).toHaveLength(evicted);
    expect(out.heldByMaxUnavailable).toBe(uninjected - evicted);
    expect(out.unavailable).toBe(notReady);
  });

  it('evicts pods that are not ready first and for free, as Kruise’s rollout takes them', () => {
    const set = sidecarSet({ updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 } });
    const out = plan(set, [pod('ready-1'), pod('down-1', { ready: false }), pod('ready-2'), pod('down-2', { ready: false })]);
    expect(names(out.evict)).toEqual(['down-1', 'down-2', 'ready-1']);
  });

  it('counts uninjected pods still being deleted (an eviction in flight) as unavailable', () => {
    const set = sidecarSet({ updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 } });
    const out = plan(set, [pod('gone', { deleting: true }), pod('a')]);
    expect(out.unavailable).toBe(1);
    expect(out.evict).toEqual([]);
  });

  it('stops at the resync’s limit and says how many wait for it', () => {
    const set = sidecarSet({ updateStrategy: { type: 'RollingUpdate', maxUnavailable: 5 } });
    const out = plan(set, [pod('a', { created: '2026-01-01T00:01:00Z' }), pod('b', { created: '2026-01-01T00:02:00Z' }), pod('c', { created: '2026-01-01T00:03:00Z' })], { evictionBudget: 2 });
    expect(names(out.evict)).toEqual(['a', 'b']);
    expect(out.heldByResyncLimit).toBe(1);
  });

  it('evicts nothing when maxUnavailable cannot be read', () => {
    const set = sidecarSet({ updateStrategy: { type: 'RollingUpdate', maxUnavailable: 'lots' } });
    const out = plan(set, [pod('a')]);
    expect(out.evict).toEqual([]);
    expect(out.invalidStrategy).toMatch(/maxUnavailable/);
  });
});

describe('controllerOf', () => {
  it('reads only the owner marked as controller', () => {
    const p = pod('a', { owned: false });
    expect(controllerOf(p)).toBeUndefined();
    expect(controllerOf({ ...p, metadata: { ...p.metadata, ownerReferences: [{ kind: 'Node', name: 'n', controller: false }] } })).toBeUndefined();
    expect(controllerOf(pod('a'))).toEqual({ kind: 'ReplicaSet', name: 'web-1' });
  });
});
