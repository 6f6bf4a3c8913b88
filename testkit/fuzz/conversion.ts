/**
 * Fuzz properties of the SidecarSet conversion (lib/conversion/): the round
 * trips v1alpha1 → v1beta1 → v1alpha1 and v1beta1 → v1alpha1 → v1beta1 give
 * back exactly the object converted, whatever it holds where the versions
 * differ (namespace, namespaceSelector, customVersion, the custom-version
 * label, the converted-from annotation, each map absent, empty or full);
 * the visible fields follow OpenKruise 1.9's mapping; and the
 * ConversionReview answer never throws, on any body. Shared by the seeded
 * test (test/conversion/fuzz.test.ts) and `npm run fuzz`.
 */
import fc from 'fast-check';
import { CONVERTED_FROM_ANNOTATION } from '../../lib/conversion/parts.ts';
import { answerConversionReview } from '../../lib/conversion/review.ts';
import { convertCarrying, convertSidecarSet, NAMESPACE_NAME_LABEL, type SidecarSetVersion } from '../../lib/conversion/sidecarset-conversion.ts';
import { isObject, jsonEqual } from '../../lib/kube/json.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { LABEL_CUSTOM_VERSION } from '../../lib/sidecarset/revisions.ts';
import { mutate, mutationArb } from './arbitraries.ts';
import { ContractViolation } from './oracle.ts';

const ABSENT = Symbol('absent');
type Maybe<T> = T | typeof ABSENT;

/** Values for a slot: the usual, the edge cases (empty, wrong types) and the selector a namespace maps to. */
const slotValue: fc.Arbitrary<Maybe<unknown>> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(ABSENT) },
  { weight: 3, arbitrary: fc.constantFrom('shop', 'v1', 'team-a') },
  { weight: 1, arbitrary: fc.constantFrom('', null, 7, true, [], {}) },
  { weight: 2, arbitrary: fc.constantFrom({ matchLabels: { [NAMESPACE_NAME_LABEL]: 'shop' } }, { matchLabels: { env: 'prod' } }, { matchExpressions: [{ key: 'env', operator: 'Exists' }] }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

/** Other keys of a map: none (so the map holds only the part, or nothing), or some. */
const others = (keys: string[]): fc.Arbitrary<Record<string, unknown>> =>
  fc.oneof(fc.constant({}), fc.dictionary(fc.constantFrom(...keys), fc.oneof(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })), { minKeys: 1, maxKeys: 3 }));

/** A map: absent, or its other keys with the slots that are present. */
function container(keys: string[], slots: Record<string, fc.Arbitrary<Maybe<unknown>>>): fc.Arbitrary<Maybe<Record<string, unknown>>> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(ABSENT) },
    {
      weight: 5,
      arbitrary: fc.tuple(others(keys), fc.record(slots)).map(([rest, chosen]) => {
        const out: Record<string, unknown> = { ...rest };
        for (const [k, v] of Object.entries(chosen)) if (v !== ABSENT) out[k] = v;
        return out;
      }),
    },
  );
}

/** An annotation value for the converted-from slot; `carried` adds the real annotations of converted objects. */
function annotationValue(carried: fc.Arbitrary<string>): fc.Arbitrary<Maybe<unknown>> {
  return fc.oneof(
    { weight: 5, arbitrary: fc.constant(ABSENT) },
    { weight: 1, arbitrary: fc.constantFrom('x', '', '{"v1alpha1":{}}', '{"v1beta1":{"spec":{"namespace":"shop"}}}', '{"v1alpha1":{"spec":null}}', '{"v1beta1":{"nope":{}}}') },
    { weight: 3, arbitrary: carried },
  );
}

