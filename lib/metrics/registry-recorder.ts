/**
 * The local server's recorder: the same facts as the Lambda functions' EMF
 * lines, counted in a registry that `/metrics` renders as Prometheus text.
 * Names follow Prometheus conventions (base units: seconds; counters end in
 * `_total`); the catalogue's HELP texts are shared.
 */
import { ROLLOUT_STATES } from '../status-sync/rollout-state.ts';
import { ADMISSION_METRICS, PASS_METRICS, ROLLOUT_STATE_METRIC, SET_METRICS, UNAVAILABLE_PODS_METRIC } from './catalogue.ts';
import type { MetricsRecorder, SetFigures } from './facts.ts';
import type { MetricsRegistry } from './registry.ts';

/** Answer and list latencies, in seconds: 1 ms to 30 s (the longest webhook timeout). */
export const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;
/** Pass durations, in seconds: 10 ms to 5 minutes (status-sync's timeout). */
export const PASS_BUCKETS_S = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] as const;

export const PROMETHEUS_NAMES = {
  reviews: 'sidecarset_admission_reviews_total',
  answerLatency: 'sidecarset_admission_answer_duration_seconds',
  listLatency: 'sidecarset_admission_sidecarset_list_duration_seconds',
  staleListAge: 'sidecarset_admission_stale_list_age_seconds',
  passes: 'sidecarset_status_passes_total',
  passDuration: 'sidecarset_status_pass_duration_seconds',
  apiRequests: 'sidecarset_status_api_requests_total',
  statusesWritten: 'sidecarset_status_writes_total',
  podsUpdated: 'sidecarset_rollout_pods_updated_total',
  podsFlipped: 'sidecarset_rollout_pods_flipped_total',
  podsEvicted: 'sidecarset_repair_pods_evicted_total',
  passErrors: 'sidecarset_status_pass_errors_total',
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

/** Registers the pass families, then the per-set gauges; the recorder of the passes. */
function statusSyncRecorder(registry: MetricsRegistry): MetricsRecorder['statusSync'] {
  const n = PROMETHEUS_NAMES;
  const passes = registry.counter(n.passes, 'Full status passes run.', []);
  const passDuration = registry.histogram(n.passDuration, PASS_METRICS.duration.help, [], PASS_BUCKETS_S);
  const counted = {
    apiRequests: registry.counter(n.apiRequests, 'Requests full passes made to the API server.', []),
    statusesWritten: registry.counter(n.statusesWritten, 'SidecarSet statuses full passes wrote.', []),
    podsUpdated: registry.counter(n.podsUpdated, 'Pods whose sidecars passes (full and follow-up) updated in place.', []),
    podsFlipped: registry.counter(n.podsFlipped, 'Pods whose finished hot upgrade passes (full and follow-up) flipped.', []),
    podsEvicted: registry.counter(n.podsEvicted, PASS_METRICS.podsEvicted.help, []),
    errors: registry.counter(n.passErrors, 'Things full passes could not do (a list, a write, an event).', []),
    webhooksRepointed: registry.counter(n.webhooksRepointed, 'Webhooks full passes repointed from a secret no function accepts.', []),
    webhooksRefused: registry.counter(n.webhooksRefused, PASS_METRICS.webhooksRefused.help, []),
  } as const;
  const podsNotInjected = registry.gauge(n.podsNotInjected, PASS_METRICS.podsNotInjected.help, []);
  const sets = setGauges(registry);
  return () => ({
    pass(fact) {
      passes.inc([]);
      passDuration.observe([], seconds(fact.durationMs));
      for (const [key, counter] of Object.entries(counted)) counter.inc([], fact[key as keyof typeof counted]);
      podsNotInjected.set([], fact.podsNotInjected);
      // A set deleted since the last pass disappears from every family.
      sets.clear();
      for (const name of Object.keys(fact.sets).sort()) {
        const set = fact.sets[name];
        if (set !== undefined) sets.write(name, set);
      }
    },
    setPass(fact) {
      counted.podsUpdated.inc([], fact.podsUpdated);
      counted.podsFlipped.inc([], fact.podsFlipped);
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
