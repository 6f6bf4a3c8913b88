/**
 * Registering a set's latest ControllerRevision and trimming its history
 * against a RevisionStore (in memory): which writes each case makes, what
 * the status gets, and how failures come out.
 */
import { describe, expect, it } from '@jest/globals';
import { memoryRevisionStore } from '../../lib/adapters/memory-rollout.ts';
import { currentRevisionName, LABEL_CUSTOM_VERSION, LABEL_SIDECARSET_NAME, newRevision, type ControllerRevision } from '../../lib/sidecarset/revisions.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { ObjectExistsError } from '../../lib/ports/errors.ts';
import { memoisedRevisionFacts, registerRevision, trimHistory } from '../../lib/status-sync/revision-register.ts';
import { rolloutSet } from '../rollout/fixtures.ts';

const NS = 'kruise-system';
const at = (image: string, extra: (set: SidecarSet) => void = () => undefined): SidecarSet => {
  const set = rolloutSet({ image });
  extra(set);
  return set;
};
const V1 = at('agent:1');
const V2 = at('agent:2');
const V3 = at('agent:3');
const nameOf = (r: ControllerRevision | undefined) => r?.metadata?.name ?? '';

/** The set's stored history: one revision per spec, numbered 1, 2, … in that order. */
function historyOf(...specs: SidecarSet[]): ControllerRevision[] {
  return specs.map((spec, i) => newRevision(spec, NS, i + 1, 0));
}

describe('registerRevision', () => {
  it('creates the first revision (number 1) and names it in the status fields', async () => {
    const store = memoryRevisionStore();
    const registration = await registerRevision(V1, [], store);
    expect(registration).toMatchObject({ latestRevision: currentRevisionName(V1), collisionCount: 0, writes: 1 });
    expect(store.writes).toEqual([{ kind: 'create', target: currentRevisionName(V1) }]);
    expect(store.revisions()).toEqual([expect.objectContaining({ revision: 1, metadata: expect.objectContaining({ name: currentRevisionName(V1), labels: expect.objectContaining({ [LABEL_SIDECARSET_NAME]: 'test-sidecarset' }) }) })]);
    expect(registration.history.map(nameOf)).toEqual([currentRevisionName(V1)]);
  });

  it('reuses the newest revision when it records the spec: no write', async () => {
    const store = memoryRevisionStore(historyOf(V1, V2));
    const registration = await registerRevision(V2, await store.list('test-sidecarset'), store);
    expect(registration).toMatchObject({ latestRevision: currentRevisionName(V2), collisionCount: 0, writes: 0 });
    expect(store.writes).toEqual([]);
  });

  it('creates the next number for a new spec', async () => {
    const store = memoryRevisionStore(historyOf(V1, V2));
    const registration = await registerRevision(V3, await store.list('test-sidecarset'), store);
    expect(registration.latestRevision).toBe(currentRevisionName(V3));
    expect((await store.get(currentRevisionName(V3)))?.revision).toBe(3);
    expect(registration.history.map(nameOf)).toEqual([V1, V2, V3].map((s) => currentRevisionName(s)));
  });

  it('bumps an older revision that records the spec (a rollback) to the next number, keeping its name', async () => {
    const store = memoryRevisionStore(historyOf(V1, V2));
    const registration = await registerRevision(V1, await store.list('test-sidecarset'), store);
    expect(registration).toMatchObject({ latestRevision: currentRevisionName(V1), writes: 1 });
    expect(store.writes).toEqual([{ kind: 'renumber', target: currentRevisionName(V1) }]);
    expect((await store.get(currentRevisionName(V1)))?.revision).toBe(3);
    expect(registration.history.map(nameOf)).toEqual([currentRevisionName(V2), currentRevisionName(V1)]);
  });

  it('resolves a name taken by other data with the next collision count, and retries under the new name', async () => {
    const squatter = newRevision(V2, NS, 9, 0);
    squatter.metadata = { ...squatter.metadata, name: currentRevisionName(V1), labels: { [LABEL_SIDECARSET_NAME]: 'someone-else' } };
    const store = memoryRevisionStore([squatter]);
    const registration = await registerRevision(V1, await store.list('test-sidecarset'), store);
    expect(registration).toMatchObject({ latestRevision: currentRevisionName(V1, 1), collisionCount: 1, writes: 1 });
    expect(currentRevisionName(V1, 1)).not.toBe(currentRevisionName(V1));
    expect(store.writes).toEqual([{ kind: 'create', target: currentRevisionName(V1, 1) }]);
  });

  it('uses the revision of that name when it holds the same data (it was not listed as the set’s)', async () => {
    const same = newRevision(V1, NS, 1, 0);
    same.metadata = { ...same.metadata, labels: {} };
    const store = memoryRevisionStore([same]);
    const registration = await registerRevision(V1, await store.list('test-sidecarset'), store);
    expect(registration).toMatchObject({ latestRevision: currentRevisionName(V1), collisionCount: 0, writes: 0 });
    expect(store.writes).toEqual([]);
  });

  it('creates again when the name was freed between the refused create and the read', async () => {
    const store = memoryRevisionStore();
    let refusals = 1;
    const racing = {
      ...store,
      create: (revision: ControllerRevision) => (refusals-- > 0 ? Promise.reject(new ObjectExistsError('exists')) : store.create(revision)),
    };
    const registration = await registerRevision(V1, [], racing);
    expect(registration).toMatchObject({ latestRevision: currentRevisionName(V1), collisionCount: 0, writes: 1 });
  });

  it('gives up, naming the set, when names keep being taken by other data', async () => {
    const store = memoryRevisionStore();
    const other = newRevision(V2, NS, 1, 0);
    const crowded = { ...store, create: () => Promise.reject(new ObjectExistsError('exists')), get: () => Promise.resolve(other) };
    await expect(registerRevision(V1, [], crowded)).rejects.toThrow(/SidecarSet test-sidecarset: 5 revision names in a row were taken by other data/);
  });

  it('moves the custom-version label onto the latest revision when it lacks it, once', async () => {
    const versioned = at('agent:1', (set) => {
      set.metadata = { ...set.metadata, labels: { [LABEL_CUSTOM_VERSION]: 'v7' } };
    });
    // Registered before the set carried the label: the same data, reused.
    const store = memoryRevisionStore(historyOf(V1));
    const first = await registerRevision(versioned, await store.list('test-sidecarset'), store);
    expect(first).toMatchObject({ latestRevision: currentRevisionName(V1), writes: 1 });
    expect((await store.get(first.latestRevision))?.metadata?.labels?.[LABEL_CUSTOM_VERSION]).toBe('v7');
    const second = await registerRevision(versioned, await store.list('test-sidecarset'), store);
    expect(second.writes).toBe(0);
    expect(store.writes).toEqual([{ kind: 'label', target: currentRevisionName(V1) }]);
  });

  it('creates a new revision with the custom-version label already on it: no label write', async () => {
    const versioned = at('agent:1', (set) => {
      set.metadata = { ...set.metadata, labels: { [LABEL_CUSTOM_VERSION]: 'v7' } };
    });
    const store = memoryRevisionStore();
    const registration = await registerRevision(versioned, [], store);
    expect(registration.writes).toBe(1);
    expect(store.revisions()[0]?.metadata?.labels?.[LABEL_CUSTOM_VERSION]).toBe('v7');
  });

  it.each<[string, (store: ReturnType<typeof memoryRevisionStore>) => object, ControllerRevision[], SidecarSet]>([
    ['the create fails', () => ({ create: () => Promise.reject(new Error('the API server answered 403')) }), [], V1],
    ['the renumber conflicts', () => ({ setNumber: () => Promise.reject(new Error('it changed since it was read')) }), historyOf(V1, V2), V1],
    ['the read after a taken name fails', () => ({ create: () => Promise.reject(new ObjectExistsError('exists')), get: () => Promise.reject(new Error('the API server answered 500')) }), [], V1],
  ])('rejects when %s (the caller writes no status)', async (_, faults, stored, set) => {
    const store = memoryRevisionStore(stored);
    await expect(registerRevision(set, await store.list('test-sidecarset'), { ...store, ...faults(store) })).rejects.toThrow(/403|changed since|500/);
  });
});

