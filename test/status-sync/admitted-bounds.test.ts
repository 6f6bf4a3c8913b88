/**
 * What admitted SidecarSet changes may cost the reconciler (docs/RELIABILITY.md,
 * "Admitted changes"): a change for a set that is not there, or for another
 * object of that name, costs one read and no reconcile; changes of one set
 * coalesce into one read and one reconcile; the queue of waiting sets is capped;
 * and changes that never show share one wait per call instead of each
 * holding the only loop for its own timeout.
 */
import { describe, expect, it } from '@jest/globals';
import { admittedQueue, MAX_QUEUED_CHANGES } from '../../lib/status-sync/admitted-queue.ts';
import { runController, type ControllerDeps, type ControllerOptions } from '../../lib/status-sync/run-controller.ts';
import type { AdmittedSidecarSet } from '../../lib/ports.ts';
import { memoryStatusWriter } from '../../lib/adapters/memory-status-sync.ts';
import { countedReads, storedRolloutSet } from './rollout-world.ts';
import type { ReconcileError } from '../../lib/status-sync/errors.ts';

const SET = 'test-sidecarset';
const OPTIONS: ControllerOptions = { intervalMs: 10, debounceMs: 0, stallMs: 0, visibleTimeoutMs: 1_000, createDebounceMs: 0 };
const safety = () => AbortSignal.timeout(20_000);


const forged = (sidecarSet: string, operation: 'CREATE' | 'UPDATE', uid = 'forged-uid'): AdmittedSidecarSet => ({ sidecarSet, uid, operation, resourceVersion: operation === 'CREATE' ? '' : '1' });

describe('admitted changes that were never stored', () => {
  it('cost one read each and no reconcile: a set that is not there (CREATE or UPDATE), or another object of that name (AlreadyExists)', async () => {
    const { w, reads } = countedReads();
    const started = performance.now();
    const summary = await runController([], w.deps, OPTIONS, safety(), admittedQueue([forged('nowhere', 'CREATE'), forged('gone', 'UPDATE'), forged(SET, 'CREATE')]));
    expect(reads).toEqual(['nowhere', 'gone', SET]);
    expect(summary).toMatchObject({ reconciles: 0, errors: [] });
    // Not one visibility timeout, let alone three.
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('are read once, after the CREATE had a moment to be stored, and then dropped', async () => {
    const { w, reads } = countedReads();
    const started = performance.now();
    await runController([], w.deps, { ...OPTIONS, createDebounceMs: 200, visibleTimeoutMs: 5_000 }, safety(), admittedQueue([forged('nowhere', 'CREATE')]));
    expect(reads).toEqual(['nowhere']);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(performance.now() - started).toBeLessThan(4_000);
  });
});

describe('admitted changes of one set', () => {
  it('coalesce: many triggers queued meanwhile cost one read and one reconcile', async () => {
    const { w, reads, uid } = countedReads();
    const queue = admittedQueue();
    for (let i = 0; i < 50; i++) queue.push({ sidecarSet: SET, uid, operation: 'UPDATE', resourceVersion: `old-${i}` });
    const summary = await runController([], w.deps, OPTIONS, safety(), queue);
    expect(reads).toEqual([SET]);
    expect(summary.reconciles).toBe(1);
  });
});

describe('the admitted queue', () => {
  it(`holds at most ${MAX_QUEUED_CHANGES} sets; more are dropped and counted, a set already waiting is replaced`, () => {
    const queue = admittedQueue();
    for (let i = 0; i < MAX_QUEUED_CHANGES + 10; i++) queue.push(forged(`set-${i}`, 'CREATE'));
    queue.push({ ...forged('set-0', 'UPDATE'), resourceVersion: '7' });
    expect(queue.size()).toBe(MAX_QUEUED_CHANGES);
    expect(queue.dropped()).toBe(10);
    const taken = queue.take();
    expect(taken).toHaveLength(MAX_QUEUED_CHANGES);
    expect(taken.at(-1)).toMatchObject({ sidecarSet: 'set-0', operation: 'UPDATE', resourceVersion: '7' });
  });
});

describe('admitted changes that never show', () => {
  it('share one wait per call: three sets whose changes never show hold the loop about one timeout, not three', async () => {
    const { w } = countedReads();
    // Three stored sets, each admitted an UPDATE against the version stored now, which another webhook then refused.
    const sets = ['a', 'b', 'c'].map((name) => storedRolloutSet({ type: 'NotUpdate' }, (s) => void (s.metadata = { ...s.metadata, name, uid: `uid-${name}` })));
    const stored = memoryStatusWriter(sets);
    const reads: string[] = [];
    w.deps.statuses = {
      ...stored,
      get: (name, signal) => {
        reads.push(name);
        return stored.get(name, signal);
      },
    };
    const started = performance.now();
    await runController([], w.deps, { ...OPTIONS, visibleTimeoutMs: 800 }, safety(), admittedQueue(sets.map((s) => ({ sidecarSet: s.metadata?.name ?? '', uid: s.metadata?.uid ?? '', operation: 'UPDATE' as const, resourceVersion: s.metadata?.resourceVersion ?? '' }))));
    const took = performance.now() - started;
    expect(took).toBeLessThan(2_000);
    // Each set read at least once; the reads stop with the shared wait.
    expect(new Set(reads)).toEqual(new Set(['a', 'b', 'c']));
    expect(reads.length).toBeLessThan(20);
  });
});

describe('a burst of SidecarSet creations', () => {
  it('reconciles every set: the wait before a CREATE is first read is not the wait for changes that never show', async () => {
    const { w } = countedReads();
    const names = Array.from({ length: 12 }, (_, i) => `burst-${i}`);
    const sets = new Map(names.map((name) => [name, storedRolloutSet({ type: 'NotUpdate' }, (s) => void (s.metadata = { ...s.metadata, name, uid: `uid-${name}` }))]));
    // Each set is stored 60 ms after its review arrived (the API server writes it once the webhooks answered).
    const storedAt = new Map<string, number>();
    const stored = memoryStatusWriter([...sets.values()]);
    w.deps.statuses = { ...stored, get: (name, signal) => ((storedAt.get(name) ?? Infinity) <= performance.now() ? stored.get(name, signal) : Promise.resolve(undefined)) };
    const queue = admittedQueue();
    const arrivals = names.map((name, i) => new Promise<void>((resolve) => setTimeout(() => {
      storedAt.set(name, performance.now() + 60);
      queue.push({ sidecarSet: name, uid: `uid-${name}`, operation: 'CREATE', resourceVersion: '' });
      resolve();
    }, i * 40)));
    const reconciled = new Set<string>();
    const deps: ControllerDeps = { ...w.deps, onReconcile: (result) => { reconciled.add(result.sidecarSet); } };
    const all = { arrived: false };
    void Promise.all(arrivals).then(() => { all.arrived = true; });
    // As the npm start loop calls the controller: again whenever changes wait.
    const errors: ReconcileError[] = [];
    while (!all.arrived || queue.size() > 0) {
      if (queue.size() === 0) await queue.arrival();
      errors.push(...(await runController([], deps, { ...OPTIONS, createDebounceMs: 150, visibleTimeoutMs: 400 }, safety(), queue)).errors);
    }
    expect(errors).toEqual([]);
    expect([...reconciled].sort()).toEqual([...names].sort());
  });
});