/** A SidecarSet of `version` that may hold anything where the versions differ; plus a little of everything else. */
function sidecarSetArb(version: SidecarSetVersion, carried: fc.Arbitrary<string>): fc.Arbitrary<JsonObject> {
  return fc
    .record({
      spec: container(['selector', 'containers', 'updateStrategy', 'x-unknown'], { namespace: slotValue, namespaceSelector: slotValue, customVersion: slotValue }),
      labels: container(['app', 'team'], { [LABEL_CUSTOM_VERSION]: slotValue }),
      annotations: container(['example.com/a', 'kubectl.kubernetes.io/last-applied-configuration'], { [CONVERTED_FROM_ANNOTATION]: annotationValue(carried) }),
      status: fc.option(fc.record({ matchedPods: fc.nat(5), latestRevision: fc.constantFrom('r-1', ''), unknownField: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: [] }), {
        nil: undefined,
      }),
      extra: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
    })
    .map(({ spec, labels, annotations, status, extra }) => ({
      apiVersion: `apps.kruise.io/${version}`,
      kind: 'SidecarSet',
      metadata: {
        name: 'set',
        uid: 'u-1',
        ...(labels === ABSENT ? {} : { labels }),
        ...(annotations === ABSENT ? {} : { annotations }),
      },
      ...(spec === ABSENT ? {} : { spec }),
      ...(status === undefined ? {} : { status }),
      ...(extra === undefined ? {} : { extraTopLevel: extra }),
    }));
}

const objectAt = (value: unknown): JsonObject => (isObject(value) ? value : {});

const to = (version: SidecarSetVersion): SidecarSetVersion => (version === 'v1alpha1' ? 'v1beta1' : 'v1alpha1');

/** The converted-from annotations real conversions write, of objects that may carry one themselves (two levels). */
function carriedAnnotations(): fc.Arbitrary<string> {
  const none = fc.constant('x');
  const level = (inner: fc.Arbitrary<string>): fc.Arbitrary<string> =>
    fc
      .tuple(fc.constantFrom<SidecarSetVersion>('v1alpha1', 'v1beta1'), fc.constant(null))
      .chain(([version]) => sidecarSetArb(version, inner).map((object) => ({ object, version })))
      .map(({ object, version }) => {
        const result = convertSidecarSet(object, to(version));
        const annotations = result.ok && isObject(result.object.metadata) ? result.object.metadata.annotations : undefined;
        const text = isObject(annotations) ? annotations[CONVERTED_FROM_ANNOTATION] : undefined;
        return typeof text === 'string' ? text : 'x';
      });
  return level(level(none));
}

/** Keys added to the maps of a forged object, so that its rest differs from the rest its annotation was made on. */
const extrasArb = fc.record(
  { spec: fc.constant({ selector: {} }), labels: fc.constant({ app: 'web' }), annotations: fc.constant({ 'example.com/a': 'b' }), respell: fc.constant(true) },
  { requiredKeys: [] },
);

/** The same annotation in other words: its containers in reverse order, or with an explicit `"spec":{}`. */
function respelled(text: string): string {
  const parsed = JSON.parse(text) as Record<string, Record<string, unknown>>;
  const [version] = Object.keys(parsed);
  const body = parsed[version ?? ''] ?? {};
  const keys = Object.keys(body);
  const reordered: Record<string, unknown> = keys.length > 1 ? {} : { ...body, ...(Object.hasOwn(body, 'spec') ? { labels: {} } : { spec: {} }) };
  if (keys.length > 1) for (const key of keys.reverse()) reordered[key] = body[key];
  return JSON.stringify({ [version ?? '']: reordered });
}

/**
 * An object of `version` whose annotation carries the part of a random
 * object of the other version, whatever its class (convertCarrying), on
 * that object's rest or, sometimes, with more keys in its maps.
 */
