/**
 * The facts turned into metrics: EMF documents (Lambda) and registry series
 * (the local server's /metrics) from the same review and resync facts.
 */
import { describe, expect, it } from '@jest/globals';
import { ALL_METRICS, DEFAULT_METRICS_NAMESPACE, DEPRECATED_RESYNC_METRICS, metricsNamespaceFromEnv, RESYNC_METRICS } from '../../lib/metrics/catalogue.ts';
import { ROLLOUT_STATES } from '../../lib/status-sync/rollout-state.ts';
import { emfRecorder, RECONCILER_FUNCTION, resyncDocuments, reviewDocument } from '../../lib/metrics/emf-recorder.ts';
import { resyncFactOf, type ResyncFact, type ReviewFact } from '../../lib/metrics/facts.ts';
import { metricsRegistry } from '../../lib/metrics/registry.ts';
import { DEPRECATED_PROMETHEUS_NAMES, PROMETHEUS_NAMES, registryRecorder } from '../../lib/metrics/registry-recorder.ts';
import { STATUS_SYNC, type ResyncResult } from '../../lib/status-sync/resync.ts';
import { checkEmfDocument, extractedMetrics } from './emf-check.ts';

const NS = 'ServerlessSidecarSet';
const TS = 1_796_000_000_000;

const resync: ResyncFact = {
  durationMs: 812.4,
  apiRequests: 7,
  statusesWritten: 1,
  podsUpdated: 2,
  podsFlipped: 1,
  podsEvicted: 2,
  podsNotInjected: 3,
  errors: 0,
  webhooksRepointed: 2,
  webhooksRefused: 1,
  sets: {
    web: { matchedPods: 10, updatedPods: 4, readyPods: 9, updatedReadyPods: 3, notInjectedPods: 3, state: 'Progressing' },
    db: { matchedPods: 2, updatedPods: 2, readyPods: 2, updatedReadyPods: 2, notInjectedPods: 0 },
  },
};

