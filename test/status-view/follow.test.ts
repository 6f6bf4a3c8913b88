/**
 * --watch over the ports in memory: a look after each change of a
 * SidecarSet or of a pod in a set's scope, nothing while nothing changes,
 * the end on a failed look or the signal, and no busy loop when watches fail.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { memoryNamespaceSource } from '../../lib/adapters/memory.ts';
import { memoryPods } from '../../lib/adapters/memory-rollout.ts';
import { memorySidecarSets } from '../../lib/adapters/memory-status-view.ts';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { followLooks, type FollowEnd, type FollowOptions } from '../../lib/status-view/follow.ts';
import { lookOnce, type Look, type StatusViewDeps } from '../../lib/status-view/look.ts';
import { namespace } from '../../testkit/status-sync-objects.ts';
import { rolloutPod, rolloutSet } from '../rollout/fixtures.ts';

const FAST: FollowOptions = { debounceMs: 0, minGapMs: 0, resyncMs: 600_000, watchRetryMs: [0] };

function world(pods: Pod[] = []) {
  const set = rolloutSet({ name: 'logs' });
  const sets = memorySidecarSets([set]);
  const cluster = memoryPods(pods.length > 0 ? pods : [rolloutPod(set, { name: 'a' }), rolloutPod(set, { name: 'b', updated: true })]);
  let namespaceReads = 0;
  const deps: StatusViewDeps = {
    sets,
    pods: cluster.source,
    namespaces: () => {
      namespaceReads++;
      return memoryNamespaceSource([namespace('default', { team: 'a' })]);
    },
  };
  return { set, sets, cluster, deps, namespaceReads: () => namespaceReads };
}

/** Follows until `until` says a look is the one awaited (or 10 s, a generous bound), then stops. */
async function followUntil(deps: StatusViewDeps, first: Look, options: FollowOptions, act: () => void, until: (look: Look) => boolean): Promise<{ looks: Look[]; ended: FollowEnd }> {
  const stop = new AbortController();
  const looks: Look[] = [];
  const guard = setTimeout(() => { stop.abort(); }, 10_000);
  const running = followLooks(deps, first, (look) => {
    looks.push(look);
    if (until(look)) stop.abort();
  }, options, stop.signal);
  act();
  const ended = await running;
  clearTimeout(guard);
  return { looks, ended };
}

const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

describe('one look', () => {
  it('lists the sets and their scope’s pods, and reads no namespace when no set has a namespaceSelector', async () => {
    const { deps, namespaceReads } = world();
    const look = await lookOnce(deps);
    expect(look.rows.map((r) => [r.name, r.counts?.matchedPods, r.counts?.updatedPods])).toEqual([['logs', 2, 1]]);
    expect(look.scopes).toEqual([{ scope: { labelSelector: 'app=web' }, resourceVersion: '2' }]);
    expect(namespaceReads()).toBe(0);
  });

  it('reads the namespaces once when a set has a namespaceSelector', async () => {
    const w = world();
    const scoped = rolloutSet({ name: 'logs' });
    scoped.spec = { ...scoped.spec, namespaceSelector: { matchLabels: { team: 'a' } } };
    w.sets.replace([scoped]);
    const look = await lookOnce(w.deps);
    expect(look.rows[0]?.counts?.matchedPods).toBe(2);
    expect(w.namespaceReads()).toBe(1);
  });

  it('fails as its first list fails', async () => {
    const { sets, deps } = world();
    sets.failLists(new KubeApiError('list SidecarSets', 'the request failed: connect ECONNREFUSED 127.0.0.1:1'));
    await expect(lookOnce(deps)).rejects.toThrow('ECONNREFUSED');
  });
});

describe('following', () => {
  it('looks again when a SidecarSet changes', async () => {
    const { set, sets, deps } = world();
    const first = await lookOnce(deps);
    const paused = { ...set, spec: { ...set.spec, updateStrategy: { type: 'RollingUpdate' as const, paused: true } } };
    const { looks, ended } = await followUntil(deps, first, FAST, () => { sets.replace([paused]); }, (look) => look.rows[0]?.state === 'Paused');
    expect(ended).toEqual({ end: 'stopped' });
    expect(looks.at(-1)?.rows[0]?.state).toBe('Paused');
  });

  it('looks again when a pod in a set’s scope changes', async () => {
    const { cluster, deps } = world();
    const first = await lookOnce(deps);
    expect(first.rows[0]?.counts?.readyPods).toBe(2);
    const { looks } = await followUntil(
      deps,
      first,
      FAST,
      () => {
        cluster.update('default', 'a', (pod) => {
          pod.status = { ...pod.status, conditions: [{ type: 'Ready', status: 'False' }] };
        });
      },
      (look) => look.rows[0]?.counts?.readyPods === 1,
    );
    expect(looks.at(-1)?.rows[0]?.counts?.readyPods).toBe(1);
  });

  it('does not look while nothing changes, until the resync', async () => {
    const { sets, deps } = world();
    const first = await lookOnce(deps);
    const stop = new AbortController();
    controllers.push(stop);
    const before = sets.lists;
    const running = followLooks(deps, first, () => undefined, { ...FAST, resyncMs: 60_000 }, stop.signal);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sets.lists).toBe(before);
    stop.abort();
    expect(await running).toEqual({ end: 'stopped' });
  });

  it('looks at the resync without a change', async () => {
    const { deps } = world();
    const first = await lookOnce(deps);
    const { looks } = await followUntil(deps, first, { ...FAST, resyncMs: 50 }, () => undefined, () => true);
    expect(looks).toHaveLength(1);
  });

  it('ends with the error when a look fails: the connection is lost', async () => {
    const { sets, deps } = world();
    const first = await lookOnce(deps);
    const lost = new KubeApiError('list SidecarSets', 'the request failed: connect ECONNREFUSED 127.0.0.1:1');
    const stop = new AbortController();
    controllers.push(stop);
    const running = followLooks(deps, first, () => undefined, FAST, stop.signal);
    sets.failLists(lost);
    sets.replace([]);
    expect(await running).toEqual({ end: 'lost', error: lost });
  });

  it('stops at once when the signal ends it, mid-wait', async () => {
    const { deps } = world();
    const first = await lookOnce(deps);
    const stop = new AbortController();
    const started = performance.now();
    const running = followLooks(deps, first, () => undefined, { ...FAST, resyncMs: 600_000 }, stop.signal);
    setTimeout(() => { stop.abort(); }, 20);
    expect(await running).toEqual({ end: 'stopped' });
    // Nothing pending keeps it: far under the resync.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('polls with growing pauses, never in a busy loop, while watches fail', async () => {
    const { sets, deps } = world();
    sets.failWatches(true);
    const first = await lookOnce(deps);
    const stop = new AbortController();
    controllers.push(stop);
    const before = sets.lists;
    const running = followLooks(deps, first, () => undefined, { ...FAST, watchRetryMs: [0, 100] }, stop.signal);
    await new Promise((resolve) => setTimeout(resolve, 500));
    stop.abort();
    await running;
    // One look at once, then one per 100 ms: at most 6 in 500 ms; a busy loop would make thousands.
    const looks = sets.lists - before;
    expect(looks).toBeGreaterThanOrEqual(1);
    expect(looks).toBeLessThanOrEqual(7);
  });
});
