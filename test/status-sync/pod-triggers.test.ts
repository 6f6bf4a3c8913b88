/**
 * Pod triggers (docs/RECONCILER.md, "A pod change starts a reconcile"): a burst
 * of pod changes of one set coalesces into a bounded number of reconciles; a
 * trigger never carries a decision, so one that is lost changes nothing but
 * when the next reconcile shows the change; and a warm reconciler on AWS ends an
 * invoke whose change a reconcile already covered without an API request.
 */
import { describe, expect, it } from '@jest/globals';
import { admittedQueue } from '../../lib/status-sync/admitted-queue.ts';
import { runController, type ControllerOptions } from '../../lib/status-sync/run-controller.ts';
import { reconcileCoverage, podsChange, POD_DEBOUNCE_MS, recordedSets, selectingSetNames, storedSets, MAX_TRIGGERED_SETS } from '../../lib/status-sync/pod-trigger.ts';
import { setsByName } from '../../lib/sidecarset/sets-by-name.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { countedReads } from './rollout-world.ts';

const OPTIONS: ControllerOptions = { intervalMs: 10, debounceMs: 0, stallMs: 0, visibleTimeoutMs: 1_000, createDebounceMs: 0 };
const safety = () => AbortSignal.timeout(20_000);

const matched = (w: ReturnType<typeof countedReads>['w']) => w.statuses.sets()[0]?.status?.matchedPods;

