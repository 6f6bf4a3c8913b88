/**
 * The HTTP side of an admission function, shared by the Lambda Function URL
 * handler and the fastify route so both answer identically: caller
 * authentication, method, content type and size checks, then the review.
 */
import { errorMessage } from '../errors.ts';
import { isAuthorizedCaller, type CallerSecrets } from '../auth/caller-auth.ts';
import type { CallerNetworks } from '../auth/caller-network.ts';
import { reviewOutcomeOf, type AdmissionMetrics } from '../metrics/facts.ts';
import type { Logger, SidecarSetSource } from '../ports.ts';
import type { HandlerDeps } from './handler.ts';
import { admissionRequestOf, reviewRequest, type AdmissionFunctionName, type ReviewedOutcome } from './registry.ts';
import { MAX_ANSWER_BYTES } from '../admission/answer-size.ts';
import { deadlineFromTimeout } from './timeout.ts';

/** Lambda's buffered payload limit; the API server never sends more for one object. */
export const DEFAULT_MAX_BODY_BYTES = 6 * 1024 * 1024;

export { MAX_ANSWER_BYTES } from '../admission/answer-size.ts';

export interface HttpRequest {
  method: string;
  /** The path after the function's own prefix: `/<secret>` or `/`. */
  path: string;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
  /** The `timeout` query parameter the API server appends (`10s`). */
  timeout?: string | undefined;
  body: string;
  /** The body's size in bytes as received. */
  bodyBytes: number;
  /** The platform's id for this request (Lambda's requestId), for logs. */
  requestId?: string | undefined;
  /** The address the request came from (the Function URL's sourceIp, the socket's peer): never a header. */
  sourceIp?: string | undefined;
}

export interface HttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

export interface HttpDoorConfig {
  fn: AdmissionFunctionName;
  /** `insecure` only when the operator explicitly allowed unauthenticated callers (local development). */
  secrets: CallerSecrets | 'insecure';
  /** Source addresses that may call at all; undefined allows any (the secret still decides). */
  callerNetworks?: CallerNetworks | undefined;
  /** Re-reads `secrets` when due (see lib/auth/secret-refresh.ts); never rejects. */
  refreshSecrets?: (() => Promise<void>) | undefined;
  maxBodyBytes: number;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

function message(statusCode: number, text: string, extra: Record<string, string> = {}): HttpResponse {
  return { statusCode, headers: { ...JSON_HEADERS, ...extra }, body: JSON.stringify({ message: text }) };
}

/**
 * How long the door waits past the handler's deadline before answering 503
 * itself: long enough for a handler that honours its signal to answer (a
 * stale cached list is still a decision), well inside the deadline margin.
 */
export const HANDLER_GRACE_MS = 200;


/** What a stranger sees for any request: the same as for a path that does not exist. */
export const NOT_FOUND: HttpResponse = message(404, 'Not Found');

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const [type] = value.split(';');
  return type?.trim().toLowerCase() === 'application/json';
}

export interface CallerPresented {
  path: string;
  authorization: string | undefined;
  sourceIp: string | undefined;
}

/**
 * Whether the caller may be served: its source address is in the allowlist
 * (when there is one), checked first, then it presented the secret (always
 * true when unauthenticated callers are explicitly allowed). The secrets are
 * re-read first when due.
 */
export async function callerAllowed(config: Pick<HttpDoorConfig, 'secrets' | 'callerNetworks' | 'refreshSecrets'>, caller: CallerPresented): Promise<boolean> {
  if (config.callerNetworks !== undefined && !config.callerNetworks.allows(caller.sourceIp)) return false;
  if (config.refreshSecrets !== undefined) await config.refreshSecrets();
  return config.secrets === 'insecure' || isAuthorizedCaller(caller, config.secrets);
}

/** What the door serves with: the handler's dependencies, where its lines go, and where its metrics go (none when absent). */
type DoorDeps = Omit<HandlerDeps, 'signal'> & { logger: Logger; metrics?: AdmissionMetrics | undefined };

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

/** Serves one admission request, checking the caller first (the Lambda door). Never throws. */
export async function serveAdmission(request: HttpRequest, config: HttpDoorConfig, deps: DoorDeps): Promise<HttpResponse> {
  return serve(request, config, deps, true);
}

/**
 * Serves one admission request whose caller a server already checked with
 * {@link callerAllowed} before reading the body (the fastify onRequest hook),
 * so the secret is not re-read and compared a second time. Never throws.
 */
export async function serveAuthenticatedAdmission(request: HttpRequest, config: HttpDoorConfig, deps: DoorDeps): Promise<HttpResponse> {
  return serve(request, config, deps, false);
}

