/**
 * The one core every entry point calls: `(request, deps) -> result`. A handler
 * never throws: a failure becomes a failed call (non-200), so that the webhook
 * configuration's failurePolicy decides.
 */
import type { AdmissionRequest } from '../admission/review.ts';
import type { Verdict } from '../admission/responses.ts';
import { AnswerTooLargeError } from '../admission/answer-size.ts';
import { errorMessage } from '../errors.ts';
import type { Clock, Logger, NamespaceSource, PodSource, RevisionSource, RolloutTrigger, SidecarSetSource } from '../ports.ts';

export interface HandlerDeps {
  sidecarSets: SidecarSetSource;
  namespaces: NamespaceSource;
  clock: Clock;
  /** ControllerRevisions, for pinned revisions (pod-inject, sidecarset-validate); absent where none are read. */
  revisions?: RevisionSource;
  /** One pod by name: the pod an Eviction names (pod-change, answering as the pod-eviction webhook); absent where none are read. */
  pods?: PodSource;
  /** Told about admitted SidecarSet changes (sidecarset-validate) and pod changes (pod-inject, pod-change); absent where nothing listens. */
  rollout?: RolloutTrigger;
  /** For what goes wrong without changing the answer (a trigger that failed); the HTTP handler passes its own. */
  logger?: Logger;
  /** Aborted when the webhook must answer (the API server's timeout minus a margin). */
  signal?: AbortSignal;
  /** pod-inject: sort the injected sidecar containers by name (injection-order.ts; Kruise 1.9's EnableSortSidecarContainerByName). */
  sortSidecarsByName?: boolean;
}

/** Why a handler could not decide; answered 500/503 with this message. */
export interface HandlerFailure {
  status: 500 | 503;
  message: string;
  cause?: unknown;
}

/** What a handler decided (a verdict from lib/admission/responses.ts, not yet addressed to the request's uid), or why it could not; `outcome` names it for logs. */
export type HandlerResult = Verdict | { outcome: 'failed'; failure: HandlerFailure };

export type AdmissionHandler = (request: AdmissionRequest, deps: HandlerDeps) => Promise<HandlerResult>;

export function failed(status: 500 | 503, message: string, cause?: unknown): HandlerResult {
  return { outcome: 'failed', failure: cause === undefined ? { status, message } : { status, message, cause } };
}

/**
 * Wraps a handler so that an unexpected exception becomes a 500 failure
 * rather than a crash: the API server then applies failurePolicy.
 */
export function neverThrows(handler: AdmissionHandler): AdmissionHandler {
  return async (request, deps) => {
    try {
      return await handler(request, deps);
    } catch (error) {
      // A decision after all, only too large to send: said as admission-review.ts says it.
      if (error instanceof AnswerTooLargeError) return failed(500, error.message, error);
      return failed(500, `internal error: ${errorMessage(error)}`, error);
    }
  };
}