function forgedArb(version: SidecarSetVersion): fc.Arbitrary<JsonObject> {
  return fc.tuple(sidecarSetArb(to(version), fc.constant('x')), extrasArb).map(([source, extras]) => {
    const result = convertCarrying(source, version);
    if (!result.ok) return source;
    const object = result.object;
    const metadata = object.metadata as JsonObject;
    if (extras.spec !== undefined) object.spec = { ...objectAt(object.spec), ...extras.spec };
    if (extras.labels !== undefined) metadata.labels = { ...objectAt(metadata.labels), ...extras.labels };
    if (extras.annotations !== undefined) metadata.annotations = { ...objectAt(metadata.annotations), ...extras.annotations };
    const annotations = objectAt(metadata.annotations);
    const text = annotations[CONVERTED_FROM_ANNOTATION];
    if (extras.respell === true && typeof text === 'string') metadata.annotations = { ...annotations, [CONVERTED_FROM_ANNOTATION]: respelled(text) };
    return object;
  });
}

/** SidecarSets of `version` for the round trip: any, and forged ones. */
export function conversionInputArb(version: SidecarSetVersion): fc.Arbitrary<JsonObject> {
  return fc.oneof({ weight: 3, arbitrary: sidecarSetArb(version, carriedAnnotations()) }, { weight: 1, arbitrary: forgedArb(version) });
}

function fail(message: string, input: unknown, output?: unknown): never {
  throw new ContractViolation(`${message}\n  input: ${JSON.stringify(input).slice(0, 1500)}${output === undefined ? '' : `\n  output: ${JSON.stringify(output).slice(0, 1500)}`}`);
}

/**
 * Kruise 1.9's mapping on the fields a reader sees, for an input without a
 * converted-from annotation (one with it may be a carried part of the other
 * version, restored exactly instead).
 */
function checkKruiseMapping(from: SidecarSetVersion, input: JsonObject, output: JsonObject): void {
  const inSpec = objectAt(input.spec);
  const outSpec = objectAt(output.spec);
  const inLabels = objectAt(objectAt(input.metadata).labels);
  const outLabels = objectAt(objectAt(output.metadata).labels);
  if (from === 'v1alpha1') {
    if (Object.hasOwn(outSpec, 'namespace')) fail('v1beta1 has a namespace', input, output);
    if (Object.hasOwn(outLabels, LABEL_CUSTOM_VERSION)) fail('v1beta1 has the custom-version label', input, output);
    const namespace = inSpec.namespace;
    const expected = typeof namespace === 'string' && namespace !== '' ? { matchLabels: { [NAMESPACE_NAME_LABEL]: namespace } } : inSpec.namespaceSelector;
    if (!jsonEqual(outSpec.namespaceSelector, expected)) fail("namespaceSelector is not Kruise's", input, output);
    const cv = inLabels[LABEL_CUSTOM_VERSION];
    if (!jsonEqual(outSpec.customVersion, typeof cv === 'string' && cv !== '' ? cv : undefined)) fail('customVersion is not the label', input, output);
  } else {
    if (Object.hasOwn(outSpec, 'customVersion')) fail('v1alpha1 has a customVersion', input, output);
    if (Object.hasOwn(outSpec, 'namespace')) fail('v1alpha1 has a namespace v1beta1 did not', input, output);
    if (!jsonEqual(outSpec.namespaceSelector, inSpec.namespaceSelector)) fail('namespaceSelector not copied', input, output);
    const customVersion = inSpec.customVersion;
    const expected = typeof customVersion === 'string' && customVersion !== '' ? customVersion : inLabels[LABEL_CUSTOM_VERSION];
    if (!jsonEqual(outLabels[LABEL_CUSTOM_VERSION], expected)) fail('the custom-version label is not customVersion', input, output);
  }
}

