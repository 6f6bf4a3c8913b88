import { describe, expect, it } from '@jest/globals';
import { pinnedRevision, restoreRevision, revisionForInjection, RevisionUnavailableError } from '../../lib/sidecarset/revision-pick.ts';
import { newRevision, type ControllerRevision } from '../../lib/sidecarset/revisions.ts';
import type { IntOrString, SidecarSet } from '../../lib/sidecarset/types.ts';
import { hashOf, OLD_IMAGE, rolloutSet, withoutImageOf } from '../rollout/fixtures.ts';

const oldSet = rolloutSet({ image: OLD_IMAGE });
const OLD_REVISION = newRevision(oldSet, 'kruise-system', 1, 0);

/** The current set at centos:6.8, pinning the old revision, policy Partial, selector canary=true. */
function canarySet(opts: { partition?: IntOrString; paused?: boolean; selector?: unknown; pin?: { revisionName?: string; customVersion?: string }; policy?: string } = {}): SidecarSet {
  const set = rolloutSet({
    strategy: {
      type: 'RollingUpdate',
      selector: (opts.selector ?? { matchLabels: { canary: 'true' } }) as never,
      ...(opts.partition !== undefined ? { partition: opts.partition } : {}),
      ...(opts.paused ? { paused: true } : {}),
    },
  });
  set.spec!.injectionStrategy = { revision: { ...(opts.pin ?? { revisionName: OLD_REVISION.metadata!.name }), policy: opts.policy ?? 'Partial' } };
  return set;
}

const kind = (set: SidecarSet, labels: Record<string, string>, revisions: ControllerRevision[] = [OLD_REVISION], draw = 0.5) =>
  revisionForInjection(set, labels, revisions, draw).kind;

/** rollout.md §2.4: Kruise's TestCanarySidecarSetInjection. */
describe("which revision the pod webhook injects: Kruise's TestCanarySidecarSetInjection", () => {
  it('a stable pod (outside the selector) gets the old revision', () => {
    expect(kind(canarySet(), {})).toBe('pinned');
  });
  it('a canary pod without partition gets the new one', () => {
    expect(kind(canarySet(), { canary: 'true' })).toBe('current');
  });
  it('a canary pod with partition 100% gets the old one; 0% the new one', () => {
    expect(kind(canarySet({ partition: '100%' }), { canary: 'true' }, [OLD_REVISION], 0.999)).toBe('pinned');
    expect(kind(canarySet({ partition: '0%' }), { canary: 'true' }, [OLD_REVISION], 0.001)).toBe('current');
  });
  it('a bad percent, a missing revision and a bad selector are errors', () => {
    expect(() => kind(canarySet({ partition: 'x%' }), { canary: 'true' })).toThrow(RevisionUnavailableError);
    expect(() => kind(canarySet(), { canary: 'true' }, [])).toThrow(RevisionUnavailableError);
    expect(() => kind(canarySet({ selector: { matchExpressions: [{ key: 'k', operator: 'Bogus' }] } }), { canary: 'true' })).toThrow(RevisionUnavailableError);
  });
  it('paused gives the old one whatever the policy', () => {
    expect(kind(canarySet({ paused: true }), { canary: 'true' })).toBe('pinned');
  });
});

describe('pinned revisions (rollout.md §2.3, §2.4)', () => {
  it('nothing pinned injects the current set', () => {
    expect(revisionForInjection(rolloutSet(), {}, [], 0)).toEqual({ kind: 'current' });
  });

  it('policy Always (or empty) injects the pinned revision even for a pod the selector matches', () => {
    expect(kind(canarySet({ policy: 'Always' }), { canary: 'true' })).toBe('pinned');
    expect(kind(canarySet({ policy: '' }), { canary: 'true' })).toBe('pinned');
  });

  it('an int partition under Partial gives the current set', () => {
    expect(kind(canarySet({ partition: 3 }), { canary: 'true' }, [OLD_REVISION], 0)).toBe('current');
  });

  it('customVersion takes the revision of the set with that label and the highest revision number', () => {
    const label = (r: ControllerRevision, n: number, cv: string): ControllerRevision => ({ ...r, revision: n, metadata: { ...r.metadata, labels: { ...r.metadata!.labels, 'apps.kruise.io/sidecarset-custom-version': cv } } });
    const r1 = label(OLD_REVISION, 1, 'v1');
    const r3 = label(newRevision(rolloutSet({ image: 'centos:6.5' }), 'kruise-system', 3, 0), 3, 'v1');
    const r2 = label(newRevision(rolloutSet(), 'kruise-system', 2, 0), 2, 'v2');
    const set = canarySet({ pin: { customVersion: 'v1' } });
    expect(pinnedRevision(set, [r3, r1, r2])).toBe(r3);
    expect(() => pinnedRevision(canarySet({ pin: { customVersion: 'v9' } }), [r1, r2, r3])).toThrow(RevisionUnavailableError);
  });

  it('the restored set holds only the five recorded fields, the revision’s hashes and its name as latestRevision', () => {
    const restored = restoreRevision(canarySet(), OLD_REVISION);
    expect(Object.keys(restored.spec!).sort()).toEqual(['containers', 'volumes']);
    expect(restored.spec!.containers![0]!.image).toBe(OLD_IMAGE);
    expect(restored.metadata!.annotations!['kruise.io/sidecarset-hash']).toBe(hashOf(oldSet));
    expect(restored.metadata!.annotations!['kruise.io/sidecarset-hash-without-image']).toBe(withoutImageOf(oldSet));
    expect(restored.metadata!.name).toBe('test-sidecarset');
    expect(restored.status!.latestRevision).toBe('test-sidecarset-cf4bf7796');
  });

  it('hashes missing from the revision are recomputed from the restored spec', () => {
    const bare = { ...OLD_REVISION, metadata: { ...OLD_REVISION.metadata, annotations: {} } };
    expect(restoreRevision(canarySet(), bare).metadata!.annotations!['kruise.io/sidecarset-hash']).toBe(hashOf(oldSet));
  });
});
