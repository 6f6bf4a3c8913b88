/**
 * What every answer to every input must satisfy, whatever the input: a
 * status the wire contract documents, a JSON body, the uid echoed, nothing
 * an attacker could use, and a patch that applies to the object it was made
 * for and gives exactly what the core computes (and nothing more on a second
 * call, as the API server may reinvoke the webhook).
 */
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { createPatch } from '../json-patch.ts';
import { MAX_REVIEW_DEPTH } from '../../lib/admission/review.ts';
import { isObject, jsonEqual, nestsDeeperThan, objectOf, stringOf } from '../../lib/kube/json.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { DEFAULT_MAX_BODY_BYTES, MAX_ANSWER_BYTES } from '../../lib/webhooks/http-handler.ts';
import { deadlineFromTimeout } from '../../lib/webhooks/timeout.ts';
import { SECRET } from '../reviews.ts';
import type { BodyInput } from './arbitraries.ts';
import { FUZZ_NOW, type Cluster, type HandlerAnswer } from './handlers.ts';

/** Lambda's limit on a buffered response; a larger answer is a failed call, whatever it says. */
export const MAX_RESPONSE_BYTES = MAX_ANSWER_BYTES;

/** The handler's deadline for the `timeout=10s` every input is sent with. */
const ANSWER_WITHIN_MS = deadlineFromTimeout('10s');

/** An answer that breaks the contract; the message says which rule and how. */
export class ContractViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContractViolation';
  }
}

function violated(rule: string, answer: HandlerAnswer): never {
  throw new ContractViolation(`${rule}; got ${answer.status} ${answer.body.slice(0, 400)}`);
}

function parseOrUndefined(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** The namespace pod-inject uses: the request's, else the pod's, else "default" (as Kruise). */
function podNamespace(request: Record<string, unknown>): string {
  const fromRequest = stringOf(request.namespace) ?? '';
  if (fromRequest !== '') return fromRequest;
  return stringOf(objectOf(objectOf(request.object)?.metadata)?.namespace) ?? 'default';
}

function namespaceLabels(cluster: Cluster): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const ns of cluster.namespaces) {
    const name = stringOf(ns.metadata?.name);
    if (name !== undefined) out.set(name, { ...ns.metadata?.labels });
  }
  return out;
}

