/**
 * The ConversionReview answer (lib/conversion/review.ts): the golden reviews
 * under reviews/ give their recorded responses (UPDATE_GOLDEN=1 rewrites
 * `<name>.response.json`), and every converted object converts back to the
 * object sent; hostile bodies get a clear answer, in bounded time, and never
 * a throw.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  answerConversionReview,
  CONVERSION_REVIEW_API_VERSION,
  MAX_CONVERSION_OBJECT_BYTES,
  MAX_CONVERSION_OBJECTS,
} from '../../lib/conversion/review.ts';
import { convertSidecarSet, MAX_CONVERSION_DEPTH, sidecarSetVersionOf } from '../../lib/conversion/sidecarset-conversion.ts';
import { parseSingleObject } from '../../lib/kube/yaml-objects.ts';
import type { JsonObject } from '../../lib/kube/types.ts';

const here = dirname(fileURLToPath(import.meta.url));
const reviews = join(here, 'reviews');
const update = process.env.UPDATE_GOLDEN === '1';

const review = (request: unknown): JsonObject => ({ apiVersion: CONVERSION_REVIEW_API_VERSION, kind: 'ConversionReview', request });
const set = (name: string, extra: JsonObject = {}): JsonObject => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name },
  spec: { selector: { matchLabels: { app: 'web' } }, namespace: 'shop' },
  ...extra,
});
const request = (objects: unknown, desiredAPIVersion: unknown = 'apps.kruise.io/v1beta1'): JsonObject => review({ uid: 'u-1', desiredAPIVersion, objects });
const resultOf = (body: unknown) => (answerConversionReview(body).review.response as { result: { status: string; message?: string } }).result;

describe('golden ConversionReviews', () => {
  const files = readdirSync(reviews).filter((f) => f.endsWith('.yaml')).sort();

  it('has the cases the docs describe', () => {
    expect(files).toEqual(['empty.yaml', 'failure-bad-object.yaml', 'failure-desired-version.yaml', 'mixed-versions.yaml', 'to-v1alpha1.yaml', 'to-v1beta1.yaml']);
  });

  it.each(files)('%s gives its recorded response', (file) => {
    const body = parseSingleObject(readFileSync(join(reviews, file), 'utf8'), file);
    const answer = answerConversionReview(body);
    const responseFile = join(reviews, file.replace(/\.yaml$/, '.response.json'));
    const text = `${JSON.stringify(answer.review, null, 2)}\n`;
    if (update || !existsSync(responseFile)) writeFileSync(responseFile, text);
    expect(text).toBe(readFileSync(responseFile, 'utf8'));
    expect((answer.review.response as { uid: string }).uid).toBe((body.request as { uid: string }).uid);
  });

  it.each(files)('%s: every converted object converts back to the object sent', (file) => {
    const body = parseSingleObject(readFileSync(join(reviews, file), 'utf8'), file);
    const answer = answerConversionReview(body);
    if (answer.outcome !== 'converted') return;
    const sent = (body.request as { objects: JsonObject[] }).objects;
    const converted = (answer.review.response as { convertedObjects: JsonObject[] }).convertedObjects;
    converted.forEach((object, i) => {
      const version = sidecarSetVersionOf(sent[i]?.apiVersion);
      expect(version).toBeDefined();
      expect(convertSidecarSet(object, version ?? 'v1alpha1')).toEqual({ ok: true, object: sent[i] });
    });
  });
});

describe('hostile ConversionReviews', () => {
  it.each([
    ['a string', 'hello', 'malformed ConversionReview: the body is not a JSON object'],
    ['an array', [], 'malformed ConversionReview: the body is not a JSON object'],
    ['the wrong apiVersion', { ...request([]), apiVersion: 'apiextensions.k8s.io/v1beta1' }, 'apiVersion is "apiextensions.k8s.io/v1beta1", expected "apiextensions.k8s.io/v1"'],
    ['the wrong kind', { ...request([]), kind: 'AdmissionReview' }, 'kind is "AdmissionReview", expected "ConversionReview"'],
    ['no request', { apiVersion: CONVERSION_REVIEW_API_VERSION, kind: 'ConversionReview' }, 'request is missing or not an object'],
    ['no uid', review({ desiredAPIVersion: 'apps.kruise.io/v1beta1', objects: [] }), 'request.uid is missing or not a non-empty string'],
    ['a numeric uid', review({ uid: 5, desiredAPIVersion: 'apps.kruise.io/v1beta1', objects: [] }), 'request.uid is missing'],
  ])('%s is malformed (no uid to answer)', (_what, body, message) => {
    const answer = answerConversionReview(body);
    expect(answer.outcome).toBe('malformed');
    expect(answer.message).toContain(message);
    expect(answer.review).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: { uid: '', convertedObjects: [], result: { status: 'Failure', message: answer.message } },
    });
  });

  it.each([
    ['objects not an array', request({ a: 1 }), 'request.objects must be an array'],
    ['objects missing', review({ uid: 'u-1', desiredAPIVersion: 'apps.kruise.io/v1beta1' }), 'request.objects must be an array'],
    ['a desired version of another group', request([], 'apps/v1'), 'request.desiredAPIVersion is "apps/v1", expected "apps.kruise.io/v1alpha1" or "apps.kruise.io/v1beta1"'],
    ['an object of another kind', request([set('a'), { ...set('b'), kind: 'CloneSet' }]), 'objects[1] (name "b"): cannot convert to apps.kruise.io/v1beta1: kind is "CloneSet", expected "SidecarSet"'],
    ['an object of another version', request([{ ...set('a'), apiVersion: 'apps.kruise.io/v1' }]), 'objects[0] (name "a"): cannot convert to apps.kruise.io/v1beta1: apiVersion is "apps.kruise.io/v1"'],
    ['an object that is not an object', request([set('a'), 7]), 'objects[1]: cannot convert to apps.kruise.io/v1beta1: the object is not a JSON object'],
    ['metadata that is not an object', request([{ ...set('a'), metadata: 'x' }]), 'objects[0]: cannot convert to apps.kruise.io/v1beta1: metadata must be an object'],
    ['labels that are not an object', request([{ ...set('a'), metadata: { name: 'a', labels: ['x'] } }]), 'objects[0] (name "a"): cannot convert to apps.kruise.io/v1beta1: metadata.labels must be an object'],
    ['annotations that are null', request([{ ...set('a'), metadata: { name: 'a', annotations: null } }]), 'metadata.annotations must be an object'],
    ['a spec that is a string', request([{ ...set('a'), spec: 'x' }]), 'objects[0] (name "a"): cannot convert to apps.kruise.io/v1beta1: spec must be an object'],
    ['a very long name', request([{ ...set('a'), kind: 'X', metadata: { name: 'n'.repeat(10_000) } }]), `objects[0] (name "${'n'.repeat(79)}...)`],
  ])('%s fails the review, naming the object and the problem', (_what, body, message) => {
    const answer = answerConversionReview(body);
    expect(answer.outcome).toBe('failed');
    expect(answer.message).toContain(message);
    expect(answer.message?.length).toBeLessThan(400);
    expect(answer.review.response).toEqual({ uid: 'u-1', convertedObjects: [], result: { status: 'Failure', message: answer.message } });
  });

  it(`refuses more than ${MAX_CONVERSION_OBJECTS} objects, and converts ${MAX_CONVERSION_OBJECTS} in linear time`, () => {
    const objects = Array.from({ length: MAX_CONVERSION_OBJECTS }, (_, i) => set(`s-${i}`));
    const started = performance.now();
    const answer = answerConversionReview(request(objects));
    const ms = performance.now() - started;
    expect(answer.outcome).toBe('converted');
    expect(answer.converted).toBe(MAX_CONVERSION_OBJECTS);
    // About 0.1 s here; generous for a loaded machine.
    expect(ms).toBeLessThan(5_000);
    expect(resultOf(request([...objects, set('one-more')]))).toEqual({
      status: 'Failure',
      message: `request.objects holds ${MAX_CONVERSION_OBJECTS + 1} objects, more than ${MAX_CONVERSION_OBJECTS}`,
    });
  });

  it(`refuses an object over ${MAX_CONVERSION_OBJECT_BYTES} bytes, naming it`, () => {
    const big = set('big', { status: { note: 'x'.repeat(MAX_CONVERSION_OBJECT_BYTES) } });
    expect(resultOf(request([set('a'), big])).message).toMatch(/^objects\[1\] \(name "big"\): \d+ bytes, more than 3145728$/);
  });

  it('converts an object just under the size limit with a huge value where the versions differ, in bounded time', () => {
    const huge = 'n'.repeat(MAX_CONVERSION_OBJECT_BYTES / 4);
    const started = performance.now();
    const answer = answerConversionReview(request([set('huge', { spec: { namespace: huge, namespaceSelector: { matchLabels: { x: huge } } } })]));
    expect(answer.outcome).toBe('converted');
    const back = convertSidecarSet((answer.review.response as { convertedObjects: JsonObject[] }).convertedObjects[0], 'v1alpha1');
    expect(back.ok && (back.object.spec as JsonObject).namespace === huge).toBe(true);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it(`refuses an object nesting deeper than ${MAX_CONVERSION_DEPTH} levels, however deep, naming it`, () => {
    let deep: unknown = 'x';
    // The set and its status are two levels: this is one level too deep.
    for (let i = 0; i < MAX_CONVERSION_DEPTH - 1; i++) deep = [deep];
    expect(resultOf(request([set('deep', { status: { deep } })])).message).toBe(`objects[0] (name "deep"): the object nests deeper than ${MAX_CONVERSION_DEPTH} levels`);
    const fits = (deep as unknown[])[0];
    expect(answerConversionReview(request([set('deep', { status: { deep: fits } })])).outcome).toBe('converted');
    let deeper: unknown = 'x';
    for (let i = 0; i < 200_000; i++) deeper = [deeper];
    expect(resultOf(request([set('a'), deeper])).message).toBe(`objects[1]: the object nests deeper than ${MAX_CONVERSION_DEPTH} levels`);
  });

  it('answers a getter that throws (not JSON, but never a throw either)', () => {
    const body = review({ uid: 'u-1', desiredAPIVersion: 'apps.kruise.io/v1beta1', objects: [set('a')] });
    Object.defineProperty(body.request, 'objects', {
      get() {
        throw new Error('boom');
      },
    });
    expect(answerConversionReview(body)).toMatchObject({ outcome: 'failed', message: 'internal error: boom' });
  });
});
