/**
 * The local server's recorder: the same facts as the Lambda functions' EMF
 * lines, counted in a registry that `/metrics` renders as Prometheus text.
 * Names follow Prometheus conventions (base units: seconds; counters end in
 * `_total`); the catalogue's HELP texts are shared.
 */
import { ROLLOUT_STATES } from '../status-sync/rollout-state.ts';
import { ADMISSION_METRICS, deprecatedHelp, RESYNC_METRICS, ROLLOUT_STATE_METRIC, SET_METRICS, UNAVAILABLE_PODS_METRIC } from './catalogue.ts';
import type { MetricsRecorder, SetFigures } from './facts.ts';
import type { MetricsRegistry } from './registry.ts';

/** Answer and list latencies, in seconds: 1 ms to 30 s (the longest webhook timeout). */
export const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;
/** Resync durations, in seconds: 10 ms to 5 minutes (status-sync's timeout). */
export const RESYNC_BUCKETS_S = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] as const;

export const PROMETHEUS_NAMES = {
  reviews: 'sidecarset_admission_reviews_total',
  answerLatency: 'sidecarset_admission_answer_duration_seconds',
  listLatency: 'sidecarset_admission_sidecarset_list_duration_seconds',
  staleListAge: 'sidecarset_admission_stale_list_age_seconds',
  resyncs: 'sidecarset_resyncs_total',
  resyncDuration: 'sidecarset_resync_duration_seconds',
  apiRequests: 'sidecarset_status_api_requests_total',
  statusesWritten: 'sidecarset_status_writes_total',
  podsUpdated: 'sidecarset_rollout_pods_updated_total',
  podsFlipped: 'sidecarset_rollout_pods_flipped_total',
  podsEvicted: 'sidecarset_repair_pods_evicted_total',
  resyncErrors: 'sidecarset_resync_errors_total',
  webhooksRepointed: 'sidecarset_webhooks_repointed_total',
  webhooksRefused: 'sidecarset_webhooks_not_deployed_total',
  podsNotInjected: 'sidecarset_pods_not_injected',
  matchedPods: 'sidecarset_matched_pods',
  updatedPods: 'sidecarset_updated_pods',
  readyPods: 'sidecarset_ready_pods',
  updatedReadyPods: 'sidecarset_updated_ready_pods',
  notInjectedPods: 'sidecarset_set_not_injected_pods',
  rolloutState: 'sidecarset_rollout_state',
  unavailablePods: 'sidecarset_rollout_unavailable_pods',
} as const;

/**
 * The families renamed in this release, by the name that replaces them: each
 * is still exposed with the same value, its HELP marked deprecated as
 * Kubernetes' metrics stability framework does, until the next minor release
 * (docs/UPGRADING.md).
 */
export const DEPRECATED_PROMETHEUS_NAMES = {
  resyncs: 'sidecarset_status_passes_total',
  resyncDuration: 'sidecarset_status_pass_duration_seconds',
  resyncErrors: 'sidecarset_status_pass_errors_total',
} as const satisfies Partial<Record<keyof typeof PROMETHEUS_NAMES, string>>;

const seconds = (ms: number) => ms / 1000;

/** Registers the admission families; the recorder of each function's reviews. */
function admissionRecorder(registry: MetricsRegistry): MetricsRecorder['admission'] {
  const n = PROMETHEUS_NAMES;
  const reviews = registry.counter(n.reviews, ADMISSION_METRICS.reviews.help, ['function', 'outcome']);
  const answer = registry.histogram(n.answerLatency, ADMISSION_METRICS.answerLatency.help, ['function'], LATENCY_BUCKETS_S);
  const list = registry.histogram(n.listLatency, ADMISSION_METRICS.listLatency.help, ['function'], LATENCY_BUCKETS_S);
  const stale = registry.histogram(n.staleListAge, ADMISSION_METRICS.staleListAge.help, ['function'], [1, 5, 15, 30, 60, 300]);
  return (fn) => ({
    review(fact) {
      reviews.inc([fn, fact.outcome]);
      if (fact.latencyMs !== undefined) answer.observe([fn], seconds(fact.latencyMs));
      if (fact.listMs !== undefined) list.observe([fn], seconds(fact.listMs));
    },
    staleServed(ageMs) {
      stale.observe([fn], seconds(ageMs));
    },
  });
}

