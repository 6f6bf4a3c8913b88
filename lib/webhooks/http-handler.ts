/**
 * The HTTP handler of a webhook function, shared by the Lambda handler and the
 * fastify route so both answer identically: authentication, decoding, the
 * review within its deadline, inside the observer that logs and counts the
 * outcome (one typed `RequestOutcome`).
 */
import type { AdmissionMetrics } from '../metrics/facts.ts';
import type { Logger } from '../ports.ts';
import type { HandlerDeps } from './handler.ts';
import { callerAllowed, type CallerAuthConfig } from './authentication.ts';
import { decodeRequest, type HttpRequest } from './request-decoder.ts';
import { REFUSED_CALLER, responseOf, type HttpResponse } from './request-outcome.ts';
import { observe } from './request-observer.ts';
import { reviewWithinDeadline } from './admission-review.ts';
import { admissionRequestOf, descriptorOf } from './registry.ts';
import type { FunctionName } from './descriptors.ts';
import { conversionRequestOf, convertWithinDeadline } from './conversion-review.ts';

/** Lambda's buffered payload limit; the API server never sends more for one object. */
export const DEFAULT_MAX_BODY_BYTES = 6 * 1024 * 1024;

export { MAX_ANSWER_BYTES } from '../admission/answer-size.ts';
export { HANDLER_GRACE_MS } from './request-deadline.ts';
export { NOT_FOUND } from './request-outcome.ts';
export { callerAllowed, type CallerPresented } from './authentication.ts';
export type { HttpRequest, HttpResponse };

export interface HttpHandlerConfig extends CallerAuthConfig {
  /** An admission function, or the conversion function (its review decoded and answered as its descriptor says). */
  fn: FunctionName;
  maxBodyBytes: number;
}

/** What the handler serves with: the handler's dependencies, where its lines go, and where its metrics go (none when absent). */
type HttpHandlerDeps = Omit<HandlerDeps, 'signal'> & { logger: Logger; metrics?: AdmissionMetrics | undefined };

/** Serves one admission request, authenticating the caller first (the Lambda handler). Never throws. */
export async function serveAdmission(request: HttpRequest, config: HttpHandlerConfig, deps: HttpHandlerDeps): Promise<HttpResponse> {
  return serve(request, config, deps, true);
}

/**
 * Serves one admission request whose caller a server already checked with
 * {@link callerAllowed} before reading the body (the fastify onRequest hook),
 * so the secret is not re-read and compared a second time. Never throws.
 */
export async function serveAuthenticatedAdmission(request: HttpRequest, config: HttpHandlerConfig, deps: HttpHandlerDeps): Promise<HttpResponse> {
  return serve(request, config, deps, false);
}

async function serve(request: HttpRequest, config: HttpHandlerConfig, deps: HttpHandlerDeps, authenticate: boolean): Promise<HttpResponse> {
  const outcome = await observe({ fn: config.fn, requestId: request.requestId }, deps, async (observation) => {
    // Authentication first: a stranger learns nothing, not even which methods exist.
    if (authenticate && !(await callerAllowed(config, { path: request.path, authorization: request.headers.authorization, sourceIp: request.sourceIp }))) {
      return REFUSED_CALLER;
    }
    const { fn } = config;
    const descriptor = descriptorOf(fn);
    if (descriptor.answers === 'ConversionReview') {
      const converting = decodeRequest(request, config.maxBodyBytes, conversionRequestOf);
      if ('kind' in converting) return converting;
      return convertWithinDeadline(descriptor.handler, converting.request, request.timeout);
    }
    const opened = decodeRequest(request, config.maxBodyBytes, admissionRequestOf);
    if ('kind' in opened) return opened;
    return reviewWithinDeadline(descriptor.name, opened.request, { ...deps, sidecarSets: observation.timedSidecarSets(deps.sidecarSets) }, request.timeout);
  });
  return responseOf(outcome);
}
