/**
 * The Lambda functions' recorder: every fact becomes one EMF document,
 * written as one log line (CloudWatch Logs extracts the metrics; nothing is
 * called on the request path). A pass writes one line for itself and one
 * per SidecarSet, since each line carries one value per dimension.
 */
import { errorMessage } from '../errors.ts';
import { ADMISSION_METRICS, DIMENSIONS, PASS_METRICS, ROLLOUT_STATE_METRIC, SET_METRICS, UNAVAILABLE_PODS_METRIC } from './catalogue.ts';
import { emfDocument, roundMs, type EmfDocument, type MetricValue } from './emf.ts';
import type { AdmissionMetrics, MetricsRecorder, PassFact, ReviewFact, SetFigures, SetPassFact, StatusSyncMetrics } from './facts.ts';

export interface EmfRecorderOptions {
  namespace: string;
  /** Writes one line (standard output on Lambda). */
  write: (line: string) => void;
  /** Milliseconds since the epoch. */
  nowMs?: () => number;
  /** Told when a document could not be built or written; metrics never fail a request. */
  onError?: (message: string) => void;
}

/** The document for one review. */
export function reviewDocument(namespace: string, timestampMs: number, fn: string, fact: ReviewFact): EmfDocument {
  const values: MetricValue[] = [{ spec: ADMISSION_METRICS.reviews, value: 1 }];
  if (fact.latencyMs !== undefined) values.push({ spec: ADMISSION_METRICS.answerLatency, value: roundMs(fact.latencyMs) });
  if (fact.listMs !== undefined) values.push({ spec: ADMISSION_METRICS.listLatency, value: roundMs(fact.listMs) });
  return emfDocument(namespace, timestampMs, { [DIMENSIONS.function]: fn, [DIMENSIONS.outcome]: fact.outcome }, values);
}

/** The document for a stale list served. */
export function staleDocument(namespace: string, timestampMs: number, fn: string, ageMs: number): EmfDocument {
  return emfDocument(namespace, timestampMs, { [DIMENSIONS.function]: fn }, [{ spec: ADMISSION_METRICS.staleListAge, value: roundMs(ageMs) }]);
}

/** The documents for one pass: the pass's own, then one per SidecarSet, by name. */
export function passDocuments(namespace: string, timestampMs: number, fn: string, fact: PassFact): EmfDocument[] {
  const documents = [
    emfDocument(namespace, timestampMs, { [DIMENSIONS.function]: fn }, [
      { spec: PASS_METRICS.duration, value: roundMs(fact.durationMs) },
      { spec: PASS_METRICS.apiRequests, value: fact.apiRequests },
      { spec: PASS_METRICS.statusesWritten, value: fact.statusesWritten },
      { spec: PASS_METRICS.podsUpdated, value: fact.podsUpdated },
      { spec: PASS_METRICS.podsFlipped, value: fact.podsFlipped },
      { spec: PASS_METRICS.podsNotInjected, value: fact.podsNotInjected },
      { spec: PASS_METRICS.errors, value: fact.errors },
      { spec: PASS_METRICS.webhooksRepointed, value: fact.webhooksRepointed },
    ]),
  ];
  for (const name of Object.keys(fact.sets).sort()) {
    const set = fact.sets[name];
    if (set !== undefined) documents.push(...setDocuments(namespace, timestampMs, name, set));
  }
  return documents;
}

/** One set's documents: its figures (with its state as a dimension), then one per reason its updated pods are unavailable. */
export function setDocuments(namespace: string, timestampMs: number, name: string, set: SetFigures): EmfDocument[] {
  const values: MetricValue[] = [
    { spec: SET_METRICS.matchedPods, value: set.matchedPods },
    { spec: SET_METRICS.updatedPods, value: set.updatedPods },
    { spec: SET_METRICS.readyPods, value: set.readyPods },
    { spec: SET_METRICS.updatedReadyPods, value: set.updatedReadyPods },
    { spec: SET_METRICS.notInjectedPods, value: set.notInjectedPods },
  ];
  if (set.state !== undefined) values.push({ spec: ROLLOUT_STATE_METRIC, value: 1 });
  const dimensions: Record<string, string> = { [DIMENSIONS.sidecarSet]: name, ...(set.state !== undefined ? { [DIMENSIONS.state]: set.state } : {}) };
  const documents = [emfDocument(namespace, timestampMs, dimensions, values)];
  for (const reason of Object.keys(set.unavailable ?? {}).sort()) {
    documents.push(emfDocument(namespace, timestampMs, { [DIMENSIONS.sidecarSet]: name, [DIMENSIONS.reason]: reason }, [{ spec: UNAVAILABLE_PODS_METRIC, value: set.unavailable?.[reason] ?? 0 }]));
  }
  return documents;
}

/** The documents for a follow-up pass of one set: the pods it wrote (as a pass's), then the set's figures. */
export function setPassDocuments(namespace: string, timestampMs: number, fn: string, fact: SetPassFact): EmfDocument[] {
  return [
    emfDocument(namespace, timestampMs, { [DIMENSIONS.function]: fn }, [
      { spec: PASS_METRICS.podsUpdated, value: fact.podsUpdated },
      { spec: PASS_METRICS.podsFlipped, value: fact.podsFlipped },
    ]),
    ...setDocuments(namespace, timestampMs, fact.sidecarSet, fact.figures),
  ];
}

/**
 * The reconciler's `Function` dimension: STATUS_SYNC of lib/status-sync/pass.ts,
 * spelt out so that the webhooks' bundles do not carry the pass (a test checks the two agree).
 */
export const RECONCILER_FUNCTION = 'status-sync';

export function emfRecorder(options: EmfRecorderOptions): MetricsRecorder {
  const nowMs = options.nowMs ?? (() => Date.now());
  const emit = (build: (timestampMs: number) => EmfDocument[]) => {
    try {
      for (const document of build(Math.floor(nowMs()))) options.write(JSON.stringify(document));
    } catch (error) {
      try {
        options.onError?.(errorMessage(error));
      } catch {
        // A failing report of a failure must not fail the request either.
      }
    }
  };
  return {
    admission(fn): AdmissionMetrics {
      return {
        review: (fact) => {
          emit((ts) => [reviewDocument(options.namespace, ts, fn, fact)]);
        },
        staleServed: (ageMs) => {
          emit((ts) => [staleDocument(options.namespace, ts, fn, ageMs)]);
        },
      };
    },
    statusSync(): StatusSyncMetrics {
      return {
        pass: (fact) => {
          emit((ts) => passDocuments(options.namespace, ts, RECONCILER_FUNCTION, fact));
        },
        setPass: (fact) => {
          emit((ts) => setPassDocuments(options.namespace, ts, RECONCILER_FUNCTION, fact));
        },
      };
    },
  };
}