/** A JSON value as it travels: what JSON.stringify would send of it. */
function wire(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/** The injected pod the core computes for this request and cluster. */
export function coreInjection(request: Record<string, unknown>, pod: unknown, cluster: Cluster): Pod {
  return injectPod({
    pod: pod as Pod,
    namespace: podNamespace(request),
    sidecarSets: cluster.sidecarSets,
    namespaceLabels: namespaceLabels(cluster),
    now: FUZZ_NOW,
  }).pod;
}

/** The status codes an authenticated POST of JSON may get, and when. */
function checkStatus(input: BodyInput, parsed: { value: unknown } | undefined, answer: HandlerAnswer): void {
  if (input.body.length > DEFAULT_MAX_BODY_BYTES) {
    if (answer.status !== 413) violated('a body over the limit must get 413', answer);
    return;
  }
  if (parsed === undefined) {
    if (answer.status !== 400) violated('a body that is not JSON must get 400', answer);
    return;
  }
  if (nestsDeeperThan(parsed.value, MAX_REVIEW_DEPTH)) {
    // Refused as malformed, for its depth or (an array at the root) for its shape.
    const says = isObject(parsed.value) ? `nests deeper than ${MAX_REVIEW_DEPTH} levels` : 'not a JSON object';
    if (answer.status !== 400 || !answer.body.includes(says)) violated(`a body nested deeper than ${MAX_REVIEW_DEPTH} levels must get 400 (${says})`, answer);
    return;
  }
  if (answer.status === 200 || answer.status === 400) return;
  // The documented failed call for an answer too large to send (a patch many times its object).
  if (answer.status === 500 && /^\{"message":"the answer would be (?:at least )?\d+ bytes, over the \d+ a webhook answer may carry"\}$/.test(answer.body)) return;
  // The one documented way these inputs cannot be decided: a namespaceSelector
  // and a namespace the cluster does not know (failurePolicy then decides).
  if (answer.status === 503 && input.fn === 'pod-inject' && answer.body.includes('cannot decide the injection: namespace')) return;
  violated('the status must be 200 (a review) or 400 (not a review)', answer);
}

/** Nothing that helps an attacker: no secret, no stack trace, no path on this machine the caller did not send. */
export function checkNoLeak(requestText: string, answer: HandlerAnswer): void {
  if (answer.body.includes(SECRET)) violated('the answer must not contain the secret', answer);
  if (/\n\s+at \S/.test(answer.body) || /\bat [\w.<>]+ \((?:file:|\/)/.test(answer.body)) violated('the answer must not contain a stack trace', answer);
  for (const local of [process.cwd(), 'node_modules', 'file://', '.ts:']) {
    if (answer.body.includes(local) && !requestText.includes(local)) violated(`the answer must not name ${JSON.stringify(local)}`, answer);
  }
}

function checkReview(input: BodyInput, request: Record<string, unknown>, review: Record<string, unknown>, answer: HandlerAnswer): void {
  if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview') violated('a 200 must be an AdmissionReview v1', answer);
  const response = objectOf(review.response);
  if (!response) return violated('a 200 must carry a response', answer);
  const allowedKeys = new Set(['uid', 'allowed', 'status', 'patchType', 'patch', 'warnings']);
  for (const key of Object.keys(response)) if (!allowedKeys.has(key)) violated(`unexpected response field ${key}`, answer);
  if (response.uid !== request.uid) violated('the response must echo the request uid', answer);
  if (typeof response.allowed !== 'boolean') violated('allowed must be a boolean', answer);
  if (response.warnings !== undefined) {
    if (!Array.isArray(response.warnings)) violated('warnings must be a list', answer);
    for (const w of response.warnings as unknown[]) if (typeof w !== 'string' || w.length > 120) violated('each warning is a string of at most 120 characters', answer);
  }
  if (!response.allowed) {
    const status = objectOf(response.status);
    if (!status || typeof status.code !== 'number' || status.code < 400 || status.code > 499 || typeof status.message !== 'string') {
      violated('a denial carries a 4xx code and a message', answer);
    }
    if (response.patch !== undefined || response.patchType !== undefined) violated('a denial carries no patch', answer);
    return;
  }
  if ((response.patch === undefined) !== (response.patchType === undefined)) violated('patch and patchType come together', answer);
  if (response.patch === undefined) return;
  if (input.fn === 'sidecarset-validate') violated('a validating webhook must not patch', answer);
  if (response.patchType !== 'JSONPatch' || typeof response.patch !== 'string') violated('the patch is a JSONPatch string', answer);
  checkPatch(input, request, response.patch, answer);
}

/** The patch applies to the object as received and gives what the core computes; a second call changes nothing. */
function checkPatch(input: BodyInput, request: Record<string, unknown>, patch: string, answer: HandlerAnswer): void {
  const object = request.object;
  let patched: unknown;
  try {
    patched = applyPatch(object, decodePatch(patch));
  } catch (error) {
    violated(`the patch must apply to the object it was made for: ${(error as Error).message}`, answer);
  }
  const core = (received: unknown) =>
    input.fn === 'sidecarset-default' ? defaultSidecarSet(received as SidecarSet) : coreInjection(request, received, input.cluster);
  if (!jsonEqual(patched, wire(core(object)))) violated('the patched object must be what the core computed', answer);
  if (input.reinvocable === false) return;
  let again: unknown;
  try {
    again = core(patched);
  } catch (error) {
    violated(`a second call must answer as the first, but fails: ${(error as Error).message}`, answer);
  }
  const second = createPatch(patched, wire(again));
  if (second.length > 0) violated(`a second call must change nothing, but would patch ${JSON.stringify(second).slice(0, 300)}`, answer);
}

/**
 * Checks one answer to an authenticated POST of `input`.
 * @throws ContractViolation naming the broken rule.
 */
export function checkAnswer(input: BodyInput, answer: HandlerAnswer): void {
  const text = input.body.toString('utf8');
  const parsed = input.body.length > DEFAULT_MAX_BODY_BYTES ? undefined : parseOrUndefined(text);
  checkStatus(input, parsed, answer);
  // The API server gives up after its timeout (10 s here); the deadline cannot interrupt arithmetic.
  if (answer.ms > ANSWER_WITHIN_MS) violated(`the answer must come within ${ANSWER_WITHIN_MS} ms (took ${Math.round(answer.ms)})`, answer);
  if (!/^application\/json\b/.test(answer.contentType ?? '')) violated('the answer is application/json', answer);
  if (Buffer.byteLength(JSON.stringify(answer.body)) > MAX_RESPONSE_BYTES) violated(`the answer must fit Lambda's 6 MB (${Buffer.byteLength(answer.body)} bytes)`, answer);
  checkNoLeak(text, answer);
  const body = parseOrUndefined(answer.body);
  if (body === undefined || !isObject(body.value)) return violated('the answer is a JSON object', answer);
  if (answer.status !== 200) {
    const keys = Object.keys(body.value);
    if (keys.length !== 1 || keys[0] !== 'message' || typeof body.value.message !== 'string' || body.value.message === '') {
      violated('an error answer is exactly {"message": "..."}', answer);
    }
    return;
  }
  const request = parsed !== undefined && isObject(parsed.value) ? objectOf(parsed.value.request) : undefined;
  if (!request) return violated('a 200 answers an AdmissionReview request', answer);
  checkReview(input, request, body.value, answer);
}
