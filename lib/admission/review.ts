/**
 * admission.k8s.io/v1 AdmissionReview: decoding and checking a request, and
 * wrapping a response. The checks name the first problem found so a caller
 * (or a person running the invoke command) can fix it.
 */
import { isObject, nestsDeeperThan, textNestsAtMost } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_KIND = 'AdmissionReview';

export const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const;
export type Operation = (typeof OPERATIONS)[number];

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource?: JsonObject;
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo?: JsonObject;
  /** The object as received; never re-encoded (unknown fields must survive). */
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  options?: unknown;
  [key: string]: unknown;
}

export interface AdmissionStatus {
  code: number;
  message: string;
  reason?: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  patchType?: 'JSONPatch';
  /** Base64 of an RFC 6902 document. */
  patch?: string;
  warnings?: string[];
}

export interface AdmissionReviewResponse {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: typeof ADMISSION_KIND;
  response: AdmissionResponse;
}

/** The body is not an AdmissionReview v1 request; the message says why. */
export class InvalidReviewError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidReviewError';
  }
}

function fail(message: string): never {
  throw new InvalidReviewError(message);
}

/** Longest rendering of a received value quoted in a message (and so in a 400 body and a log line). */
const MAX_SHOWN = 64;

/** A received value as JSON, cut short: the body may be megabytes, and the message is logged. */
function shown(value: unknown): string {
  // JSON.stringify gives undefined (not a string) for a missing value.
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}...` : text;
}

/**
 * The deepest nesting a review may have. The handlers copy, default, hash and
 * diff objects recursively, and V8 runs out of stack a little past 2,000
 * levels (structuredClone first), which would answer 500 as if the webhook
 * had crashed. Real objects nest a few dozen levels at most, so a request
 * beyond this is refused as malformed, before any of that work starts.
 */
export const MAX_REVIEW_DEPTH = 1000;

/**
 * Checks that `body` is an AdmissionReview v1 request and returns its request.
 * `parsedFrom`, when given, must be the text `body` is `JSON.parse` of (the
 * HTTP handler's request body): its depth is then told from the text when the
 * text can tell it, and the parsed body is walked only when it cannot.
 * @throws InvalidReviewError naming the first problem.
 */
export function decodeReview(body: unknown, parsedFrom?: string): AdmissionRequest {
  if (!isObject(body)) fail('the body is not a JSON object');
  if ((parsedFrom === undefined || !textNestsAtMost(parsedFrom, MAX_REVIEW_DEPTH)) && nestsDeeperThan(body, MAX_REVIEW_DEPTH)) {
    fail(`the body nests deeper than ${MAX_REVIEW_DEPTH} levels`);
  }
  if (body.apiVersion !== ADMISSION_API_VERSION) {
    fail(`apiVersion is ${shown(body.apiVersion)}, expected "${ADMISSION_API_VERSION}"`);
  }
  if (body.kind !== ADMISSION_KIND) fail(`kind is ${shown(body.kind)}, expected "${ADMISSION_KIND}"`);
  const request = body.request;
  if (!isObject(request)) fail('request is missing or not an object');
  if (typeof request.uid !== 'string' || request.uid === '') fail('request.uid is missing or not a non-empty string');
  const kind = request.kind;
  if (!isObject(kind) || typeof kind.group !== 'string' || typeof kind.version !== 'string' || typeof kind.kind !== 'string') {
    fail('request.kind must be an object with string group, version and kind');
  }
  if (!(OPERATIONS as readonly unknown[]).includes(request.operation)) {
    fail(`request.operation is ${shown(request.operation)}, expected one of ${OPERATIONS.join(', ')}`);
  }
  for (const key of ['subResource', 'name', 'namespace'] as const) {
    if (request[key] !== undefined && typeof request[key] !== 'string') fail(`request.${key} must be a string`);
  }
  if (request.dryRun !== undefined && typeof request.dryRun !== 'boolean') fail('request.dryRun must be a boolean');
  const operation = request.operation as Operation;
  if ((operation === 'CREATE' || operation === 'UPDATE') && !isObject(request.object)) {
    fail(`request.object must be an object for ${operation}`);
  }
  if (operation === 'UPDATE' && !isObject(request.oldObject)) fail('request.oldObject must be an object for UPDATE');
  return request as AdmissionRequest;
}

/** Wraps a response in the AdmissionReview envelope the API server expects. */
export function reviewOf(response: AdmissionResponse): AdmissionReviewResponse {
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_KIND, response };
}
