/**
 * The instrumenting wrapper (controller-runtime's InstrumentedHook): times a
 * request from its arrival, and writes one log line and one review fact, both
 * read from the same typed outcome at the same moment.
 */
import type { AdmissionMetrics, ReviewFact } from '../metrics/facts.ts';
import type { Logger, SidecarSetSource } from '../ports.ts';
import { logLineOf, metricOutcomeOf, type RequestOutcome } from './request-outcome.ts';

/** Who answered and which request, for the log line. */
export interface ObservedRequest {
  fn: string;
  /** The platform's id for this request, for logs. */
  requestId?: string | undefined;
}

/** Where the observations go: the log, and the metrics when there are any. */
export interface Observers {
  logger: Logger;
  metrics?: AdmissionMetrics | undefined;
}

/** What the observer hands the parts it wraps. */
export interface Observation {
  /** The source, its lists timed into the review's fact (unchanged when there are no metrics). */
  timedSidecarSets(source: SidecarSetSource): SidecarSetSource;
}

/**
 * The review fact for `outcome`: a refused caller's timing is noise, so it
 * has no latency; the list time only when the review listed.
 */
export function reviewFactOf(outcome: RequestOutcome, latencyMs?: number, listMs?: number): ReviewFact {
  const metricOutcome = metricOutcomeOf(outcome);
  return {
    outcome: metricOutcome,
    ...(metricOutcome !== 'RefusedCaller' && latencyMs !== undefined ? { latencyMs } : {}),
    ...(listMs !== undefined ? { listMs } : {}),
  };
}

/** `serve`'s outcome, logged once and counted once. Throws only what `serve` throws. */
export async function observe(request: ObservedRequest, observers: Observers, serve: (observation: Observation) => Promise<RequestOutcome>): Promise<RequestOutcome> {
  const started = performance.now();
  let listMs: number | undefined;
  const metrics = observers.metrics;
  const outcome = await serve({
    timedSidecarSets: (source) =>
      metrics === undefined
        ? source
        : timedSidecarSets(source, (ms) => {
            listMs = (listMs ?? 0) + ms;
          }),
  });
  const elapsed = performance.now() - started;
  const line = logLineOf(outcome);
  observers.logger[line.level](line.level === 'error' ? 'admission failed' : 'admission', {
    function: request.fn,
    outcome: line.outcome,
    durationMs: Math.round(elapsed),
    ...(request.requestId !== undefined ? { requestId: request.requestId } : {}),
    ...line.fields,
  });
  metrics?.review(reviewFactOf(outcome, elapsed, listMs));
  return outcome;
}

/** The source, timing each list into `spent` (a review may list more than once). */
function timedSidecarSets(source: SidecarSetSource, spent: (ms: number) => void): SidecarSetSource {
  return {
    async list(signal) {
      const started = performance.now();
      try {
        return await source.list(signal);
      } finally {
        spent(performance.now() - started);
      }
    },
  };
}
