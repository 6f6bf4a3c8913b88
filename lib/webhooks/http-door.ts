/**
 * The HTTP side of an admission function, shared by the Lambda Function URL
 * handler and the fastify route so both answer identically. It is put
 * together from the door's parts, each ending in one typed outcome
 * (`door-outcome.ts`): the caller gate (`door-gate.ts`), the envelope
 * (`door-envelope.ts`: method, content type, size, JSON, the AdmissionReview
 * decoded), the review within its deadline (`door-review.ts`,
 * `door-deadline.ts`), all inside the observer that logs and counts the
 * outcome (`door-observer.ts`).
 */
import type { AdmissionMetrics } from '../metrics/facts.ts';
import type { Logger } from '../ports.ts';
import type { HandlerDeps } from './handler.ts';
import { callerAllowed, type CallerGateConfig } from './door-gate.ts';
import { openEnvelope, type HttpRequest } from './door-envelope.ts';
import { REFUSED_CALLER, responseOf, type HttpResponse } from './door-outcome.ts';
import { observe } from './door-observer.ts';
import { reviewWithinDeadline } from './door-review.ts';
import { admissionRequestOf, descriptorOf } from './registry.ts';
import type { FunctionName } from './descriptors.ts';
import { conversionRequestOf, convertWithinDeadline } from './conversion-door.ts';

/** Lambda's buffered payload limit; the API server never sends more for one object. */
export const DEFAULT_MAX_BODY_BYTES = 6 * 1024 * 1024;

export { MAX_ANSWER_BYTES } from '../admission/answer-size.ts';
export { HANDLER_GRACE_MS } from './door-deadline.ts';
export { NOT_FOUND } from './door-outcome.ts';
export { callerAllowed, type CallerPresented } from './door-gate.ts';
export type { HttpRequest, HttpResponse };

export interface HttpDoorConfig extends CallerGateConfig {
  /** An admission function, or the conversion function (its review decoded and answered as its descriptor says). */
  fn: FunctionName;
  maxBodyBytes: number;
}

/** What the door serves with: the handler's dependencies, where its lines go, and where its metrics go (none when absent). */
type DoorDeps = Omit<HandlerDeps, 'signal'> & { logger: Logger; metrics?: AdmissionMetrics | undefined };

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
  const outcome = await observe({ fn: config.fn, requestId: request.requestId }, deps, async (observation) => {
    // Authentication first: a stranger learns nothing, not even which methods exist.
    if (authenticate && !(await callerAllowed(config, { path: request.path, authorization: request.headers.authorization, sourceIp: request.sourceIp }))) {
      return REFUSED_CALLER;
    }
    const { fn } = config;
    const descriptor = descriptorOf(fn);
    if (descriptor.answers === 'ConversionReview') {
      const converting = openEnvelope(request, config.maxBodyBytes, conversionRequestOf);
      if ('kind' in converting) return converting;
      return convertWithinDeadline(descriptor.handler, converting.request, request.timeout);
    }
    const opened = openEnvelope(request, config.maxBodyBytes, admissionRequestOf);
    if ('kind' in opened) return opened;
    return reviewWithinDeadline(descriptor.name, opened.request, { ...deps, sidecarSets: observation.timedSidecarSets(deps.sidecarSets) }, request.timeout);
  });
  return responseOf(outcome);
}
