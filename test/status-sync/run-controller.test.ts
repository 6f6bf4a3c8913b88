/**
 * The controller over one set's ports in memory: it follows a set while its
 * pods change until the rollout finishes, lets a stalled set go, runs an
 * admitted change once it is visible, never runs two reconciles of one set at
 * once, and ends with its signal.
 */
import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import { admittedQueue } from '../../lib/status-sync/admitted-queue.ts';
import { runController, type ControllerOptions } from '../../lib/status-sync/run-controller.ts';
import { NEW_IMAGE, podsOf } from '../rollout/fixtures.ts';
import { hotSet, injected, kubelet } from '../rollout/hot-fixtures.ts';
import { storedRolloutSet, world } from './rollout-world.ts';

const SET = 'test-sidecarset';
/** Only a watched change (or an admitted one) wakes the loop: the interval is far beyond any test. */
const WATCH_ONLY: ControllerOptions = { intervalMs: 600_000, debounceMs: 0, stallMs: 600_000, visibleTimeoutMs: 20_000 };
/** Ends a loop a failing test left running, well after any passing one is done. */
const safety = () => AbortSignal.timeout(20_000);

/** What a kubelet does after an image change: the sidecar restarts on the new image and the pod is ready again. */
function restarted(pod: Pod): void {
  pod.status = {
    ...pod.status,
    conditions: (pod.status?.conditions ?? []).map((c) => (c.type === 'Ready' ? { ...c, status: 'True' } : c)),
    containerStatuses: (pod.status?.containerStatuses ?? []).map((s) => (s.name === 'sidecar1' ? { ...s, image: NEW_IMAGE, imageID: `id-new-${NEW_IMAGE}`, ready: true } : s)),
  };
}

/** The kubelet's write as it restarts the sidecar: the new image running, the pod not ready yet. */
function restarting(pod: Pod): void {
  restarted(pod);
  pod.status = { ...pod.status, conditions: (pod.status?.conditions ?? []).map((c) => (c.type === 'Ready' ? { ...c, status: 'False' } : c)) };
}

/** Polls until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** The kubelet: each pod patched changes a moment later by `change` (a change the loop did not make). The names patched, in order. */
function kubeletAfterWrites(w: ReturnType<typeof world>, change: (pod: Pod) => void): string[] {
  const pods = w.deps.rollout.pods;
  const written: string[] = [];
  w.deps.rollout.pods = {
    ...pods,
    patch: async (namespace, name, operations, signal) => {
      const write = await pods.patch(namespace, name, operations, signal);
      written.push(name);
      setTimeout(() => w.cluster.update(namespace, name, change), 5);
      return write;
    },
  };
  return written;
}

/**
 * The pod watch tells each change of the pods but `onTime` `lagMs` late (an
 * API server's watch behind the writes), in order: a change on time waits
 * for none that came before it (a test's own trigger).
 */
function lagging(w: ReturnType<typeof world>, lagMs: number, onTime: string): void {
  const setPods = w.deps.rollout.setPods;
  w.deps.rollout.setPods = {
    ...setPods,
    watch: (scope, rv, sink, signal) =>
      setPods.watch!(
        scope,
        rv,
        {
          change: (type, pod) => {
            if (pod.metadata?.name === onTime) sink.change(type, pod);
            else setTimeout(() => { if (!signal.aborted) sink.change(type, pod); }, lagMs);
          },
          progress: (v) => void setTimeout(() => { if (!signal.aborted) sink.progress(v); }, lagMs),
        },
        signal,
      ),
  };
}