describe('a burst of pod changes of one set', () => {
  it('queued while the loop is busy costs one read and one reconcile, after one settle', async () => {
    const { w, reads, name } = countedReads();
    const queue = admittedQueue();
    for (let i = 0; i < 1_000; i++) queue.push(podsChange(name));
    const started = performance.now();
    const summary = await runController([], w.deps, OPTIONS, safety(), queue);
    expect(reads).toEqual([name]);
    expect(summary).toMatchObject({ reconciles: 1, errors: [] });
    expect(matched(w)).toBe(3);
    expect(performance.now() - started).toBeGreaterThanOrEqual(POD_DEBOUNCE_MS - 10);
  });

  it('arriving while reconciles run costs at most one reconcile per settle window (1,000 changes over about 1 s: at most 6 reconciles)', async () => {
    const { w, name } = countedReads();
    const queue = admittedQueue();
    let reconciles = 0;
    let pushed = 0;
    const started = performance.now();
    // 1,000 changes over ~1 s, as a Deployment scaled up would send them.
    const pushing = (async () => {
      while (pushed < 1_000) {
        for (let i = 0; i < 10; i++, pushed++) queue.push(podsChange(name));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    // The local loop follows again whenever changes wait (loop.ts); each call reconciles what it took.
    while (pushed < 1_000 || queue.size() > 0) {
      if (queue.size() === 0) {
        await queue.arrival();
        continue;
      }
      reconciles += (await runController([], w.deps, OPTIONS, safety(), queue)).reconciles;
    }
    await pushing;
    const windows = Math.ceil((performance.now() - started) / POD_DEBOUNCE_MS);
    expect(reconciles).toBeGreaterThan(0);
    expect(reconciles).toBeLessThanOrEqual(windows);
    expect(reconciles).toBeLessThanOrEqual(6);
  });
});

describe('the queue of admitted changes with pod changes in it', () => {
  it('keeps a waiting change of the set itself over a pod change, and lets a set change replace a pod change', () => {
    const queue = admittedQueue();
    queue.push({ sidecarSet: 'a', uid: 'u', operation: 'UPDATE', resourceVersion: '7' });
    queue.push(podsChange('a'));
    queue.push(podsChange('b'));
    queue.push({ sidecarSet: 'b', uid: 'u', operation: 'CREATE', resourceVersion: '' });
    expect(queue.take().map((c) => [c.sidecarSet, c.operation])).toEqual([
      ['a', 'UPDATE'],
      ['b', 'CREATE'],
    ]);
  });

  it('restarts the settle at the latest pod change of a set, so the reconcile reads after that pod was stored', () => {
    const queue = admittedQueue([{ ...podsChange('a'), queuedAtMs: 5 }]);
    queue.push(podsChange('a'));
    const [change] = queue.take();
    expect(change?.queuedAtMs).toBeGreaterThan(5);
  });
});

describe('a lost pod trigger', () => {
  it('changes nothing: the next reconcile of the set, whatever starts it, counts the pods whose triggers never came', async () => {
    const { w, name } = countedReads(3);
    await runController([], w.deps, OPTIONS, safety(), admittedQueue([podsChange(name)]));
    expect(matched(w)).toBe(3);
    // Two pods go away and their triggers are lost: the stored status stays as it was meanwhile.
    w.cluster.remove('default', 'p-00000');
    w.cluster.remove('default', 'p-00001');
    expect(matched(w)).toBe(3);
    // Any later reconcile (here a trigger for an unrelated change; on a deployment at the latest the schedule's) counts them.
    await runController([], w.deps, OPTIONS, safety(), admittedQueue([podsChange(name)]));
    expect(matched(w)).toBe(1);
  });
});

describe('reconcile coverage on a warm reconciler', () => {
  it('covers a pod trigger sent a settle or more before a reconcile of its set (or a resync) began, and nothing later', () => {
    const coverage = reconcileCoverage(250);
    coverage.began(10_000, ['a']);
    expect(coverage.covers('a', 9_750)).toBe(true);
    expect(coverage.covers('a', 9_751)).toBe(false);
    expect(coverage.covers('b', 0)).toBe(false);
    coverage.began(20_000);
    expect(coverage.covers('b', 19_000)).toBe(true);
    expect(coverage.covers('a', 19_800)).toBe(false);
  });
});

const RECORD = 'serverless-sidecarset/injected-by-policy';
const LIST = 'kruise.io/sidecarset-injected-list';

describe('the sets injection recorded on a pod', () => {
  it.each([
    ['names each set of the injected list once', { metadata: { annotations: { [LIST]: 'b,a,b' } } }, ['b', 'a']],
    ['is empty for a pod no set injected', { metadata: { annotations: {} } }, []],
    ['is empty for something that is not an object', 'pod', []],
    ['names only the sets of the injection policy\'s record on a pod the policy alone injected', { metadata: { annotations: { [RECORD]: 'set=a;base=;before=x;after=;initBefore=;initAfter=;volumes=;imagePullSecrets=;annotations=;reads=', [LIST]: 'a,b,c' } } }, ['a']],
    ['names each set of a policy record of several sets once', { metadata: { annotations: { [RECORD]: 'set=a;base=;before=x;after=;initBefore=;initAfter=;volumes=;imagePullSecrets=;annotations=;reads=|set=b;base=;before=x;after=;initBefore=;initAfter=;volumes=;imagePullSecrets=;annotations=;reads=|set=a;base=;before=x;after=;initBefore=;initAfter=;volumes=;imagePullSecrets=;annotations=;reads=', [LIST]: 'a,b,c' } } }, ['a', 'b']],
    ['names the sets of a record an earlier policy wrote (no reads field)', { metadata: { annotations: { [RECORD]: 'set=a;base=;before=x;after=;initBefore=;initAfter=;volumes=;imagePullSecrets=;annotations=|set=b;base=;before=y;after=;initBefore=;initAfter=;volumes=;imagePullSecrets=;annotations=' } } }, ['a', 'b']],
    ['names nothing for a policy record that is not the policy\'s text', { metadata: { annotations: { [RECORD]: 'a,b,c', [LIST]: 'a,b,c' } } }, []],
    ['reads the injected list of a pod the policy marked for pod-inject', { metadata: { annotations: { [RECORD]: 'set=a;base=;before=x;after=;initBefore=;initAfter=;volumes=;imagePullSecrets=;annotations=;reads=', 'serverless-sidecarset/inject': 'webhook', [LIST]: 'a,b' } } }, ['a', 'b']],
  ])('%s', (_, pod, sets) => {
    expect(recordedSets(pod)).toEqual(sets);
  });
});

const set = (name: string, spec: Record<string, unknown>): SidecarSet => ({ metadata: { name }, spec: { containers: [], ...spec } });

describe('the sets a pod change triggers', () => {
  const sets = [
    set('web', { selector: { matchLabels: { app: 'web' } } }),
    set('other-app', { selector: { matchLabels: { app: 'db' } } }),
    set('other-namespace', { selector: { matchLabels: { app: 'web' } }, namespace: 'tenant-b' }),
    set('by-namespace', { selector: { matchLabels: { app: 'web' } }, namespaceSelector: { matchLabels: { team: 'a' } } }),
    set('paused', { selector: { matchLabels: { app: 'web' } }, injectionStrategy: { paused: true } }),
  ];
  const byName = setsByName(sets);
  const place = { labels: { app: 'web' }, namespace: 'tenant-a', namespaceLabels: new Map([['tenant-a', { team: 'a' }]]) };

  it('are the recorded sets that are stored and select the pod today (a paused set still counts its pods)', () => {
    const candidates = storedSets(['gone', 'web', 'other-app', 'other-namespace', 'by-namespace', 'paused'], byName);
    expect(candidates.map((s) => s.metadata?.name)).toEqual(['web', 'other-app', 'other-namespace', 'by-namespace', 'paused']);
    expect(selectingSetNames(candidates, place)).toEqual(['web', 'by-namespace', 'paused']);
  });

  it('drop a set whose namespaceSelector the namespace no longer passes, and keep one whose namespace labels are unknown', () => {
    const candidates = storedSets(['by-namespace'], byName);
    expect(selectingSetNames(candidates, { ...place, namespaceLabels: new Map([['tenant-a', { team: 'b' }]]) })).toEqual([]);
    expect(selectingSetNames(candidates, { ...place, namespaceLabels: new Map() })).toEqual(['by-namespace']);
  });

  it(`are at most ${MAX_TRIGGERED_SETS} (one SQS SendMessageBatch), however many the pod names and select it`, () => {
    const many = Array.from({ length: 40 }, (_, i) => set(`s${String(i).padStart(2, '0')}`, { selector: { matchLabels: { app: 'web' } } }));
    const names = many.map((s) => s.metadata?.name as string);
    expect(selectingSetNames(storedSets(names, setsByName(many)), place)).toEqual(names.slice(0, MAX_TRIGGERED_SETS));
  });
});
