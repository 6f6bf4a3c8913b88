/**
 * The Lambda functions' recorder: every fact becomes one EMF document,
 * written as one log line (CloudWatch Logs extracts the metrics; nothing is
 * called on the request path). A resync writes one line for itself and one
 * per SidecarSet, since each line carries one value per dimension.
 */
import { errorMessage } from '../errors.ts';
import { ADMISSION_METRICS, DEPRECATED_RESYNC_METRICS, DIMENSIONS, RESYNC_METRICS, ROLLOUT_STATE_METRIC, SET_METRICS, UNAVAILABLE_PODS_METRIC } from './catalogue.ts';
import { emfDocument, roundMs, type EmfDocument, type MetricValue } from './emf.ts';
import type { AdmissionMetrics, MetricsRecorder, ResyncFact, ReviewFact, SetFigures, SetReconcileFact, StatusSyncMetrics } from './facts.ts';

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

/** How many outcome and latency combinations one function keeps a prebuilt line for; there are a dozen or so. */
const MAX_REVIEW_LINE_SHAPES = 64;

/**
 * The text of {@link reviewDocument}'s document, byte for byte, for every
 * review of `fn`: the directives and dimensions of each shape of fact (an
 * outcome, with or without each latency) are serialised once, and a review
 * only prints its timestamp and latencies into them. Every review writes one
 * such line, and building and serialising the whole document each time was
 * a twentieth of a pod-inject review.
 * @throws EmfError as {@link reviewDocument} does (the caller builds the
 *   document in full then, to report it).
 */
export function reviewLines(namespace: string, fn: string): (timestampMs: number, fact: ReviewFact) => string {
  const shapes = new Map<string, string>();
  const shape = (fact: ReviewFact): string => {
    const key = `${fact.latencyMs !== undefined ? 'L' : '-'}${fact.listMs !== undefined ? 'S' : '-'}${fact.outcome}`;
    let middle = shapes.get(key);
    if (middle === undefined) {
      // Built and checked by the one builder, with zeros for what varies.
      const document = reviewDocument(namespace, 0, fn, { outcome: fact.outcome, ...(fact.latencyMs !== undefined ? { latencyMs: 0 } : {}), ...(fact.listMs !== undefined ? { listMs: 0 } : {}) });
      const varying = new Set<string>([ADMISSION_METRICS.answerLatency.name, ADMISSION_METRICS.listLatency.name]);
      middle = `,"CloudWatchMetrics":${JSON.stringify(document._aws.CloudWatchMetrics)}}`;
      for (const key of Object.keys(document)) {
        if (key !== '_aws' && !varying.has(key)) middle += `,${JSON.stringify(key)}:${JSON.stringify(document[key])}`;
      }
      if (shapes.size >= MAX_REVIEW_LINE_SHAPES) shapes.clear();
      shapes.set(key, middle);
    }
    return middle;
  };
  return (timestampMs, fact) => {
    const finite = (ms: number | undefined) => ms === undefined || Number.isFinite(ms);
    if (!Number.isSafeInteger(timestampMs) || timestampMs < 0 || !finite(fact.latencyMs) || !finite(fact.listMs)) {
      // Refused as the builder refuses it, with its message.
      reviewDocument(namespace, timestampMs, fn, fact);
    }
    // The varying metrics come last, in this order (reviewDocument's); a finite number prints as JSON prints it.
    let line = `{"_aws":{"Timestamp":${timestampMs}${shape(fact)}`;
    if (fact.latencyMs !== undefined) line += `,"${ADMISSION_METRICS.answerLatency.name}":${roundMs(fact.latencyMs)}`;
    if (fact.listMs !== undefined) line += `,"${ADMISSION_METRICS.listLatency.name}":${roundMs(fact.listMs)}`;
    return `${line}}`;
  };
}

/** The document for a stale list served. */
export function staleDocument(namespace: string, timestampMs: number, fn: string, ageMs: number): EmfDocument {
  return emfDocument(namespace, timestampMs, { [DIMENSIONS.function]: fn }, [{ spec: ADMISSION_METRICS.staleListAge, value: roundMs(ageMs) }]);
}

