import { describe, expect, it } from '@jest/globals';
import { activeRevisions, customVersionPatch, resolveCollision, revisionAction, revisionsToDelete } from '../../lib/rollout/revision-history.ts';
import { newRevision, type ControllerRevision } from '../../lib/sidecarset/revisions.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { OLD_IMAGE, rolloutPod, rolloutSet, storedRevision, withSecret } from './fixtures.ts';

describe('registering the latest revision (rollout.md §2.1)', () => {
  it('no history: create revision 1', () => {
    const action = revisionAction(rolloutSet(), [], 'kruise-system');
    expect(action.kind).toBe('create');
    expect(action.revision.revision).toBe(1);
  });

  it('the newest revision records the spec: reuse, no write', () => {
    const set = rolloutSet();
    const history = [storedRevision(rolloutSet({ image: OLD_IMAGE }), 1), storedRevision(set, 2)];
    expect(revisionAction(set, history, 'kruise-system')).toEqual({ kind: 'reuse', revision: history[1] });
  });

  it('an older revision records it (rollback): bump that revision to max + 1, same name', () => {
    const old = rolloutSet({ image: OLD_IMAGE });
    const history = [storedRevision(old, 1), storedRevision(rolloutSet(), 2)];
    const action = revisionAction(old, history, 'kruise-system');
    expect(action).toEqual({ kind: 'bump', revision: history[0], number: 3 });
  });

  it('a spec change after history: create max + 1', () => {
    const history = [storedRevision(withSecret(1), 4), storedRevision(withSecret(2), 7)];
    const action = revisionAction(withSecret(3), history, 'kruise-system');
    expect(action.kind).toBe('create');
    expect(action.revision.revision).toBe(8);
  });

  it('AlreadyExists with the same data: use it; with other data: collisionCount + 1 and a new name', () => {
    const set = rolloutSet({ image: OLD_IMAGE });
    const attempted = newRevision(set, 'kruise-system', 1, 0);
    expect(resolveCollision(set, attempted, storedRevision(set, 5), 0)).toEqual({ kind: 'use', revision: storedRevision(set, 5) });
    const other = { ...storedRevision(rolloutSet(), 1), metadata: { ...attempted.metadata } };
    const retry = resolveCollision(set, attempted, other, 0);
    expect(retry.kind).toBe('retry');
    if (retry.kind === 'retry') {
      expect(retry.collisionCount).toBe(1);
      expect(retry.revision.metadata!.name).toBe('test-sidecarset-cf4bf7797');
      expect(retry.revision.revision).toBe(1);
    }
  });

  it('the custom-version label moves to the latest revision only when it differs', () => {
    const set: SidecarSet = { ...rolloutSet(), metadata: { ...rolloutSet().metadata, labels: { 'apps.kruise.io/sidecarset-custom-version': 'v2' } } };
    const latest = storedRevision(rolloutSet(), 1);
    expect(customVersionPatch(set, latest)).toEqual({ metadata: { labels: { 'apps.kruise.io/sidecarset-custom-version': 'v2' } } });
    expect(customVersionPatch(set, storedRevision(set, 1))).toBeUndefined();
    expect(customVersionPatch(rolloutSet(), latest)).toBeUndefined();
  });
});

describe('history trimming (rollout.md §2.1 truncateHistory, e2e "history revision checker")', () => {
  const history = (numbers: number[]): ControllerRevision[] => numbers.map((n) => storedRevision(withSecret(n), n));
  const names = (rs: ControllerRevision[]) => rs.map((r) => r.revision);

  it('16 revisions with the default limit of 10: delete the 6 oldest', () => {
    const h = history([...Array(16).keys()].map((i) => i + 1));
    expect(names(revisionsToDelete(withSecret(16), h, new Set()).delete)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('e2e: revisions 6..15 plus 12 bumped to 16 keep [6,7,8,9,10,11,13,14,15,16]', () => {
    const h = history([6, 7, 8, 9, 10, 11, 13, 14, 15]).concat([{ ...storedRevision(withSecret(12), 16) }]);
    expect(revisionsToDelete(withSecret(12), h, new Set()).delete).toEqual([]);
  });

  it('active revisions are kept, the newest is never deleted, and a shortfall is reported', () => {
    const set: SidecarSet = { ...withSecret(3), spec: { ...withSecret(3).spec, revisionHistoryLimit: 1 } };
    const h = history([1, 2, 3]);
    const active = new Set([h[0]!.metadata!.name!]);
    expect(revisionsToDelete(set, h, active)).toEqual({ delete: [h[1]], short: 1 });
    const zero: SidecarSet = { ...set, spec: { ...set.spec, revisionHistoryLimit: 0 } };
    expect(revisionsToDelete(zero, h, new Set()).delete).toEqual([h[0], h[1]]);
  });

  it('active: controllerRevision on matched pods, the pinned name, the newest revision with the pinned custom version', () => {
    const base = rolloutSet();
    const set: SidecarSet = { ...base, spec: { ...base.spec, injectionStrategy: { revision: { revisionName: 'pinned', customVersion: 'v1' } } } };
    const h = history([1, 2, 3]).map((r, i) => (i < 2 ? { ...r, metadata: { ...r.metadata, labels: { ...r.metadata!.labels, 'apps.kruise.io/sidecarset-custom-version': 'v1' } } } : r));
    const pod = rolloutPod(set, { name: 'a' });
    expect(activeRevisions(set, [pod], h)).toEqual(new Set(['rev-old', 'pinned', h[1]!.metadata!.name!]));
  });
});