describe('EMF documents', () => {
  it('a review: Reviews by {Function, Outcome}, its latencies by {Function}', () => {
    const line = JSON.stringify(reviewDocument(NS, TS, 'pod-inject', { outcome: 'Patched', latencyMs: 4.2, listMs: 1.1 }));
    expect(checkEmfDocument(line)).toEqual([]);
    expect(extractedMetrics(line)).toEqual([
      { name: 'Reviews', unit: 'Count', dimensions: { Function: 'pod-inject', Outcome: 'Patched' }, value: 1 },
      { name: 'AnswerLatency', unit: 'Milliseconds', dimensions: { Function: 'pod-inject' }, value: 4.2 },
      { name: 'SidecarSetListLatency', unit: 'Milliseconds', dimensions: { Function: 'pod-inject' }, value: 1.1 },
    ]);
  });

  it('a refused caller counts, without a latency', () => {
    const line = JSON.stringify(reviewDocument(NS, TS, 'pod-inject', { outcome: 'RefusedCaller' }));
    expect(extractedMetrics(line)).toEqual([{ name: 'Reviews', unit: 'Count', dimensions: { Function: 'pod-inject', Outcome: 'RefusedCaller' }, value: 1 }]);
  });

  it('a resync: its own figures by {Function}, the deprecated names last, then each set by {SidecarSet} and its state by {SidecarSet, State}, sets by name', () => {
    const lines = resyncDocuments(NS, TS, RECONCILER_FUNCTION, resync).map((d) => JSON.stringify(d));
    for (const line of lines) expect(checkEmfDocument(line)).toEqual([]);
    expect(lines.map((l) => extractedMetrics(l).map((m) => `${Object.values(m.dimensions).join('/')} ${m.name}=${m.value}`))).toEqual([
      [
        'status-sync ResyncDuration=812.4',
        'status-sync ApiRequests=7',
        'status-sync StatusesWritten=1',
        'status-sync PodsUpdated=2',
        'status-sync PodsFlipped=1',
        'status-sync PodsEvicted=2',
        'status-sync PodsNotInjected=3',
        'status-sync ResyncErrors=0',
        'status-sync WebhooksRepointed=2',
        'status-sync WebhooksNotDeployed=1',
        'status-sync PassDuration=812.4',
        'status-sync PassErrors=0',
      ],
      ['db MatchedPods=2', 'db UpdatedPods=2', 'db ReadyPods=2', 'db UpdatedReadyPods=2', 'db NotInjectedPods=0'],
      ['web MatchedPods=10', 'web UpdatedPods=4', 'web ReadyPods=9', 'web UpdatedReadyPods=3', 'web NotInjectedPods=3', 'web/Progressing RolloutState=1'],
    ]);
  });

  it('the reconciler is named as lib/status-sync names it', () => {
    expect(RECONCILER_FUNCTION).toBe(STATUS_SYNC);
  });

  it('the recorder writes one line per document, and a document it cannot build is reported, not thrown', () => {
    const lines: string[] = [];
    const errors: string[] = [];
    const recorder = emfRecorder({ namespace: NS, write: (l) => lines.push(l), nowMs: () => TS + 0.7, onError: (m) => errors.push(m) });
    recorder.admission('sidecarset-default').review({ outcome: 'Allowed', latencyMs: 2 });
    recorder.admission('pod-inject').staleServed(1234.5);
    recorder.statusSync().resync(resync);
    recorder.admission('pod-inject').review({ outcome: 'Patched', latencyMs: Number.NaN });
    expect(lines).toHaveLength(1 + 1 + 3);
    expect(lines.map((l) => (JSON.parse(l) as { _aws: { Timestamp: number } })._aws.Timestamp)).toEqual([TS, TS, TS, TS, TS]);
    expect(extractedMetrics(lines[1] ?? '')).toEqual([{ name: 'StaleListAge', unit: 'Milliseconds', dimensions: { Function: 'pod-inject' }, value: 1234.5 }]);
    expect(errors).toEqual(['metric AnswerLatency has the value NaN, which is not a finite number']);
  });

  it('a review is written as exactly the text of its document, for every outcome and latency shape, however often the shape recurs', () => {
    const lines: string[] = [];
    let now = TS;
    const recorder = emfRecorder({ namespace: NS, write: (l) => lines.push(l), nowMs: () => now });
    const facts: ReviewFact[] = [];
    for (const outcome of ['Patched', 'Allowed', 'Skipped', 'Denied', 'CannotDecide', 'RefusedCaller', 'BadRequest'] as const) {
      facts.push({ outcome }, { outcome, latencyMs: 0.0004 }, { outcome, listMs: 12.3456 }, { outcome, latencyMs: 1e21, listMs: -0 }, { outcome, latencyMs: 4.2, listMs: 1.1 });
    }
    const expected: string[] = [];
    for (const round of [0, 1]) {
      for (const fact of facts) {
        now = TS + round * 1000 + 0.5;
        recorder.admission('pod-inject').review(fact);
        expected.push(JSON.stringify(reviewDocument(NS, TS + round * 1000, 'pod-inject', fact)));
      }
    }
    expect(lines).toEqual(expected);
  });

  it('a review with a timestamp the document cannot carry is reported as the document builder says', () => {
    const errors: string[] = [];
    const lines: string[] = [];
    const recorder = emfRecorder({ namespace: NS, write: (l) => lines.push(l), nowMs: () => -5, onError: (m) => errors.push(m) });
    recorder.admission('pod-inject').review({ outcome: 'Patched', latencyMs: 1 });
    expect(lines).toEqual([]);
    expect(errors).toEqual(['the timestamp -5 is not whole milliseconds since the epoch']);
  });

  it('a writer that throws does not reach the caller', () => {
    const recorder = emfRecorder({ namespace: NS, write: () => { throw new Error('EPIPE'); }, onError: () => { throw new Error('and the report fails too'); } });
    expect(() => { recorder.admission('pod-inject').review({ outcome: 'Patched' }); }).not.toThrow();
  });
});