async function serve(request: HttpRequest, config: HttpDoorConfig, deps: DoorDeps, authenticate: boolean): Promise<HttpResponse> {
  const started = performance.now();
  let listMs: number | undefined;
  // The metrics come from the same facts as the log line, at the same moment.
  const log = (outcome: string, fields: Record<string, unknown>, level: 'info' | 'error' = 'info') => {
    const elapsed = performance.now() - started;
    deps.logger[level](level === 'error' ? 'admission failed' : 'admission', {
      function: config.fn,
      outcome,
      durationMs: Math.round(elapsed),
      ...(request.requestId !== undefined ? { requestId: request.requestId } : {}),
      ...fields,
    });
    if (deps.metrics === undefined) return;
    const metricOutcome = reviewOutcomeOf(outcome);
    deps.metrics.review({
      outcome: metricOutcome,
      ...(metricOutcome !== 'RefusedCaller' ? { latencyMs: elapsed } : {}),
      ...(listMs !== undefined ? { listMs } : {}),
    });
  };
  // Authentication first: a stranger learns nothing, not even which methods exist.
  if (authenticate && !(await callerAllowed(config, { path: request.path, authorization: request.headers.authorization, sourceIp: request.sourceIp }))) {
    log('unauthenticated', { statusCode: 404 });
    return NOT_FOUND;
  }
  if (request.method !== 'POST') {
    log('rejected', { statusCode: 405, reason: `method ${request.method}` });
    return message(405, 'only POST is accepted', { allow: 'POST' });
  }
  if (!isJsonContentType(request.headers['content-type'])) {
    log('rejected', { statusCode: 415, reason: 'content type' });
    return message(415, 'the body must be application/json');
  }
  if (request.bodyBytes > config.maxBodyBytes) {
    log('rejected', { statusCode: 413, bytes: request.bodyBytes });
    return message(413, `the body is ${request.bodyBytes} bytes; the limit is ${config.maxBodyBytes}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(request.body);
  } catch (error) {
    log('rejected', { statusCode: 400, reason: 'not JSON' });
    return message(400, `the body is not JSON: ${(error as Error).message}`);
  }
  const decoded = admissionRequestOf(body);
  if ('invalid' in decoded) {
    log('rejected', { statusCode: 400, reason: decoded.invalid });
    return message(400, decoded.invalid);
  }
  const review = decoded.request;
  const deadline = deadlineFromTimeout(request.timeout);
  // The handler's own deadline: sources stop waiting (or serve a stale cache)
  // when it aborts. Not AbortSignal.timeout(): its timer and signal would
  // live on for the whole deadline after the answer, so a warm function
  // would hold seconds' worth of them (measured: ~850 bytes per call).
  const controller = new AbortController();
  const deadlineTimer = setTimeout(() => {
    controller.abort(new DOMException(`the ${deadline} ms deadline passed`, 'TimeoutError'));
  }, deadline);
  const signal = controller.signal;
  // The door's: a handler that ignores its signal must still not make the
  // API server wait past its timeout, so the door answers 503 itself.
  let backstopTimer: ReturnType<typeof setTimeout> | undefined;
  const backstop = new Promise<ReviewedOutcome>((resolve) => {
    backstopTimer = setTimeout(() => {
      resolve({ kind: 'failed', uid: review.uid, status: 503, message: `no decision within the ${deadline} ms deadline` });
    }, deadline + HANDLER_GRACE_MS);
  });
  let outcome: ReviewedOutcome;
  try {
    const sidecarSets = deps.metrics === undefined ? deps.sidecarSets : timedSidecarSets(deps.sidecarSets, (ms) => {
      listMs = (listMs ?? 0) + ms;
    });
    outcome = await Promise.race([reviewRequest(config.fn, review, { ...deps, sidecarSets, signal }), backstop]);
  } catch (error) {
    // reviewRequest does not throw; this is the last line of defence against a crash.
    outcome = { kind: 'failed', uid: review.uid, status: 500, message: `internal error: ${errorMessage(error)}` };
  } finally {
    clearTimeout(deadlineTimer);
    clearTimeout(backstopTimer);
  }
  switch (outcome.kind) {
    case 'review': {
      const body = JSON.stringify(outcome.review);
      // A patch can be many times its object (defaults for thousands of
      // containers). Past Lambda's limit the platform would fail the call
      // with its own error; failing it here says why, and the same on both doors.
      // Escaped once more, one UTF-16 unit becomes at most 6 bytes (\u001f):
      // an answer under a sixth of the limit cannot exceed it, and the exact
      // count, a second serialisation, is only paid for large answers.
      const bytes = body.length * 6 + 2 <= MAX_ANSWER_BYTES ? undefined : Buffer.byteLength(JSON.stringify(body));
      if (bytes !== undefined && bytes > MAX_ANSWER_BYTES) {
        const text = `the answer would be ${bytes} bytes, over the ${MAX_ANSWER_BYTES} a webhook answer may carry`;
        log('failed', { uid: outcome.uid, statusCode: 500, error: text }, 'error');
        return message(500, text);
      }
      log(outcome.outcome, { uid: outcome.uid, statusCode: 200 });
      return { statusCode: 200, headers: { ...JSON_HEADERS }, body };
    }
    case 'failed':
      log('failed', { uid: outcome.uid, statusCode: outcome.status, error: outcome.message }, 'error');
      return message(outcome.status, outcome.message);
  }
}