/**
 * The documents for one resync: the resync's own, then one per SidecarSet, by
 * name. The deprecated names come last in the first, with the same values,
 * so that alarms on them keep working for one release (docs/UPGRADING.md).
 */
export function resyncDocuments(namespace: string, timestampMs: number, fn: string, fact: ResyncFact): EmfDocument[] {
  const durationMs = roundMs(fact.durationMs);
  const documents = [
    emfDocument(namespace, timestampMs, { [DIMENSIONS.function]: fn }, [
      { spec: RESYNC_METRICS.duration, value: durationMs },
      { spec: RESYNC_METRICS.apiRequests, value: fact.apiRequests },
      { spec: RESYNC_METRICS.statusesWritten, value: fact.statusesWritten },
      { spec: RESYNC_METRICS.podsUpdated, value: fact.podsUpdated },
      { spec: RESYNC_METRICS.podsFlipped, value: fact.podsFlipped },
      { spec: RESYNC_METRICS.podsEvicted, value: fact.podsEvicted },
      { spec: RESYNC_METRICS.podsNotInjected, value: fact.podsNotInjected },
      { spec: RESYNC_METRICS.errors, value: fact.errors },
      { spec: RESYNC_METRICS.webhooksRepointed, value: fact.webhooksRepointed },
      { spec: RESYNC_METRICS.webhooksRefused, value: fact.webhooksRefused },
      { spec: DEPRECATED_RESYNC_METRICS.duration, value: durationMs },
      { spec: DEPRECATED_RESYNC_METRICS.errors, value: fact.errors },
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

/** The documents for a requeued reconcile of one set: the pods it wrote (as a resync's), then the set's figures. */
export function setReconcileDocuments(namespace: string, timestampMs: number, fn: string, fact: SetReconcileFact): EmfDocument[] {
  return [
    emfDocument(namespace, timestampMs, { [DIMENSIONS.function]: fn }, [
      { spec: RESYNC_METRICS.podsUpdated, value: fact.podsUpdated },
      { spec: RESYNC_METRICS.podsFlipped, value: fact.podsFlipped },
    ]),
    ...setDocuments(namespace, timestampMs, fact.sidecarSet, fact.figures),
  ];
}

/**
 * The reconciler's `Function` dimension: STATUS_SYNC of lib/status-sync/resync.ts,
 * spelt out so that the webhooks' bundles do not carry the resync (a test checks the two agree).
 */
export const RECONCILER_FUNCTION = 'status-sync';

export function emfRecorder(options: EmfRecorderOptions): MetricsRecorder {
  const nowMs = options.nowMs ?? (() => Date.now());
  const emitLines = (build: (timestampMs: number) => string[]) => {
    try {
      for (const line of build(Math.floor(nowMs()))) options.write(line);
    } catch (error) {
      try {
        options.onError?.(errorMessage(error));
      } catch {
        // A failing report of a failure must not fail the request either.
      }
    }
  };
  const emit = (build: (timestampMs: number) => EmfDocument[]) => {
    emitLines((ts) => build(ts).map((document) => JSON.stringify(document)));
  };
  return {
    admission(fn): AdmissionMetrics {
      const lines = reviewLines(options.namespace, fn);
      return {
        review: (fact) => {
          emitLines((ts) => [lines(ts, fact)]);
        },
        staleServed: (ageMs) => {
          emit((ts) => [staleDocument(options.namespace, ts, fn, ageMs)]);
        },
      };
    },
    statusSync(): StatusSyncMetrics {
      return {
        resync: (fact) => {
          emit((ts) => resyncDocuments(options.namespace, ts, RECONCILER_FUNCTION, fact));
        },
        setReconcile: (fact) => {
          emit((ts) => setReconcileDocuments(options.namespace, ts, RECONCILER_FUNCTION, fact));
        },
      };
    },
  };
}