describe('the local registry', () => {
  it('counts reviews by function and outcome and observes latencies in seconds', () => {
    const registry = metricsRegistry();
    const recorder = registryRecorder(registry);
    const inject = recorder.admission('pod-inject');
    inject.review({ outcome: 'Patched', latencyMs: 3, listMs: 1 });
    inject.review({ outcome: 'Patched', latencyMs: 40 });
    inject.review({ outcome: 'CannotDecide', latencyMs: 9000 });
    inject.review({ outcome: 'RefusedCaller' });
    const text = registry.render();
    expect(text).toContain('sidecarset_admission_reviews_total{function="pod-inject",outcome="Patched"} 2\n');
    expect(text).toContain('sidecarset_admission_reviews_total{function="pod-inject",outcome="CannotDecide"} 1\n');
    expect(text).toContain('sidecarset_admission_reviews_total{function="pod-inject",outcome="RefusedCaller"} 1\n');
    expect(text).toContain('sidecarset_admission_answer_duration_seconds_bucket{function="pod-inject",le="0.005"} 1\n');
    expect(text).toContain('sidecarset_admission_answer_duration_seconds_bucket{function="pod-inject",le="0.05"} 2\n');
    expect(text).toContain('sidecarset_admission_answer_duration_seconds_count{function="pod-inject"} 3\n');
    expect(text).toContain('sidecarset_admission_answer_duration_seconds_sum{function="pod-inject"} 9.043\n');
    expect(text).toContain('sidecarset_admission_sidecarset_list_duration_seconds_count{function="pod-inject"} 1\n');
  });

  it('shows each set of the last resync only, with its rollout state as a state set', () => {
    const registry = metricsRegistry();
    const status = registryRecorder(registry).statusSync();
    status.resync({ ...resync, sets: { ...resync.sets, deleted: { matchedPods: 1, updatedPods: 1, readyPods: 1, updatedReadyPods: 1, notInjectedPods: 0 } } });
    status.resync(resync);
    const text = registry.render();
    expect(text).not.toContain('deleted');
    expect(text).toContain('sidecarset_resyncs_total 2\n');
    expect(text).toContain('sidecarset_status_api_requests_total 14\n');
    expect(text).toContain('sidecarset_pods_not_injected 3\n');
    expect(text).toContain('sidecarset_repair_pods_evicted_total 4\n');
    expect(text).toContain('sidecarset_matched_pods{sidecarset="web"} 10\n');
    expect(text).toContain('sidecarset_updated_ready_pods{sidecarset="db"} 2\n');
    expect(text).toContain('sidecarset_set_not_injected_pods{sidecarset="web"} 3\n');
    for (const state of ROLLOUT_STATES) expect(text).toContain(`sidecarset_rollout_state{sidecarset="web",state="${state}"} ${state === 'Progressing' ? 1 : 0}\n`);
    expect(text).not.toContain('sidecarset_rollout_state{sidecarset="db"');
  });

  it('counts the pods a requeued reconcile wrote and replaces its set\'s figures, state and unavailable pods by reason', () => {
    const registry = metricsRegistry();
    const status = registryRecorder(registry).statusSync();
    status.resync(resync);
    status.setReconcile({ sidecarSet: 'web', podsUpdated: 3, podsFlipped: 0, figures: { matchedPods: 10, updatedPods: 7, readyPods: 8, updatedReadyPods: 5, notInjectedPods: 3, state: 'Stalled', unavailable: { ImagePullBackOff: 2 } } });
    status.setReconcile({ sidecarSet: 'web', podsUpdated: 0, podsFlipped: 1, figures: { matchedPods: 10, updatedPods: 7, readyPods: 8, updatedReadyPods: 6, notInjectedPods: 3, state: 'Stalled', unavailable: { CrashLoopBackOff: 1 } } });
    const text = registry.render();
    expect(text).toContain('sidecarset_rollout_pods_updated_total 5\n');
    expect(text).toContain('sidecarset_rollout_pods_flipped_total 2\n');
    expect(text).toContain('sidecarset_updated_ready_pods{sidecarset="web"} 6\n');
    expect(text).toContain('sidecarset_rollout_state{sidecarset="web",state="Stalled"} 1\n');
    expect(text).toContain('sidecarset_rollout_state{sidecarset="web",state="Progressing"} 0\n');
    expect(text).toContain('sidecarset_rollout_unavailable_pods{sidecarset="web",reason="CrashLoopBackOff"} 1\n');
    expect(text).not.toContain('reason="ImagePullBackOff"');
    // The other sets keep what the resync said of them.
    expect(text).toContain('sidecarset_updated_ready_pods{sidecarset="db"} 2\n');
  });

  it('writes a requeued reconcile as EMF: the pods it wrote by {Function}, its set by {SidecarSet} and {SidecarSet, Reason}', () => {
    const lines: string[] = [];
    emfRecorder({ namespace: NS, write: (line) => lines.push(line), nowMs: () => TS })
      .statusSync()
      .setReconcile({ sidecarSet: 'web', podsUpdated: 3, podsFlipped: 0, figures: { matchedPods: 10, updatedPods: 7, readyPods: 8, updatedReadyPods: 5, notInjectedPods: 0, state: 'Stalled', unavailable: { ImagePullBackOff: 2 } } });
    const documents = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(documents.map((d) => [d.Function ?? d.SidecarSet, d.Reason ?? d.State, d.PodsUpdated ?? d.UpdatedPods ?? d.UnavailablePods])).toEqual([
      [RECONCILER_FUNCTION, undefined, 3],
      ['web', 'Stalled', 7],
      ['web', 'ImagePullBackOff', 2],
    ]);
  });

  it('registers every family under its documented name', () => {
    const registry = metricsRegistry();
    registryRecorder(registry);
    expect(registry.snapshot().map((f) => f.name).sort()).toEqual([...Object.values(PROMETHEUS_NAMES), ...Object.values(DEPRECATED_PROMETHEUS_NAMES)].sort());
  });

  it.each(Object.entries(DEPRECATED_PROMETHEUS_NAMES))('still exposes %s under its deprecated name %s, with the same value and a HELP naming its replacement', (key, old) => {
    const registry = metricsRegistry();
    const status = registryRecorder(registry).statusSync();
    status.resync({ ...resync, errors: 3 });
    status.resync(resync);
    const current = PROMETHEUS_NAMES[key as keyof typeof DEPRECATED_PROMETHEUS_NAMES];
    const families = registry.snapshot();
    const renamed = families.find((f) => f.name === old);
    const replacement = families.find((f) => f.name === current);
    expect(renamed?.help).toBe(`(Deprecated: use ${current}) ${replacement?.help ?? ''}`);
    expect(renamed?.type).toBe(replacement?.type);
    expect(renamed?.samples).toEqual(replacement?.samples);
    expect(renamed?.samples.length).toBeGreaterThan(0);
  });
});

