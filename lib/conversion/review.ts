/**
 * The CRD conversion webhook's review: an apiextensions.k8s.io/v1
 * ConversionReview in, the same review with its response out. Pure: the
 * HTTP handler that carries it (the sidecarset-convert function) authenticates the caller,
 * the method and the body's size first, and parses the JSON.
 *
 * Every object is converted, in order, to the desired version; one that
 * cannot be fails the whole review (the API server then fails the request
 * that needed it), with a message naming the object by index and name.
 */
import { isObject, nestsDeeperThan } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import { GROUP } from '../sidecarset/types.ts';
import { convertSidecarSet, MAX_CONVERSION_DEPTH, shown, sidecarSetVersionOf, SIDECARSET_VERSIONS } from './sidecarset-conversion.ts';

export const CONVERSION_REVIEW_API_VERSION = 'apiextensions.k8s.io/v1';
export const CONVERSION_REVIEW_KIND = 'ConversionReview';

/**
 * The most objects one review may hold. The API server sends one review per
 * request, a list's items together; ten thousand SidecarSets is far past any
 * real cluster, and bounds the work a single call can ask for.
 */
export const MAX_CONVERSION_OBJECTS = 10_000;

/** The largest object (as JSON) one review may hold: twice etcd's default request limit of 1.5 MiB. */
export const MAX_CONVERSION_OBJECT_BYTES = 3 * 1024 * 1024;

/** How a review went: every object converted, a well-formed review that failed, or no review at all (no uid to answer). */
export type ConversionOutcome = 'converted' | 'failed' | 'malformed';

export interface ConversionAnswer {
  /** The ConversionReview to send back (for a malformed one, with an empty uid). */
  review: JsonObject;
  outcome: ConversionOutcome;
  /** How many objects were converted (0 unless converted). */
  converted: number;
  /** The failure message, when not converted. */
  message?: string;
}

function answer(uid: string, outcome: ConversionOutcome, convertedObjects: JsonObject[], message?: string): ConversionAnswer {
  const result = message === undefined ? { status: 'Success' } : { status: 'Failure', message };
  return {
    review: { apiVersion: CONVERSION_REVIEW_API_VERSION, kind: CONVERSION_REVIEW_KIND, response: { uid, convertedObjects, result } },
    outcome,
    converted: convertedObjects.length,
    ...(message === undefined ? {} : { message }),
  };
}

const malformed = (problem: string): ConversionAnswer => answer('', 'malformed', [], `malformed ConversionReview: ${problem}`);

/** `objects[i]` and its name when it has one, for messages. */
function objectLabel(index: number, object: unknown): string {
  const name = isObject(object) && isObject(object.metadata) ? object.metadata.name : undefined;
  return typeof name === 'string' ? `objects[${index}] (name ${shown(name)})` : `objects[${index}]`;
}

function convertAll(uid: string, desiredAPIVersion: unknown, objects: unknown): ConversionAnswer {
  const to = sidecarSetVersionOf(desiredAPIVersion);
  if (to === undefined) {
    return answer(uid, 'failed', [], `request.desiredAPIVersion is ${shown(desiredAPIVersion)}, expected ${SIDECARSET_VERSIONS.map((v) => `"${GROUP}/${v}"`).join(' or ')}`);
  }
  if (!Array.isArray(objects)) return answer(uid, 'failed', [], 'request.objects must be an array');
  if (objects.length > MAX_CONVERSION_OBJECTS) {
    return answer(uid, 'failed', [], `request.objects holds ${objects.length} objects, more than ${MAX_CONVERSION_OBJECTS}`);
  }
  const converted: JsonObject[] = [];
  for (const [index, object] of objects.entries()) {
    // Before anything walks it recursively (the size is measured with JSON.stringify).
    if (nestsDeeperThan(object, MAX_CONVERSION_DEPTH)) {
      return answer(uid, 'failed', [], `${objectLabel(index, object)}: the object nests deeper than ${MAX_CONVERSION_DEPTH} levels`);
    }
    // JSON.stringify gives undefined for undefined, which an array parsed from JSON never holds.
    const bytes = object === undefined ? 0 : Buffer.byteLength(JSON.stringify(object));
    if (bytes > MAX_CONVERSION_OBJECT_BYTES) {
      return answer(uid, 'failed', [], `${objectLabel(index, object)}: ${bytes} bytes, more than ${MAX_CONVERSION_OBJECT_BYTES}`);
    }
    const result = convertSidecarSet(object, to);
    if (!result.ok) return answer(uid, 'failed', [], `${objectLabel(index, object)}: cannot convert to ${GROUP}/${to}: ${result.error}`);
    converted.push(result.object);
  }
  return answer(uid, 'converted', converted);
}

/**
 * Why `body` (parsed JSON) is no ConversionReview v1 request, or undefined
 * when it is one (an object of that apiVersion and kind, with a request
 * carrying a uid). The HTTP handler answers a body that is none with a 400.
 */
export function conversionReviewProblem(body: unknown): string | undefined {
  if (!isObject(body)) return 'the body is not a JSON object';
  if (body.apiVersion !== CONVERSION_REVIEW_API_VERSION) return `apiVersion is ${shown(body.apiVersion)}, expected "${CONVERSION_REVIEW_API_VERSION}"`;
  if (body.kind !== CONVERSION_REVIEW_KIND) return `kind is ${shown(body.kind)}, expected "${CONVERSION_REVIEW_KIND}"`;
  const request = body.request;
  if (!isObject(request)) return 'request is missing or not an object';
  if (typeof request.uid !== 'string' || request.uid === '') return 'request.uid is missing or not a non-empty string';
  return undefined;
}

/**
 * The answer to a ConversionReview v1 request (`body`, parsed JSON). Never
 * throws: a body that is no such review is answered `malformed`, a review
 * that cannot be converted `failed` with a message naming the object and the
 * problem.
 */
export function answerConversionReview(body: unknown): ConversionAnswer {
  try {
    const problem = conversionReviewProblem(body);
    if (problem !== undefined) return malformed(problem);
    const request = (body as JsonObject).request as JsonObject;
    const uid = request.uid as string;
    try {
      return convertAll(uid, request.desiredAPIVersion, request.objects);
    } catch (error) {
      // A bug, not the input's fault; still an answer the API server can read.
      return answer(uid, 'failed', [], `internal error: ${error instanceof Error ? error.message : String(error)}`);
    }
  } catch (error) {
    return malformed(`internal error: ${error instanceof Error ? error.message : String(error)}`);
  }
}
