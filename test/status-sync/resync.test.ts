/**
 * The reconcile's rules, table by table: what is written, what is not, and how it
 * reacts to a list that fails, expires (410) or a write that conflicts (409).
 */
import { describe, expect, it } from '@jest/globals';
import { memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { memoryPodPages, memoryStatusWriter } from '../../lib/adapters/memory-status-sync.ts';
import type { Pod } from '../../lib/kube/types.ts';
import type { NamespaceSource, PodPages, SidecarSetEventSink, SidecarSetStatusWriter } from '../../lib/ports.ts';
import { summarizePod } from '../../lib/sidecarset/status.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { ListExpiredError, StatusConflictError } from '../../lib/ports/errors.ts';
import { canaryEvents } from '../../lib/status-sync/canary-events.ts';
import { notInjectedEvents, type DueEvent, type NotInjectedEvents } from '../../lib/status-sync/not-injected.ts';
import { runResync } from '../../lib/status-sync/resync.ts';
import { hashOf, listedPod, memoryDeps, namespace, storedSet } from '../../testkit/status-sync-objects.ts';

const web = storedSet('web-agent');
const db = storedSet('db-agent', { selector: { matchLabels: { app: 'db' } } });

/** web-agent: 3 matched (2 updated, 1 of them ready... see below); db-agent: 1 matched. */
const pods: Pod[] = [
  listedPod({ name: 'w1', injected: { 'web-agent': hashOf(web) } }),
  listedPod({ name: 'w2', injected: { 'web-agent': hashOf(web) }, ready: false }),
  listedPod({ name: 'w3', injected: { 'web-agent': 'old-hash' } }),
  listedPod({ name: 'd1', labels: { app: 'db' }, injected: { 'db-agent': hashOf(db) } }),
];
const webStatus = { observedGeneration: 1, matchedPods: 3, updatedPods: 2, readyPods: 2, updatedReadyPods: 1 };
const dbStatus = { observedGeneration: 1, matchedPods: 1, updatedPods: 1, readyPods: 1, updatedReadyPods: 1 };

/** Pages of 2 pods; the list throws `error` instead of page `failAt` (0-based) on the first `times` lists. */
function failingPods(all: Pod[], failAt: number, error: () => Error, times = Infinity): PodPages & { lists: number } {
  const state = {
    lists: 0,
    async *pages() {
      state.lists++;
      const failing = state.lists <= times;
      for (let page = 0; page * 2 < all.length; page++) {
        await Promise.resolve();
        if (failing && page === failAt) throw error();
        yield all.slice(page * 2, page * 2 + 2).map(summarizePod);
      }
    },
  };
  return state;
}

describe('a resync', () => {
  it('writes every status that differs and reports what it did', async () => {
    const { deps, statuses } = memoryDeps([web, db], pods);
    const result = await runResync(deps);
    expect(statuses.writes).toEqual([
      { name: 'web-agent', status: webStatus },
      { name: 'db-agent', status: dbStatus },
    ]);
    expect(result).toMatchObject({ setsSeen: 2, podsSeen: 4, statusesWritten: 2, statusesUnchanged: 0, podListAttempts: 1, errors: [], notInjected: {} });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("reports each counted set's pod counts, as its status shows them, for metrics", async () => {
    const { deps } = memoryDeps([web, db], pods);
    const result = await runResync(deps);
    const counts = ({ matchedPods, updatedPods, readyPods, updatedReadyPods }: typeof webStatus) => ({ matchedPods, updatedPods, readyPods, updatedReadyPods });
    expect(result.sets).toEqual({ 'web-agent': counts(webStatus), 'db-agent': counts(dbStatus) });
  });

  it('writes nothing when every stored status is already right', async () => {
    const { deps, statuses } = memoryDeps([{ ...web, status: webStatus }, { ...db, status: dbStatus }], pods);
    const result = await runResync(deps);
    expect(statuses.writes).toEqual([]);
    expect(result).toMatchObject({ statusesWritten: 0, statusesUnchanged: 2, errors: [] });
  });

  it('writes nothing on a second resync over what the first one wrote', async () => {
    const first = memoryDeps([web, db], pods);
    await runResync(first.deps);
    const second = memoryDeps(first.statuses.sets(), pods);
    expect((await runResync(second.deps)).statusesWritten).toBe(0);
    expect(second.statuses.writes).toEqual([]);
  });

  it('keeps the status fields it does not compute and sends the whole status', async () => {
    const { deps, statuses } = memoryDeps([{ ...web, status: { latestRevision: 'web-agent-7c9', collisionCount: 1, matchedPods: 9 } }], pods);
    await runResync(deps);
    expect(statuses.writes[0]?.status).toEqual({ latestRevision: 'web-agent-7c9', collisionCount: 1, ...webStatus });
  });

  it.each<[string, number, () => Error]>([
    ['the first page is refused', 0, () => new Error('the API server answered 403: pods is forbidden')],
    ['the connection drops on the second page', 1, () => new Error('the request failed: fetch failed: other side closed')],
    ['the deadline passes halfway', 1, () => new DOMException('The operation was aborted due to timeout', 'TimeoutError')],
  ])('writes no status at all when %s', async (_name, failAt, error) => {
    const { deps, statuses } = memoryDeps([web, db], pods, { pods: failingPods(pods, failAt, error) });
    const result = await runResync(deps);
    expect(statuses.writes).toEqual([]);
    expect(result.statusesWritten).toBe(0);
    expect(result.podListAttempts).toBe(1);
    expect(result.errors).toEqual([{ operation: 'list pods', message: expect.stringContaining(error().message) }]);
    expect(result.errors[0]?.message).toContain('no status is written this resync');
  });

  it('starts the list again when its continue token expires, and counts each pod once', async () => {
    const list = failingPods(pods, 1, () => new ListExpiredError('continue token expired'), 2);
    const { deps, statuses } = memoryDeps([web, db], pods, { pods: list });
    const result = await runResync(deps);
    expect(list.lists).toBe(3);
    expect(result).toMatchObject({ podListAttempts: 3, podsSeen: 4, statusesWritten: 2, errors: [] });
    expect(statuses.writes.map((w) => w.status)).toEqual([webStatus, dbStatus]);
  });

  it('gives up after three expired lists and writes nothing', async () => {
    const list = failingPods(pods, 1, () => new ListExpiredError('continue token expired'));
    const { deps, statuses } = memoryDeps([web, db], pods, { pods: list });
    const result = await runResync(deps);
    expect(list.lists).toBe(3);
    expect(statuses.writes).toEqual([]);
    expect(result.errors).toEqual([{ operation: 'list pods', message: expect.stringContaining('the list expired 3 times in a row') }]);
  });

  it('writes nothing when the SidecarSets cannot be listed', async () => {
    const { deps, statuses } = memoryDeps([web], pods, { sidecarSets: { list: () => Promise.reject(new Error('the API server answered 503')) } });
    const result = await runResync(deps);
    expect(statuses.writes).toEqual([]);
    expect(result).toMatchObject({ setsSeen: 0, podListAttempts: 0, errors: [{ operation: 'list SidecarSets', message: 'the API server answered 503' }] });
  });

  describe('on a conflict (409)', () => {
    it('reads the set again and writes for its new version when only its image changed', async () => {
      // Listed at resourceVersion 1; by the time of the write the image (so the hash) changed.
      const newer = storedSet('web-agent', { containers: [{ name: 'web-agent-sidecar', image: 'web-agent:2.0' }] });
      newer.metadata = { ...newer.metadata, generation: 2, resourceVersion: '2' };
      const statuses = memoryStatusWriter([newer]);
      const { deps } = memoryDeps([web], pods, { statuses });
      const result = await runResync(deps);
      expect(result).toMatchObject({ statusesWritten: 1, errors: [] });
      // No pod runs the new hash yet: nothing is updated any more.
      expect(statuses.writes).toEqual([{ name: 'web-agent', status: { observedGeneration: 2, matchedPods: 3, updatedPods: 0, readyPods: 2, updatedReadyPods: 0 } }]);
    });

    it('writes nothing when the new version already has the right status', async () => {
      const newer = { ...web, metadata: { ...web.metadata, resourceVersion: '2' }, status: webStatus };
      const statuses = memoryStatusWriter([newer]);
      const result = await runResync(memoryDeps([web], pods, { statuses }).deps);
      expect(result).toMatchObject({ statusesWritten: 0, statusesUnchanged: 1, errors: [] });
    });

    it('leaves a set whose selector changed for the next resync, and writes the others', async () => {
      const newer = storedSet('web-agent', { selector: { matchLabels: { app: 'shop' } } });
      newer.metadata = { ...newer.metadata, resourceVersion: '2' };
      const statuses = memoryStatusWriter([newer, db]);
      const result = await runResync(memoryDeps([web, db], pods, { statuses }).deps);
      expect(statuses.writes.map((w) => w.name)).toEqual(['db-agent']);
      expect(result.errors).toEqual([{ sidecarSet: 'web-agent', operation: 'patch status', message: expect.stringContaining('changed which pods it selects') }]);
    });

    it('gives up after four conflicting writes', async () => {
      let attempts = 0;
      const statuses: SidecarSetStatusWriter = {
        patchStatus: (name) => {
          attempts++;
          return Promise.reject(new StatusConflictError(name, 'changed'));
        },
        get: () => Promise.resolve(web),
      };
      const result = await runResync(memoryDeps([web], pods, { statuses }).deps);
      expect(attempts).toBe(4);
      expect(result.errors).toEqual([{ sidecarSet: 'web-agent', operation: 'patch status', message: 'the SidecarSet kept changing: 4 writes conflicted' }]);
    });

    it('forgets a set deleted in the meantime, without an error', async () => {
      const statuses: SidecarSetStatusWriter = {
        patchStatus: (name) => Promise.reject(new StatusConflictError(name, 'changed')),
        get: () => Promise.resolve(undefined),
      };
      const result = await runResync(memoryDeps([web], pods, { statuses }).deps);
      expect(result).toMatchObject({ statusesWritten: 0, errors: [] });
    });
  });

  it('writes the other sets when one write fails', async () => {
    const memory = memoryStatusWriter([web, db]);
    const statuses: SidecarSetStatusWriter = {
      patchStatus: (name, ...rest) => (name === 'web-agent' ? Promise.reject(new Error('the API server answered 500')) : memory.patchStatus(name, ...rest)),
      get: (name) => memory.get(name),
    };
    const result = await runResync(memoryDeps([web, db], pods, { statuses }).deps);
    expect(memory.writes.map((w) => w.name)).toEqual(['db-agent']);
    expect(result).toMatchObject({ statusesWritten: 1, errors: [{ sidecarSet: 'web-agent', operation: 'patch status', message: 'the API server answered 500' }] });
  });

  it('does not count a set deleted before its write as written', async () => {
    const statuses = memoryStatusWriter([db]);
    const result = await runResync(memoryDeps([web, db], pods, { statuses }).deps);
    expect(result).toMatchObject({ statusesWritten: 1, errors: [] });
  });

  it('writes nothing more once its deadline has passed, and says so once', async () => {
    const controller = new AbortController();
    const list = memoryPodPages(pods);
    const { deps, statuses } = memoryDeps([web, db], pods, {
      pods: {
        async *pages(signal) {
          yield* list.pages(signal);
          controller.abort(new Error('deadline'));
        },
      },
    });
    const result = await runResync(deps, { signal: controller.signal });
    expect(statuses.writes).toEqual([]);
    expect(result.errors).toEqual([{ operation: 'patch status', message: 'the resync was stopped (deadline) before 2 statuses were compared and written' }]);
  });

  describe('with a namespaceSelector', () => {
    const prodOnly = storedSet('prod-agent', { namespaceSelector: { matchLabels: { env: 'prod' } } });
    const nsPods = [
      listedPod({ name: 'a', namespace: 'shop', injected: { 'prod-agent': hashOf(prodOnly), 'web-agent': hashOf(web) } }),
      listedPod({ name: 'b', namespace: 'lab', injected: { 'web-agent': hashOf(web) } }),
    ];

    it('counts pods by their Namespace labels, reading each namespace once', async () => {
      const asked: string[][] = [];
      const source: NamespaceSource = {
        labels(names) {
          asked.push([...names]);
          return Promise.resolve(new Map(names.map((n) => [n, n === 'shop' ? { env: 'prod' } : { env: 'dev' }])));
        },
      };
      const { deps, statuses } = memoryDeps([prodOnly, web], [...nsPods, ...nsPods], { namespaces: source });
      await runResync(deps);
      expect(statuses.writes.map((w) => [w.name, w.status.matchedPods])).toEqual([
        ['prod-agent', 2],
        ['web-agent', 4],
      ]);
      expect(asked).toEqual([['shop', 'lab']]);
    });

    it('never reads namespaces when no set needs their labels', async () => {
      const source: NamespaceSource = { labels: () => Promise.reject(new Error('must not be called')) };
      const result = await runResync(memoryDeps([web], nsPods, { namespaces: source }).deps);
      expect(result.errors).toEqual([]);
    });

    it('skips only the sets that need labels when they cannot be read', async () => {
      const source: NamespaceSource = { labels: () => Promise.reject(new Error('the API server answered 403')) };
      const { deps, statuses } = memoryDeps([prodOnly, web], nsPods, { namespaces: source });
      const result = await runResync(deps);
      expect(statuses.writes.map((w) => w.name)).toEqual(['web-agent']);
      expect(result.errors).toEqual([{ sidecarSet: 'prod-agent', operation: 'read namespace labels', message: 'the API server answered 403' }]);
    });

    it('skips a set whose pod is in a namespace that no longer exists', async () => {
      const { deps, statuses } = memoryDeps([prodOnly, web], nsPods, { namespaceList: [namespace('lab')] });
      const result = await runResync(deps);
      expect(statuses.writes.map((w) => w.name)).toEqual(['web-agent']);
      expect(result.errors).toEqual([{ sidecarSet: 'prod-agent', operation: 'match pods', message: expect.stringContaining('namespace "shop" is unknown') }]);
    });
  });

  describe('pods a set applies to but never injected', () => {
    const bare = (name: string) => listedPod({ name, namespace: 'shop' });

    it('counts them per set and raises one warning event on the set, naming no pod (its events live in default)', async () => {
      const { deps, events } = memoryDeps([web, db], [...pods, bare('x1'), bare('x2')]);
      const result = await runResync(deps);
      expect(result.notInjected).toEqual({ 'web-agent': 2 });
      expect(events.events).toEqual([
        {
          sidecarSet: { name: 'web-agent', uid: 'uid-web-agent' },
          type: 'Warning',
          reason: 'PodsNotInjected',
          message: expect.stringMatching(/^2 pods match this SidecarSet but were created without its sidecars .*, in 1 namespace; recreate them to inject\. /),
        },
      ]);
      expect(events.events[0]?.message).not.toMatch(/x1|x2|shop/);
    });

    it('tells each namespace of its own pods, a few of many and how many more, with their uids', async () => {
      const inner = notInjectedEvents();
      const due: DueEvent[] = [];
      const notices: NotInjectedEvents = { due: (f, p) => { const d = inner.due(f, p); due.push(...d); return d; }, reported: (n) => { inner.reported(n); } };
      const many = [...Array.from({ length: 8 }, (_, i) => bare(`x${i}`)), listedPod({ name: 'y0', namespace: 'bank' })];
      many.forEach((pod) => (pod.metadata = { ...pod.metadata, uid: `uid-${pod.metadata?.name ?? ''}` }));
      const { deps } = memoryDeps([web], many, { notices });
      await runResync(deps);
      expect(due[0]?.podEvents.map((e) => [e.pod.namespace, e.pod.name, e.reason, e.message])).toEqual([
        ['shop', 'x0', 'PodNotInjected', expect.stringMatching(/^8 pods in this namespace match SidecarSet web-agent .*: x0, x1, x2, x3, x4 and 3 more$/)],
        ['bank', 'y0', 'PodNotInjected', expect.stringMatching(/^1 pod in this namespace matches SidecarSet web-agent .*: y0$/)],
      ]);
      expect(due[0]?.podEvents.map((e) => e.pod.uid)).toEqual(['uid-x0', 'uid-y0']);
    });

    it('does not repeat the event while nothing changes, and says when they are gone', async () => {
      const { deps, events } = memoryDeps([web], [...pods, bare('x1')]);
      await runResync(deps);
      await runResync(deps);
      expect(events.events.map((e) => e.reason)).toEqual(['PodsNotInjected']);
      await runResync({ ...deps, pods: memoryPodPages(pods) });
      expect(events.events.map((e) => [e.type, e.reason])).toEqual([
        ['Warning', 'PodsNotInjected'],
        ['Normal', 'PodsInjected'],
      ]);
    });

    it('reports an event that cannot be recorded, still writes the status, and tries again next resync', async () => {
      let fail = true;
      const recorded: string[] = [];
      const sink: SidecarSetEventSink = {
        record: (event) => {
          if (fail) return Promise.reject(new Error('the API server answered 403: events is forbidden'));
          recorded.push(event.reason);
          return Promise.resolve();
        },
      };
      const { deps, statuses } = memoryDeps([web], [...pods, bare('x1')], { events: sink });
      const result = await runResync(deps);
      expect(statuses.writes).toHaveLength(1);
      expect(result.errors).toEqual([{ sidecarSet: 'web-agent', operation: 'record event', message: 'the API server answered 403: events is forbidden' }]);
      fail = false;
      await runResync({ ...deps, sidecarSets: memorySidecarSetSource(statuses.sets()) });
      expect(recorded).toEqual(['PodsNotInjected']);
    });

    it("are not reported for a base whose canary took them (Kruise's base counts only its own pods); the canary counts them", async () => {
      const canary: SidecarSet = storedSet('web-canary', { updateStrategy: { type: 'NotUpdate' } });
      canary.metadata = { ...canary.metadata, annotations: { ...canary.metadata?.annotations, 'apps.kruise.io/sidecarset-canary': 'true', 'apps.kruise.io/sidecarset-base': 'web-agent' } };
      const taken = [listedPod({ name: 'c1', injected: { 'web-canary': hashOf(canary) } }), listedPod({ name: 'c2', injected: { 'web-canary': hashOf(canary) } })];
      const { deps, events, statuses } = memoryDeps([web, canary], [...taken, bare('x1')]);
      const result = await runResync(deps);
      // x1 (no set injected it) is the canary's to inject now, not the base's.
      expect(result.notInjected).toEqual({ 'web-canary': 1 });
      expect(events.events.map((e) => [e.sidecarSet.name, e.reason])).toEqual([['web-canary', 'PodsNotInjected']]);
      expect(statuses.sets().map((s) => [s.metadata?.name, s.status?.matchedPods])).toEqual([
        ['web-agent', 0],
        ['web-canary', 2],
      ]);
    });

    it('tells the base, once, which canary took how many of its pods, and says when none is left', async () => {
      const canary: SidecarSet = storedSet('web-canary', { updateStrategy: { type: 'NotUpdate' } });
      canary.metadata = { ...canary.metadata, annotations: { ...canary.metadata?.annotations, 'apps.kruise.io/sidecarset-canary': 'true', 'apps.kruise.io/sidecarset-base': 'web-agent' } };
      const taken = [listedPod({ name: 'c1', injected: { 'web-canary': hashOf(canary) } }), listedPod({ name: 'c2', injected: { 'web-canary': hashOf(canary) } })];
      const { deps, events } = memoryDeps([web, canary], [...pods, ...taken], { canaries: canaryEvents() });
      await runResync(deps);
      await runResync(deps);
      const told = () => events.events.filter((e) => e.reason.endsWith('TakenByCanary'));
      expect(told().map((e) => [e.sidecarSet.name, e.type, e.reason, e.message])).toEqual([
        ['web-agent', 'Warning', 'PodsTakenByCanary', expect.stringMatching(/^2 pods this SidecarSet selects run a canary's sidecars instead of its own \(canary SidecarSets naming web-agent in apps.kruise.io\/sidecarset-base: web-canary took 2\)/)],
      ]);
      await runResync({ ...deps, pods: memoryPodPages(pods, 2) });
      expect(told().map((e) => [e.sidecarSet.name, e.reason]).slice(1)).toEqual([['web-agent', 'NoPodsTakenByCanary']]);
    });

    it('are not reported for a set whose injection is paused', async () => {
      const paused: SidecarSet = storedSet('web-agent', { injectionStrategy: { paused: true } });
      const { deps, events } = memoryDeps([paused], [bare('x1')]);
      expect((await runResync(deps)).notInjected).toEqual({});
      expect(events.events).toEqual([]);
    });
  });
});