describe('registering reconcile after reconcile in one process (memoisedRevisionFacts)', () => {
  /** The set as the API server stores it: a uid and a resourceVersion. */
  const stored = (set: SidecarSet, resourceVersion: string): SidecarSet => ({ ...set, metadata: { ...set.metadata, uid: 'uid-1', resourceVersion } });
  /** Counts every read of the revisions' data, which is what encoding them again costs. */
  function counted(revisions: ControllerRevision[]): { revisions: ControllerRevision[]; reads: () => number } {
    let reads = 0;
    const out = revisions.map((revision) => {
      const { data, ...rest } = revision;
      const copy: ControllerRevision = { ...rest };
      Object.defineProperty(copy, 'data', {
        enumerable: true,
        get: () => {
          reads++;
          return data;
        },
      });
      return copy;
    });
    return { revisions: out, reads: () => reads };
  }

  it('works out an unchanged set once and compares its stored revisions once, however many reconciles', async () => {
    const store = memoryRevisionStore(historyOf(V1, V2));
    const { revisions, reads } = counted([...(await store.list('test-sidecarset'))]);
    const { factsOf, memo } = memoisedRevisionFacts();
    const set = stored(V2, '7');
    for (let i = 0; i < 5; i++) {
      const registration = await registerRevision(set, revisions, store, undefined, factsOf);
      expect(registration).toMatchObject({ latestRevision: currentRevisionName(V2), writes: 0 });
    }
    expect(memo.computed).toBe(1);
    // The newest revision is the one compared, once: not the older one, not again on later reconciles.
    expect(reads()).toBe(1);
    expect(store.writes).toEqual([]);
  });

  it('works a changed set out again (a new resourceVersion): its new spec gets its own revision', async () => {
    const store = memoryRevisionStore(historyOf(V1));
    const { factsOf, memo } = memoisedRevisionFacts();
    expect((await registerRevision(stored(V1, '7'), await store.list('test-sidecarset'), store, undefined, factsOf)).writes).toBe(0);
    const registration = await registerRevision(stored(V2, '8'), await store.list('test-sidecarset'), store, undefined, factsOf);
    expect(registration).toMatchObject({ latestRevision: currentRevisionName(V2), writes: 1 });
    expect(store.writes).toEqual([{ kind: 'create', target: currentRevisionName(V2) }]);
    // And back (a rollback): the first revision is bumped, not the second reused.
    const back = await registerRevision(stored(V1, '9'), await store.list('test-sidecarset'), store, undefined, factsOf);
    expect(back).toMatchObject({ latestRevision: currentRevisionName(V1), writes: 1 });
    expect(store.writes.at(-1)).toEqual({ kind: 'renumber', target: currentRevisionName(V1) });
    expect(memo.computed).toBe(3);
  });

  it('compares a stored revision again when it changed (a new resourceVersion of the same uid)', async () => {
    const { factsOf } = memoisedRevisionFacts();
    const set = stored(V1, '7');
    const [recording] = historyOf(V1);
    const [other] = historyOf(V2);
    const version = (revision: ControllerRevision | undefined, resourceVersion: string): ControllerRevision => ({ ...revision, metadata: { ...revision?.metadata, name: currentRevisionName(V1), uid: 'revision-1', resourceVersion } });
    const store = memoryRevisionStore();
    expect((await registerRevision(set, [version(recording, '1')], store, undefined, factsOf)).writes).toBe(0);
    // The same uid at another resourceVersion, now holding other data: it no longer records the spec.
    await expect(registerRevision(set, [version(other, '2')], store, undefined, factsOf)).resolves.toMatchObject({ writes: 1 });
  });

  it('works out a set that does not say its stored version (no uid or resourceVersion) every time', async () => {
    const store = memoryRevisionStore(historyOf(V1));
    const { factsOf, memo } = memoisedRevisionFacts();
    await registerRevision(V1, await store.list('test-sidecarset'), store, undefined, factsOf);
    // The same object with another spec: nothing was kept for it.
    const registration = await registerRevision(V2, await store.list('test-sidecarset'), store, undefined, factsOf);
    expect(registration.latestRevision).toBe(currentRevisionName(V2));
    expect(memo.computed).toBe(2);
    expect(memo.size).toBe(0);
  });
});

