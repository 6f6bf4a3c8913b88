/**
 * Canary SidecarSets, as Kruise v1.9.0 (and master since b798341de): which
 * set injects a pod, the canary's validation, and the base's status.
 */
import { describe, expect, it } from '@jest/globals';
import { formatFieldError } from '../../lib/kube/field-errors.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { canaryBaseOf } from '../../lib/sidecarset/canary.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { injectingSets, injectionVerdicts } from '../../lib/sidecarset/injecting-sets.ts';
import { sidecarSetName } from '../../lib/sidecarset/match.ts';
import { computeStatus, summarizePod } from '../../lib/sidecarset/status.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { validateSidecarSet } from '../../lib/sidecarset/validate.ts';
import { NOW, pod, sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { context, tweak, validSidecarSet } from './validate-fixture.ts';

const CANARY = 'apps.kruise.io/sidecarset-canary';
const BASE = 'apps.kruise.io/sidecarset-base';

function canary(name: string, base: string, spec: Parameters<typeof sidecarSet>[1] = {}): SidecarSet {
  const set = sidecarSet(name, { updateStrategy: { type: 'NotUpdate' }, ...spec });
  set.metadata = { ...set.metadata, annotations: { ...(set.metadata?.annotations as Record<string, string>), [CANARY]: 'true', [BASE]: base } };
  return set;
}

const place = (labels: Record<string, string> = { app: 'web' }) => ({ labels, namespace: 'default', namespaceLabels: new Map() });
const names = (sets: readonly SidecarSet[]) => sets.map(sidecarSetName);

describe('which set is a canary', () => {
  it.each<[string, Record<string, unknown>, string | undefined]>([
    ['both annotations', { [CANARY]: 'true', [BASE]: 'stable' }, 'stable'],
    ['canary "True" is not "true"', { [CANARY]: 'True', [BASE]: 'stable' }, undefined],
    ['an empty base', { [CANARY]: 'true', [BASE]: '' }, undefined],
    ['a base without the canary annotation', { [BASE]: 'stable' }, undefined],
    ['a base that is not a string', { [CANARY]: 'true', [BASE]: 7 }, undefined],
    ['no annotations', {}, undefined],
  ])('%s', (_name, annotations, base) => {
    expect(canaryBaseOf({ metadata: { name: 'c', annotations } } as SidecarSet)).toBe(base);
  });
});

describe('which sets inject a pod', () => {
  const stable = sidecarSet('stable');
  const other = sidecarSet('other');
  it.each<[string, SidecarSet[], Record<string, string>, string[]]>([
    ['a canary that selects the pod injects instead of its base', [stable, canary('canary', 'stable')], { app: 'web' }, ['canary']],
    ['a canary that misses the pod leaves it to the base', [stable, canary('canary', 'stable', { selector: { matchLabels: { version: 'canary' } } })], { app: 'web' }, ['stable']],
    ['a canary selecting a narrower set of pods takes only those', [stable, canary('canary', 'stable', { selector: { matchLabels: { version: 'canary' } } })], { app: 'web', version: 'canary' }, ['canary']],
    ['a paused canary leaves the pod to its base', [stable, canary('canary', 'stable', { injectionStrategy: { paused: true } })], { app: 'web' }, ['stable']],
    ['a canary of a base that does not select the pod injects beside the others', [sidecarSet('stable', { selector: { matchLabels: { app: 'db' } } }), other, canary('canary', 'stable')], { app: 'web' }, ['canary', 'other']],
    ['a canary displaces only its own base', [stable, other, canary('canary', 'stable')], { app: 'web' }, ['canary', 'other']],
    ['two canaries of one base both inject', [stable, canary('c1', 'stable'), canary('c2', 'stable')], { app: 'web' }, ['c1', 'c2']],
    ['a canary whose base is not in the cluster injects alone', [canary('canary', 'gone')], { app: 'web' }, ['canary']],
  ])('%s', (_name, sets, labels, expected) => {
    expect(names(injectingSets(sets, place(labels)))).toEqual(expected);
    // The verdicts say the same, and why.
    expect(injectionVerdicts(sets, place(labels)).filter((v) => v.injects).map((v) => v.set)).toEqual(expected);
  });

  it('tells why each set does not inject', () => {
    const sets = [stable, canary('canary', 'stable'), sidecarSet('db', { selector: { matchLabels: { app: 'db' } } }), sidecarSet('held', { injectionStrategy: { paused: true } })];
    expect(injectionVerdicts(sets, place())).toEqual([
      { set: 'canary', injects: true },
      { set: 'db', injects: false, reason: 'not-selected', miss: { kind: 'selector', mismatch: { term: 'matchLabels', key: 'app', want: 'db', have: 'web' } } },
      { set: 'held', injects: false, reason: 'paused', selects: true },
      { set: 'stable', injects: false, reason: 'displaced-by-canary', canary: 'canary' },
    ]);
  });

  it("injects the canary's sidecar into the pod, not the base's (Kruise's e2e: canary image on every pod)", () => {
    const base = sidecarSet('stable', { containers: [{ name: 'nginx-sidecar', image: 'nginx:1.20.1' }], updateStrategy: { type: 'NotUpdate' } });
    const c = canary('canary', 'stable', { containers: [{ name: 'nginx-sidecar', image: 'nginx:1.21.1' }] });
    const result = injectPod({ pod: pod(), namespace: 'default', sidecarSets: [base, c], namespaceLabels: new Map(), now: NOW });
    expect(result.applied).toEqual(['canary']);
    expect(result.pod.spec?.containers.map((x) => x.image)).toEqual(['nginx:1.21.1', 'app:1']);
    expect(result.pod.metadata?.annotations?.['kruise.io/sidecarset-injected-list']).toBe('canary');
  });
});

describe("a canary's validation (Kruise's validateSidecarSetCanaryAnnotations)", () => {
  const annotations = (base: string, extra: Record<string, string> = {}) => ({ [CANARY]: 'true', [BASE]: base, ...extra });
  const canaryOf = (base: string, changes: Record<string, unknown> = {}) =>
    tweak(validSidecarSet('stable'), { 'metadata.name': 'canary', 'metadata.annotations': annotations(base), 'spec.updateStrategy': { type: 'NotUpdate' }, ...changes });
  const baseSet = validSidecarSet('stable');
  const errors = (set: SidecarSet, others: SidecarSet[], oldObject?: SidecarSet) =>
    validateSidecarSet(set, context({ others, ...(oldObject === undefined ? {} : { operation: 'UPDATE', oldObject }) })).map(formatFieldError);
  const value = (base: string) => JSON.stringify(annotations(base));

  it('admits a NotUpdate canary whose base exists, sharing its container names (the conflict check skips the base)', () => {
    expect(errors(canaryOf('stable'), [baseSet])).toEqual([]);
  });

  it.each<[string, SidecarSet, SidecarSet[], SidecarSet | undefined, string[]]>([
    ['the base does not exist', canaryOf('gone'), [baseSet], undefined, [`metadata: Invalid value: ${value('gone')}: fetch base sidecarSet[gone] failed: sidecarsets.apps.kruise.io "gone" not found`]],
    ['the base is a canary', canaryOf('stable'), [tweak(baseSet, { 'metadata.annotations': annotations('other') })], undefined, [`metadata: Invalid value: ${value('stable')}: base sidecarSet cannot be canary`]],
    ['the base is the canary itself (not stored yet, so not found either)', canaryOf('canary'), [baseSet], undefined, [
      `metadata: Invalid value: ${value('canary')}: base sidecarSet cannot be itself`,
      `metadata: Invalid value: ${value('canary')}: fetch base sidecarSet[canary] failed: sidecarsets.apps.kruise.io "canary" not found`,
    ]],
    ['a RollingUpdate canary', canaryOf('stable', { 'spec.updateStrategy': { type: 'RollingUpdate' } }), [baseSet], undefined, [`metadata: Invalid value: ${value('stable')}: RollingUpdate is not supported for canary sidecarSet`]],
    ['an update that changes the base', canaryOf('stable'), [baseSet, tweak(baseSet, { 'metadata.name': 'other' })], canaryOf('other'), [`metadata: Invalid value: ${value('stable')}: annotations[apps.kruise.io/sidecarset-base] is immutable`]],
    ['an update that makes a stored set a canary', canaryOf('stable'), [baseSet], tweak(canaryOf('stable'), { 'metadata.annotations': undefined }), [`metadata: Invalid value: ${value('stable')}: annotations[apps.kruise.io/sidecarset-base] is immutable`]],
  ])('refuses a canary when %s', (_name, set, others, oldObject, expected) => {
    expect(errors(set, others, oldObject)).toEqual(expected);
  });

  it('still refuses a container name another set (not its base) uses', () => {
    const other = tweak(baseSet, { 'metadata.name': 'other' });
    expect(errors(canaryOf('stable'), [baseSet, other])).toContainEqual('spec.containers[0].name: Invalid value: "stable-agent": container stable-agent already exist in other');
  });

  it("admits an update of the base beside its canary sharing container names (Kruise refuses it: DIFFERENCES-FROM-KRUISE-1.9.md)", () => {
    const c = canaryOf('stable');
    const updated = tweak(baseSet, { 'spec.containers.0.image': 'fluent/fluent-bit:2.3' });
    expect(errors(updated, [baseSet, c], baseSet)).toEqual([]);
  });

  it('checks nothing of a set that is not a canary', () => {
    expect(errors(tweak(validSidecarSet('plain'), { 'metadata.annotations': { [BASE]: 'gone' } }), [])).toEqual([]);
  });
});

describe("the base's status beside its canary", () => {
  const base = sidecarSet('stable');
  const c = canary('canary', 'stable');
  const created = (p: Pod, at: string) => {
    p.metadata = { ...p.metadata, creationTimestamp: at };
    return p;
  };
  const setAt = (s: SidecarSet) => {
    s.metadata = { ...s.metadata, creationTimestamp: '2026-01-01T00:00:00Z' };
    return s;
  };
  const byCanary = injectPod({ pod: created(pod(), '2026-02-01T00:00:00Z'), namespace: 'default', sidecarSets: [base, c], namespaceLabels: new Map(), now: NOW }).pod;

  it('does not count a pod its canary injected as one it failed to inject; the canary matches it', () => {
    const pods = [byCanary].map(summarizePod);
    expect(computeStatus(setAt(base), pods, new Map(), [base, c])).toMatchObject({ status: { matchedPods: 0 }, notInjectedPods: 0 });
    expect(computeStatus(setAt(c), pods, new Map(), [base, c])).toMatchObject({ status: { matchedPods: 1 }, notInjectedPods: 0 });
  });

  it('does not count a pod its canary selects now and no set injected (created during an outage)', () => {
    const pods = [created(pod(), '2026-02-01T00:00:00Z')].map(summarizePod);
    expect(computeStatus(setAt(base), pods, new Map(), [base, c]).notInjectedPods).toBe(0);
    expect(computeStatus(setAt(c), pods, new Map(), [base, c]).notInjectedPods).toBe(1);
  });

  it('counts that pod as not injected by the base when its canary is paused', () => {
    const paused = canary('canary', 'stable', { injectionStrategy: { paused: true } });
    const pods = [created(pod(), '2026-02-01T00:00:00Z')].map(summarizePod);
    expect(computeStatus(setAt(base), pods, new Map(), [base, paused]).notInjectedPods).toBe(1);
  });
});