describe('runController', () => {
  it('follows a set, reconcile after reconcile as its updated pods restart, until the rollout finished', async () => {
    const set = storedRolloutSet();
    const w = world(set, podsOf(set, 5, 0, 0));
    // The kubelet: each pod patched restarts a moment later (a change the loop did not make).
    kubeletAfterWrites(w, restarted);
    const summary = await runController([SET], w.deps, WATCH_ONLY, safety());
    expect(summary).toMatchObject({ podsUpdated: 5, conflicts: 0, stalled: [], unfinished: [], errors: [] });
    expect(summary.reconciles).toBeGreaterThanOrEqual(3);
    expect(summary.states[SET]).toMatch(/^finished/);
    expect(w.cluster.pods().every((p) => p.spec?.containers[0]?.image === NEW_IMAGE)).toBe(true);
  });

  it('wakes for a pod ready again, not for the restarts of the batch it wrote (a reconcile then finds every slot still taken)', async () => {
    const set = storedRolloutSet({ type: 'RollingUpdate', maxUnavailable: 2 });
    const w = world(set, podsOf(set, 5, 0, 0));
    // The kubelet: each pod patched restarts a moment later, not ready until told below.
    const written = kubeletAfterWrites(w, restarting);
    let reconciles = 0;
    const stop = new AbortController();
    const following = runController([SET], { ...w.deps, onReconcile: () => { reconciles++; } }, WATCH_ONLY, AbortSignal.any([stop.signal, safety()]));
    const until = async (done: () => boolean) => {
      while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    await until(() => w.cluster.pods().filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'False')).length === 2);
    // Time for a reconcile the restarts would have woken.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect({ reconciles, written }).toEqual({ reconciles: 1, written: ['p-00000', 'p-00001'] });
    // One pod ready again frees one slot: a reconcile, which writes the next pod into it.
    w.cluster.update('default', 'p-00000', restarted);
    await until(() => written.length === 3);
    expect({ reconciles, written }).toEqual({ reconciles: 2, written: ['p-00000', 'p-00001', 'p-00002'] });
    stop.abort();
    await following;
  });

  it('plans its requeued reconciles from the watched pods: the set\'s pods are listed once, not once per reconcile', async () => {
    const set = storedRolloutSet();
    const w = world(set, podsOf(set, 6, 0, 0));
    let lists = 0;
    const setPods = w.deps.rollout.setPods;
    w.deps.rollout.setPods = {
      ...setPods,
      list: (scope, signal) => {
        lists++;
        return setPods.list(scope, signal);
      },
    };
    kubeletAfterWrites(w, restarted);
    const summary = await runController([SET], w.deps, WATCH_ONLY, safety());
    expect(summary).toMatchObject({ podsUpdated: 6, conflicts: 0, stalled: [], unfinished: [], errors: [] });
    expect(summary.reconciles).toBeGreaterThanOrEqual(4);
    expect(lists).toBe(1);
    expect(summary.podReads).toEqual({ fromView: summary.reconciles - 1, listed: { first: 1 } });
    // The counts the reconciles wrote came from the view: the last status is the finished rollout's.
    expect(w.statuses.sets()[0]?.status).toMatchObject({ matchedPods: 6, updatedPods: 6, readyPods: 6, updatedReadyPods: 6 });
  });

  it('plans from the view only once it shows the loop\'s own writes (a lagging watch): never a pod counted as not yet updated', async () => {
    const set = storedRolloutSet({ type: 'RollingUpdate', maxUnavailable: 2 });
    const w = world(set, podsOf(set, 5, 0, 0));
    // The watch tells the changes of the pods the loop writes 1 s late.
    lagging(w, 1_000, 'p-00004');
    const statuses: unknown[] = [];
    const setStatuses = w.deps.statuses;
    w.deps.statuses = { ...setStatuses, patchStatus: (name, rv, status, signal) => { statuses.push(status); return setStatuses.patchStatus(name, rv, status, signal); } };
    const stop = new AbortController();
    let reconciles = 0;
    const following = runController([SET], { ...w.deps, onReconcile: () => { reconciles++; } }, { ...WATCH_ONLY, catchUpMs: 5_000 }, AbortSignal.any([stop.signal, safety()]));
    await until(() => reconciles === 1);
    // Another pod changes while Ready at once (accepted by the predicate): the second reconcile starts long before the watch tells the first reconcile's writes.
    w.cluster.update('default', 'p-00004', (pod) => void (pod.metadata = { ...pod.metadata, labels: { ...pod.metadata?.labels, touched: 'yes' } }));
    await until(() => reconciles === 2);
    stop.abort();
    const summary = await following;
    expect(summary).toMatchObject({ podsUpdated: 2, conflicts: 0, errors: [] });
    expect(summary.podReads).toEqual({ fromView: 1, listed: { first: 1 } });
    // The second reconcile saw the two pods updated (and unavailable): it wrote no more, and its counts say so.
    expect(w.cluster.writes.filter((x) => x.kind === 'patch')).toHaveLength(2);
    expect(statuses.at(-1)).toMatchObject({ updatedPods: 2, updatedReadyPods: 0 });
  });

  it('lists the pods again when the view cannot catch up with its own writes in time', async () => {
    const set = storedRolloutSet({ type: 'RollingUpdate', maxUnavailable: 2 });
    const w = world(set, podsOf(set, 5, 0, 0));
    lagging(w, 2_000, 'p-00004');
    const stop = new AbortController();
    let reconciles = 0;
    const following = runController([SET], { ...w.deps, onReconcile: () => { reconciles++; } }, { ...WATCH_ONLY, catchUpMs: 100 }, AbortSignal.any([stop.signal, safety()]));
    await until(() => reconciles === 1);
    w.cluster.update('default', 'p-00004', (pod) => void (pod.metadata = { ...pod.metadata, labels: { ...pod.metadata?.labels, touched: 'yes' } }));
    await until(() => reconciles === 2);
    stop.abort();
    const summary = await following;
    expect(summary).toMatchObject({ podsUpdated: 2, conflicts: 0, errors: [] });
    expect(summary.podReads).toEqual({ fromView: 0, listed: { first: 1, 'catch-up': 1 } });
  });

  it.each(['expired', 'ended', 'error'] as const)('lists the pods again after the watch ends (%s), and finishes the rollout', async (end) => {
    const set = storedRolloutSet();
    const w = world(set, podsOf(set, 4, 0, 0));
    kubeletAfterWrites(w, restarted);
    // The first watch ends as soon as it told its first change; the next ones run on.
    const setPods = w.deps.rollout.setPods;
    let watches = 0;
    w.deps.rollout.setPods = {
      ...setPods,
      watch: (scope, rv, sink, signal) => {
        if (++watches > 1) return setPods.watch!(scope, rv, sink, signal);
        const stop = new AbortController();
        return new Promise((resolve) => {
          void setPods.watch!(scope, rv, { ...sink, change: (type, pod) => { sink.change(type, pod); stop.abort(); resolve(end); } }, AbortSignal.any([signal, stop.signal]));
        });
      },
    };
    const summary = await runController([SET], w.deps, { ...WATCH_ONLY, intervalMs: end === 'error' ? 300 : 600_000 }, safety());
    expect(summary).toMatchObject({ podsUpdated: 4, conflicts: 0, stalled: [], unfinished: [], errors: [] });
    expect(summary.podReads?.listed).toEqual({ first: 1, [end]: 1 });
    expect(w.statuses.sets()[0]?.status).toMatchObject({ matchedPods: 4, updatedPods: 4, updatedReadyPods: 4 });
  });

  it('lists the pods again after a write whose outcome it does not know (no answer)', async () => {
    const set = storedRolloutSet({ type: 'RollingUpdate', maxUnavailable: 1 });
    const w = world(set, podsOf(set, 3, 0, 0));
    kubeletAfterWrites(w, restarted);
    // The first condition write lands, but its answer is lost.
    const pods = w.deps.rollout.pods;
    let lost = false;
    w.deps.rollout.pods = {
      ...pods,
      patchStatus: async (namespace, name, patch, signal) => {
        const write = await pods.patchStatus(namespace, name, patch, signal);
        if (lost) return write;
        lost = true;
        throw new Error('no answer within 10000 ms');
      },
    };
    const summary = await runController([SET], w.deps, WATCH_ONLY, safety());
    expect(summary).toMatchObject({ podsUpdated: 3, conflicts: 0, stalled: [], unfinished: [] });
    expect(summary.podReads?.listed).toEqual({ first: 1, unsure: 1 });
  });

  it('sends the next batch while the conditions of the batch before are still on their way, and returns once every condition is written', async () => {
    const set = storedRolloutSet({ type: 'RollingUpdate', maxUnavailable: 2 });
    const w = world(set, podsOf(set, 5, 0, 0));
    kubeletAfterWrites(w, restarted);
    // The conditions of the first batch take until the next batch is written (2 s at most, so a loop that waits for them ends too).
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
      setTimeout(resolve, 2_000).unref();
    });
    const pods = w.deps.rollout.pods;
    w.deps.rollout.pods = {
      ...pods,
      patch: async (namespace, name, operations, signal) => {
        const write = await pods.patch(namespace, name, operations, signal);
        if (name === 'p-00002') open();
        return write;
      },
      patchStatus: async (namespace, name, patch, signal) => {
        if (name === 'p-00000' || name === 'p-00001') await opened;
        return pods.patchStatus(namespace, name, patch, signal);
      },
    };
    const summary = await runController([SET], w.deps, WATCH_ONLY, safety());
    expect(summary).toMatchObject({ podsUpdated: 5, conflicts: 0, stalled: [], unfinished: [], errors: [] });
    expect(w.log.indexOf('patch p-00002')).toBeLessThan(w.log.indexOf('condition p-00000 True'));
    expect(w.log.filter((line) => line.startsWith('condition')).sort()).toEqual(['p-00000', 'p-00001', 'p-00002', 'p-00003', 'p-00004'].map((name) => `condition ${name} True`));
  });

  it('leaves a pod whose condition is still on its way to a later reconcile, and reconciles again once it is written (a HotUpgrade flip)', async () => {
    const set = hotSet('mesh:v2', '999', { type: 'RollingUpdate', maxUnavailable: 1 });
    const w = world(set, [injected('mesh:v1', 'a')]);
    // The kubelet: the new container starts ready a moment after the patch.
    kubeletAfterWrites(w, (pod) => void (pod.status = kubelet(pod).status));
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    const pods = w.deps.rollout.pods;
    w.deps.rollout.pods = {
      ...pods,
      patchStatus: async (namespace, name, patch, signal) => {
        await opened;
        return pods.patchStatus(namespace, name, patch, signal);
      },
    };
    const deferred: number[] = [];
    const following = runController(['hot-set'], { ...w.deps, onReconcile: (r) => void deferred.push(r.deferred ?? 0) }, WATCH_ONLY, AbortSignal.any([safety()]));
    // The reconcile the ready container wakes finds the pod's condition pending: no flip yet.
    await until(() => deferred.includes(1));
    expect(w.log.filter((line) => line === 'patch a')).toHaveLength(1);
    open();
    const summary = await following;
    expect(summary).toMatchObject({ podsUpdated: 1, podsFlipped: 1, conflicts: 0, stalled: [], unfinished: [], errors: [] });
    expect(w.log.filter((line) => line === 'patch a')).toHaveLength(2);
    expect(w.log.indexOf('condition a True')).toBeLessThan(w.log.lastIndexOf('patch a'));
  });

  it('reads the set and its revisions at once in a requeued reconcile, not one after the other', async () => {
    const set = storedRolloutSet();
    const w = world(set, podsOf(set, 4, 0, 0));
    kubeletAfterWrites(w, restarted);
    let reading = 0;
    let together = 0;
    const slow = async <T>(read: () => Promise<T>): Promise<T> => {
      reading++;
      if (reading > 1) together++;
      await new Promise((resolve) => setTimeout(resolve, 20));
      reading--;
      return read();
    };
    const { statuses } = w.deps;
    const { revisions } = w.deps.rollout;
    w.deps.statuses = { ...statuses, get: (name, signal) => slow(() => statuses.get(name, signal)) };
    w.deps.rollout.revisions = { ...revisions, list: (name, labels, signal) => slow(() => revisions.list(name, labels, signal)) };
    const summary = await runController([SET], w.deps, WATCH_ONLY, safety());
    expect(summary).toMatchObject({ podsUpdated: 4, errors: [] });
    expect(together).toBe(summary.reconciles);
  });

  it('reads the set for its next reconcile while a change settles, not after', async () => {
    const set = storedRolloutSet({ type: 'RollingUpdate', maxUnavailable: 2 });
    const w = world(set, podsOf(set, 5, 0, 0));
    const written = kubeletAfterWrites(w, restarting);
    // Reading the set takes as long as the settle: one after the other they take twice that.
    const { statuses } = w.deps;
    w.deps.statuses = { ...statuses, get: async (name, signal) => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      return statuses.get(name, signal);
    } };
    const stop = new AbortController();
    const following = runController([SET], w.deps, { ...WATCH_ONLY, debounceMs: 400 }, AbortSignal.any([stop.signal, safety()]));
    await until(() => w.cluster.pods().filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'False')).length === 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const freed = performance.now();
    w.cluster.update('default', 'p-00000', restarted);
    await until(() => written.length === 3);
    const took = performance.now() - freed;
    stop.abort();
    await following;
    expect(took).toBeGreaterThanOrEqual(390);
    expect(took).toBeLessThan(700);
  });

  it('lets a set whose counts stop moving go (a bad image), naming it', async () => {
    const set = storedRolloutSet();
    const w = world(set, podsOf(set, 5, 0, 0));
    const summary = await runController([SET], w.deps, { intervalMs: 10, debounceMs: 0, stallMs: 200 }, safety());
    expect(summary).toMatchObject({ podsUpdated: 2, stalled: [SET], unfinished: [] });
    expect(summary.reconciles).toBeGreaterThanOrEqual(2);
  });

  it('leaves a set its reconcile finds stalled (updated pods unavailable for the threshold, by their update times) at once, recorded once with the reason', async () => {
    const set = storedRolloutSet({ type: 'RollingUpdate', maxUnavailable: 2 });
    // Two pods updated long before NOW whose new image cannot be pulled; three wait behind them.
    const pods = podsOf(set, 5, 2, 2).map((pod, i) => {
      if (i >= 2) return pod;
      const sidecar = pod.status!.containerStatuses![0]!;
      pod.status = { ...pod.status, conditions: [{ type: 'Ready', status: 'False' }], containerStatuses: [{ ...sidecar, ready: false, state: { waiting: { reason: 'ImagePullBackOff' } } }, ...pod.status!.containerStatuses!.slice(1)] };
      return pod;
    });
    const w = world(set, pods);
    const summary = await runController([SET], w.deps, WATCH_ONLY, safety());
    expect(summary).toMatchObject({ reconciles: 1, podsUpdated: 0, stalled: [SET], unfinished: [] });
    expect(w.events.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'RolloutStalled']]);
    expect(w.events.events[0]?.message).toContain('ImagePullBackOff: 2 pod(s) (default/p-00000, default/p-00001)');
  });

  it("waits out its interval when the watch fails at once ('error'), rather than reconciling again and again", async () => {
    const set = storedRolloutSet();
    const w = world(set, podsOf(set, 5, 0, 0));
    w.deps.rollout.setPods = { ...w.deps.rollout.setPods, changed: () => Promise.resolve('error' as const) };
    const summary = await runController([SET], w.deps, { intervalMs: 200, debounceMs: 0, stallMs: 1_000 }, safety());
    // About 1 s / 200 ms = 6 reconciles until the stall; a loop that did not wait would make thousands.
    expect(summary.stalled).toEqual([SET]);
    expect(summary.reconciles).toBeLessThanOrEqual(20);
  });

  it('returns at once for a set with nothing in flight, and drops a set that no longer exists', async () => {
    const set = storedRolloutSet({ type: 'NotUpdate' });
    const w = world(set, podsOf(set, 2, 0, 0));
    const summary = await runController([SET, 'deleted-set'], w.deps, WATCH_ONLY, safety());
    expect(summary).toMatchObject({ reconciles: 1, podsUpdated: 0, stalled: [], unfinished: [], errors: [] });
  });

  it('waits until an admitted change is visible in the API server, then reconciles it', async () => {
    const set = storedRolloutSet();
    const w = world(set, podsOf(set, 5, 0, 0));
    const log: string[] = [];
    const pods = w.deps.rollout.pods;
    w.deps.rollout.pods = {
      ...pods,
      patch: (...args) => {
        log.push('pod write');
        return pods.patch(...args);
      },
    };
    const queue = admittedQueue();
    // Admitted against the stored version '1': visible once the stored set is another version.
    queue.push({ sidecarSet: SET, uid: 'uid-1', operation: 'UPDATE', resourceVersion: '1' });
    setTimeout(() => {
      log.push('stored');
      void w.statuses.patchStatus(SET, undefined, {});
    }, 300);
    const summary = await runController([], w.deps, { ...WATCH_ONLY, intervalMs: 10, stallMs: 0 }, safety(), queue);
    expect(log[0]).toBe('stored');
    expect(log.filter((l) => l === 'pod write')).toHaveLength(2);
    expect(summary).toMatchObject({ podsUpdated: 2, stalled: [SET] });
  });

  it('reconciles what is stored when an admitted change never shows (another webhook denied it)', async () => {
    const set = storedRolloutSet();
    const w = world(set, podsOf(set, 5, 0, 0));
    const queue = admittedQueue();
    queue.push({ sidecarSet: SET, uid: 'uid-1', operation: 'UPDATE', resourceVersion: '1' });
    const started = performance.now();
    const summary = await runController([], w.deps, { ...WATCH_ONLY, intervalMs: 10, stallMs: 0, visibleTimeoutMs: 300 }, safety(), queue);
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    expect(summary).toMatchObject({ podsUpdated: 2, stalled: [SET] });
  });

  it('never runs two reconciles of one set at once, with changes admitted and pods changing meanwhile', async () => {
    const set = storedRolloutSet();
    const w = world(set, podsOf(set, 5, 0, 0));
    let active = 0;
    let most = 0;
    const setPods = w.deps.rollout.setPods;
    w.deps.rollout.setPods = {
      ...setPods,
      list: async (scope, signal) => {
        active++;
        most = Math.max(most, active);
        await new Promise((resolve) => setTimeout(resolve, 20));
        try {
          return await setPods.list(scope, signal);
        } finally {
          active--;
        }
      },
    };
    const queue = admittedQueue();
    const controller = new AbortController();
    const timers = [50, 80, 120, 160].map((ms, i) =>
      setTimeout(() => {
        if (i % 2 === 0) queue.push({ sidecarSet: SET, uid: 'uid-1', operation: 'CREATE', resourceVersion: '' });
        else w.cluster.update('default', 'p-00004', (pod) => void (pod.metadata = { ...pod.metadata, labels: { ...pod.metadata?.labels, touched: String(i) } }));
      }, ms),
    );
    setTimeout(() => {
      controller.abort(new Error('test over'));
    }, 500);
    const summary = await runController([SET], w.deps, { intervalMs: 30, debounceMs: 0, stallMs: 600_000, createDebounceMs: 0 }, controller.signal, queue);
    for (const timer of timers) clearTimeout(timer);
    expect(summary.reconciles).toBeGreaterThanOrEqual(3);
    expect(most).toBe(1);
  });

  it('ends when its signal does with conditions still on their way: they are called off with it and recorded as errors', async () => {
    const set = storedRolloutSet();
    const w = world(set, podsOf(set, 5, 0, 0));
    // A condition write answers only when its signal ends it.
    const pods = w.deps.rollout.pods;
    w.deps.rollout.pods = {
      ...pods,
      patchStatus: (_namespace, _name, _patch, signal) =>
        new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => {
            reject(new Error('the request was aborted'));
          }, { once: true });
        }),
    };
    const controller = new AbortController();
    let reconciles = 0;
    const following = runController([SET], { ...w.deps, onReconcile: () => { reconciles++; } }, WATCH_ONLY, AbortSignal.any([controller.signal, safety()]));
    await until(() => reconciles === 1);
    const stopped = performance.now();
    controller.abort(new Error('stopping'));
    const summary = await following;
    expect(performance.now() - stopped).toBeLessThan(1_000);
    expect(summary).toMatchObject({ podsUpdated: 2, unfinished: [SET] });
    expect(summary.errors.map((e) => e.operation).sort()).toEqual(['set condition on pod default/p-00000', 'set condition on pod default/p-00001']);
  });

  it('ends when its signal does, naming the sets still in flight', async () => {
    const set = storedRolloutSet();
    const w = world(set, podsOf(set, 5, 0, 0));
    const controller = new AbortController();
    setTimeout(() => {
      controller.abort(new Error('the budget ended'));
    }, 100);
    const started = performance.now();
    const summary = await runController([SET], w.deps, WATCH_ONLY, controller.signal);
    // The interval is ten minutes: only the signal can have ended it this soon.
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(summary).toMatchObject({ unfinished: [SET], stalled: [] });
  });
});
