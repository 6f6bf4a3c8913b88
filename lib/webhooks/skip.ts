/**
 * Skip rules as wrappers around a handler (Kyverno style) rather than `if`s
 * inside it: each lets a request through unchanged when the handler has
 * nothing to say about it.
 */
import { skipped } from '../admission/responses.ts';
import type { AdmissionRequest, Operation } from '../admission/review.ts';
import { isObject } from '../kube/json.ts';
import type { AdmissionHandler } from './handler.ts';

type Predicate = (request: AdmissionRequest) => boolean;

function skipWhen(predicate: Predicate, handler: AdmissionHandler): AdmissionHandler {
  return (request, deps) => (predicate(request) ? Promise.resolve(skipped()) : handler(request, deps));
}

/** Only these operations reach the handler. */
export function onlyOperations(operations: readonly Operation[], handler: AdmissionHandler): AdmissionHandler {
  return skipWhen((r) => !operations.includes(r.operation), handler);
}

/** Requests for a subresource (pods/status, pods/binding...) pass untouched. */
export function skipSubresources(handler: AdmissionHandler): AdmissionHandler {
  return skipWhen((r) => r.subResource !== undefined && r.subResource !== '', handler);
}

/** The request's object is being deleted (it carries a deletionTimestamp): {@link skipDeleting}'s test, which an explanation of a skip reads too. */
export function isDeleting(request: Pick<AdmissionRequest, 'object'>): boolean {
  const metadata = isObject(request.object) ? request.object.metadata : undefined;
  return isObject(metadata) && metadata.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null;
}

/** Objects already being deleted pass untouched. */
export function skipDeleting(handler: AdmissionHandler): AdmissionHandler {
  return skipWhen(isDeleting, handler);
}

/**
 * Only requests about this kind reach the handler; a webhook configuration that
 * sends anything else is misconfigured, and blocking those objects would be worse.
 */
export function onlyKind(group: string, kind: string, handler: AdmissionHandler): AdmissionHandler {
  return skipWhen((r) => r.kind.group !== group || r.kind.kind !== kind, handler);
}