/** Registers the per-SidecarSet gauges; `write` replaces what they said of one set, `clear` forgets every set. */
function setGauges(registry: MetricsRegistry): { write(name: string, set: SetFigures): void; clear(): void } {
  const n = PROMETHEUS_NAMES;
  const perSet = [
    [registry.gauge(n.matchedPods, SET_METRICS.matchedPods.help, ['sidecarset']), 'matchedPods'],
    [registry.gauge(n.updatedPods, SET_METRICS.updatedPods.help, ['sidecarset']), 'updatedPods'],
    [registry.gauge(n.readyPods, SET_METRICS.readyPods.help, ['sidecarset']), 'readyPods'],
    [registry.gauge(n.updatedReadyPods, SET_METRICS.updatedReadyPods.help, ['sidecarset']), 'updatedReadyPods'],
    [registry.gauge(n.notInjectedPods, SET_METRICS.notInjectedPods.help, ['sidecarset']), 'notInjectedPods'],
  ] as const;
  const rolloutState = registry.gauge(n.rolloutState, ROLLOUT_STATE_METRIC.help, ['sidecarset', 'state']);
  const unavailablePods = registry.gauge(n.unavailablePods, UNAVAILABLE_PODS_METRIC.help, ['sidecarset', 'reason']);
  return {
    write(name, set) {
      for (const [gauge, key] of perSet) gauge.set([name], set[key]);
      // A state set: 1 for the state the set is in, 0 for the others, so a query can sum or filter either way.
      rolloutState.remove([name]);
      if (set.state !== undefined) for (const state of ROLLOUT_STATES) rolloutState.set([name, state], state === set.state ? 1 : 0);
      unavailablePods.remove([name]);
      for (const [reason, count] of Object.entries(set.unavailable ?? {})) unavailablePods.set([name, reason], count);
    },
    clear() {
      for (const [gauge] of perSet) gauge.clear();
      rolloutState.clear();
      unavailablePods.clear();
    },
  };
}

/** The resync families (the renamed ones under both names), then the per-set gauges; the recorder of resyncs and reconciles. */
function statusSyncRecorder(registry: MetricsRegistry): MetricsRecorder['statusSync'] {
  const n = PROMETHEUS_NAMES;
  const old = DEPRECATED_PROMETHEUS_NAMES;
  const resyncsHelp = 'Resyncs run (the periodic full list of every SidecarSet and pod).';
  const errorsHelp = 'Things resyncs could not do (a list, a write, an event).';
  const resyncs = [registry.counter(n.resyncs, resyncsHelp, []), registry.counter(old.resyncs, deprecatedHelp(n.resyncs, resyncsHelp), [])];
  const durations = [
    registry.histogram(n.resyncDuration, RESYNC_METRICS.duration.help, [], RESYNC_BUCKETS_S),
    registry.histogram(old.resyncDuration, deprecatedHelp(n.resyncDuration, RESYNC_METRICS.duration.help), [], RESYNC_BUCKETS_S),
  ];
  const counted = {
    apiRequests: [registry.counter(n.apiRequests, 'Requests resyncs made to the API server.', [])],
    statusesWritten: [registry.counter(n.statusesWritten, 'SidecarSet statuses resyncs wrote.', [])],
    podsUpdated: [registry.counter(n.podsUpdated, 'Pods whose sidecars reconciles (in resyncs and requeued) updated in place.', [])],
    podsFlipped: [registry.counter(n.podsFlipped, 'Pods whose finished hot upgrade reconciles (in resyncs and requeued) flipped.', [])],
    podsEvicted: [registry.counter(n.podsEvicted, RESYNC_METRICS.podsEvicted.help, [])],
    errors: [registry.counter(n.resyncErrors, errorsHelp, []), registry.counter(old.resyncErrors, deprecatedHelp(n.resyncErrors, errorsHelp), [])],
    webhooksRepointed: [registry.counter(n.webhooksRepointed, 'Webhooks resyncs repointed from a secret no function accepts.', [])],
    webhooksRefused: [registry.counter(n.webhooksRefused, RESYNC_METRICS.webhooksRefused.help, [])],
  } as const;
  const podsNotInjected = registry.gauge(n.podsNotInjected, RESYNC_METRICS.podsNotInjected.help, []);
  const sets = setGauges(registry);
  return () => ({
    resync(fact) {
      for (const counter of resyncs) counter.inc([]);
      for (const histogram of durations) histogram.observe([], seconds(fact.durationMs));
      for (const [key, counters] of Object.entries(counted)) for (const counter of counters) counter.inc([], fact[key as keyof typeof counted]);
      podsNotInjected.set([], fact.podsNotInjected);
      // A set deleted since the last resync disappears from every family.
      sets.clear();
      for (const name of Object.keys(fact.sets).sort()) {
        const set = fact.sets[name];
        if (set !== undefined) sets.write(name, set);
      }
    },
    setReconcile(fact) {
      for (const counter of counted.podsUpdated) counter.inc([], fact.podsUpdated);
      for (const counter of counted.podsFlipped) counter.inc([], fact.podsFlipped);
      sets.write(fact.sidecarSet, fact.figures);
    },
  });
}

/** Registers the families in `registry` and returns the recorder that feeds them. */
export function registryRecorder(registry: MetricsRegistry): MetricsRecorder {
  // In this order: `/metrics` lists the families as they were registered.
  const admission = admissionRecorder(registry);
  const statusSync = statusSyncRecorder(registry);
  return { admission, statusSync };
}