/** Both ways round from `version`; the round trip must be exact. */
export function roundTrip(version: SidecarSetVersion, input: JsonObject): void {
  const there = convertSidecarSet(input, to(version));
  if (!there.ok) fail(`convert to ${to(version)} failed: ${there.error}`, input);
  const outbound = there.object;
  if (outbound.apiVersion !== `apps.kruise.io/${to(version)}`) fail('apiVersion not set', input, outbound);
  if (!Object.hasOwn(objectAt(objectAt(input.metadata).annotations), CONVERTED_FROM_ANNOTATION)) checkKruiseMapping(version, input, outbound);
  const back = convertSidecarSet(outbound, version);
  if (!back.ok) fail(`convert back to ${version} failed: ${back.error}`, input, outbound);
  if (!jsonEqual(back.object, input)) fail(`${version} → ${to(version)} → ${version} changed the object`, input, back.object);
}

/** Any body at all: the answer never throws, and it always is a ConversionReview response. */
export function checkReviewAnswer(body: unknown): void {
  const answer = answerConversionReview(body);
  const response = answer.review.response;
  if (answer.review.apiVersion !== 'apiextensions.k8s.io/v1' || answer.review.kind !== 'ConversionReview' || !isObject(response)) fail('not a ConversionReview', body, answer);
  const result = response.result as JsonObject;
  if (answer.outcome === 'converted') {
    if (result.status !== 'Success' || !Array.isArray(response.convertedObjects)) fail('converted without Success', body, answer);
    const objects = (body as { request: { objects: unknown[] } }).request.objects;
    if ((response.convertedObjects as unknown[]).length !== objects.length) fail('not every object converted', body, answer);
  } else if (result.status !== 'Failure' || typeof result.message !== 'string' || result.message === '') fail('a failure without a message', body, answer);
}

const reviewOf = (objects: unknown[], desired: SidecarSetVersion): JsonObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  request: { uid: 'c0ffee', desiredAPIVersion: `apps.kruise.io/${desired}`, objects },
});

/** ConversionReviews of real-looking objects, damaged anywhere by the admission fuzzer's mutations. */
const hostileReviewArb: fc.Arbitrary<unknown> = fc
  .tuple(
    fc.constantFrom<SidecarSetVersion>('v1alpha1', 'v1beta1'),
    fc.array(fc.constantFrom<SidecarSetVersion>('v1alpha1', 'v1beta1'), { minLength: 0, maxLength: 4 }),
  )
  .chain(([desired, versions]) =>
    fc.tuple(fc.constant(desired), versions.length === 0 ? fc.constant([] as JsonObject[]) : fc.tuple(...versions.map((v) => conversionInputArb(v)))),
  )
  .chain(([desired, objects]) => fc.tuple(fc.constant(reviewOf(objects, desired)), fc.array(mutationArb, { maxLength: 4 })))
  .map(([review, mutations]) => mutate(review, mutations));

export interface ConversionFuzzProperty {
  name: string;
  description: string;
  quickRuns: number;
  property: fc.IAsyncProperty<[unknown]>;
}

/** The conversion properties; `npm run fuzz` runs them beside the admission ones. */
export function conversionProperties(): ConversionFuzzProperty[] {
  const roundTripProperty = (version: SidecarSetVersion) =>
    fc.asyncProperty(conversionInputArb(version), (input) => {
      roundTrip(version, input);
      return Promise.resolve();
    });
  return [
    { name: 'conversion-alpha-round-trip', description: 'v1alpha1 → v1beta1 → v1alpha1 gives back what was written; v1beta1 shows Kruise\'s mapping', quickRuns: 300, property: roundTripProperty('v1alpha1') },
    { name: 'conversion-beta-round-trip', description: 'v1beta1 → v1alpha1 → v1beta1 gives back what was written', quickRuns: 300, property: roundTripProperty('v1beta1') },
    {
      name: 'conversion-reviews',
      description: 'ConversionReviews of up to four SidecarSets, damaged anywhere, answered with a ConversionReview, never a throw',
      quickRuns: 150,
      property: fc.asyncProperty(hostileReviewArb, (body) => {
        checkReviewAnswer(body);
        return Promise.resolve();
      }),
    },
  ];
}