describe('a resync result as metrics', () => {
  const result: ResyncResult = {
    setsSeen: 2,
    podsSeen: 12,
    statusesWritten: 1,
    statusesUnchanged: 1,
    podListAttempts: 1,
    errors: [{ operation: 'record event', message: 'refused' }],
    durationMs: 120,
    notInjected: { web: 3 },
    sets: { web: { matchedPods: 10, updatedPods: 4, readyPods: 9, updatedReadyPods: 3 }, db: { matchedPods: 2, updatedPods: 2, readyPods: 2, updatedReadyPods: 2 } },
    rollout: { setsRolled: 1, podsUpdated: 2, podsFlipped: 1, conflicts: 0, revisionWrites: 0, states: {}, inFlight: ['web'] },
  };

  it('takes the counts, the uninjected pods and the state each set was last seen in', () => {
    expect(resyncFactOf(result, 7, new Map([['web', 'Progressing'], ['gone', 'Finished']]))).toEqual({
      durationMs: 120,
      apiRequests: 7,
      statusesWritten: 1,
      podsUpdated: 2,
      podsFlipped: 1,
      podsEvicted: 0,
      podsNotInjected: 3,
      errors: 1,
      webhooksRepointed: 0,
      webhooksRefused: 0,
      sets: {
        web: { matchedPods: 10, updatedPods: 4, readyPods: 9, updatedReadyPods: 3, notInjectedPods: 3, state: 'Progressing' },
        db: { matchedPods: 2, updatedPods: 2, readyPods: 2, updatedReadyPods: 2, notInjectedPods: 0 },
      },
    });
  });

  it('counts the pods the repair step evicted', () => {
    const repaired: ResyncResult = { ...result, repair: { sets: 1, evicted: 2, refused: 1, ownerless: 0, held: 3 } };
    expect(resyncFactOf(repaired, 7, new Map()).podsEvicted).toBe(2);
  });

  it('counts the webhooks the rotation step repointed from a stale secret', () => {
    const repaired: ResyncResult = { ...result, secretRotation: { step: 'waiting', detail: 'not due', repaired: ['MutatingWebhookConfiguration webhook "pod-inject.sidecarset.kruise.io"', 'ValidatingWebhookConfiguration webhook "sidecarset-validate.sidecarset.kruise.io"'] } };
    expect(resyncFactOf(repaired, 7, new Map()).webhooksRepointed).toBe(2);
  });

  it('counts the webhooks the rotation step refused, pointing at URLs the deployment did not make', () => {
    const refused: ResyncResult = { ...result, secretRotation: { step: 'skipped', refused: [{ configuration: 'MutatingWebhookConfiguration', webhook: 'pod-inject.sidecarset.kruise.io', pointsAt: 'https://evil.example/pod-inject/' }] } };
    expect(resyncFactOf(refused, 7, new Map()).webhooksRefused).toBe(1);
  });

  it('a resync that listed nothing has no sets and no updates', () => {
    const bare: ResyncResult = { ...result, notInjected: {} };
    delete bare.sets;
    delete bare.rollout;
    expect(resyncFactOf(bare, 1, new Map())).toMatchObject({ podsUpdated: 0, podsNotInjected: 0, sets: {} });
  });
});