describe('trimHistory', () => {
  const limited = (limit: number, extra: (set: SidecarSet) => void = () => undefined) =>
    at('agent:5', (set) => {
      set.spec = { ...set.spec!, revisionHistoryLimit: limit };
      extra(set);
    });
  const five = () => historyOf(at('agent:1'), V2, V3, at('agent:4'), at('agent:5'));
  const stored = async (store: ReturnType<typeof memoryRevisionStore>) => [...(await store.list('test-sidecarset'))].sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));

  it('deletes the oldest revisions past revisionHistoryLimit', async () => {
    const store = memoryRevisionStore(five());
    expect(await trimHistory(limited(3), await stored(store), [], store)).toEqual({ deleted: 2 });
    expect(store.writes).toEqual([nameOf(five()[0]), nameOf(five()[1])].map((target) => ({ kind: 'delete', target })));
  });

  it('keeps the revisions pods record and deletes the next oldest instead', async () => {
    const store = memoryRevisionStore(five());
    expect(await trimHistory(limited(3), await stored(store), [nameOf(five()[0])], store)).toEqual({ deleted: 2 });
    expect(store.writes.map((w) => w.target)).toEqual([nameOf(five()[1]), nameOf(five()[2])]);
  });

  it('keeps the pinned revision (injectionStrategy.revision.revisionName)', async () => {
    const store = memoryRevisionStore(five());
    const pinned = limited(4, (set) => {
      set.spec = { ...set.spec!, injectionStrategy: { revision: { revisionName: nameOf(five()[0]) } } };
    });
    await trimHistory(pinned, await stored(store), [], store);
    expect(store.writes.map((w) => w.target)).toEqual([nameOf(five()[1])]);
  });

  it('never deletes the newest, and says why the limit was not reached when revisions in use stand in the way', async () => {
    const store = memoryRevisionStore(five());
    const inUse = five().slice(0, 4).map(nameOf);
    expect(await trimHistory(limited(1), await stored(store), inUse, store)).toEqual({ deleted: 0, problem: '4 revision(s) over revisionHistoryLimit are still in use by pods or pinned, so they are kept' });
    expect(store.writes).toEqual([]);
  });

  it('deletes nothing within the limit (default 10)', async () => {
    const store = memoryRevisionStore(five());
    expect(await trimHistory(V3, await stored(store), [], store)).toEqual({ deleted: 0 });
  });

  it('stops at a failed delete and reports it with what was deleted before', async () => {
    const store = memoryRevisionStore(five());
    let calls = 0;
    const failing = { ...store, delete: (r: ControllerRevision) => (++calls === 2 ? Promise.reject(new Error('the API server answered 500')) : store.delete(r)) };
    expect(await trimHistory(limited(2), await stored(store), [], failing)).toEqual({ deleted: 1, problem: `delete ControllerRevision ${nameOf(five()[1])}: the API server answered 500` });
  });
});