describe('the catalogue', () => {
  it('names every CloudWatch metric once', () => {
    const names = ALL_METRICS.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it.each(Object.entries(DEPRECATED_RESYNC_METRICS))('keeps %s under its old name %j, its help naming the replacement', (key, spec) => {
    const current = RESYNC_METRICS[key as keyof typeof DEPRECATED_RESYNC_METRICS];
    expect(spec).toEqual({ ...current, name: spec.name, help: `(Deprecated: use ${current.name}) ${current.help}` });
  });

  it.each([
    { env: {}, namespace: DEFAULT_METRICS_NAMESPACE },
    { env: { METRICS_NAMESPACE: '' }, namespace: DEFAULT_METRICS_NAMESPACE },
    { env: { METRICS_NAMESPACE: ' Team/SidecarSets ' }, namespace: 'Team/SidecarSets' },
  ])('METRICS_NAMESPACE $env gives $namespace', ({ env, namespace }) => {
    expect(metricsNamespaceFromEnv(env)).toBe(namespace);
  });

  it.each([':leading-colon', 'x'.repeat(256), 'tab\there', 'naïve'])('refuses the namespace %j, naming the variable', (value) => {
    expect(() => metricsNamespaceFromEnv({ METRICS_NAMESPACE: value })).toThrow(/^METRICS_NAMESPACE must be 1 to 255 printable ASCII characters not starting with ':'/);
  });
});
