/**
 * SidecarSet conversion (lib/conversion/sidecarset-conversion.ts), case by
 * case: OpenKruise 1.9's mapping where it is its own inverse, the
 * converted-from annotation where it is not, and the errors. The fuzzer
 * (fuzz.test.ts) checks the round trips on everything else.
 */
import { describe, expect, it } from '@jest/globals';
import { CONVERTED_FROM_ANNOTATION } from '../../lib/conversion/parts.ts';
import { convertSidecarSet, type SidecarSetVersion } from '../../lib/conversion/sidecarset-conversion.ts';
import type { JsonObject } from '../../lib/kube/types.ts';

const CV = 'apps.kruise.io/sidecarset-custom-version';
const NS_LABEL = 'kubernetes.io/metadata.name';
const selector = { matchLabels: { app: 'web' } };
const containers = [{ name: 'agent', image: 'agent:1' }];
const status = { observedGeneration: 2, matchedPods: 3, updatedPods: 1, readyPods: 3, updatedReadyPods: 1, latestRevision: 'r-1', collisionCount: 1 };

const alpha = (metadata: JsonObject, spec: JsonObject, extra: JsonObject = {}): JsonObject => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'set', ...metadata },
  spec: { selector, containers, ...spec },
  ...extra,
});
const beta = (metadata: JsonObject, spec: JsonObject, extra: JsonObject = {}): JsonObject => ({ ...alpha(metadata, spec, extra), apiVersion: 'apps.kruise.io/v1beta1' });

function converted(object: JsonObject, to: SidecarSetVersion): JsonObject {
  const result = convertSidecarSet(object, to);
  if (!result.ok) throw new Error(result.error);
  return result.object;
}

/** Converts both ways and checks the way back gives the object exactly; the object converted. */
function there(object: JsonObject, to: SidecarSetVersion): JsonObject {
  const out = converted(object, to);
  const from = object.apiVersion === 'apps.kruise.io/v1alpha1' ? 'v1alpha1' : 'v1beta1';
  expect(converted(out, from)).toEqual(object);
  return out;
}

describe('v1alpha1 to v1beta1', () => {
  it('a namespaceSelector, labels, status and unknown fields are copied as they are; nothing is carried', () => {
    const a = alpha({ labels: { team: 'a' }, annotations: { note: 'x' } }, { namespaceSelector: { matchLabels: { env: 'prod' } }, futureField: { x: 1 } }, { status: { ...status, futureCount: 2 } });
    expect(there(a, 'v1beta1')).toEqual({ ...a, apiVersion: 'apps.kruise.io/v1beta1' });
  });

  it('namespace becomes a selector on kubernetes.io/metadata.name, and the annotation remembers it was a namespace', () => {
    const b = there(alpha({}, { namespace: 'shop' }), 'v1beta1');
    expect(b.spec).toEqual({ selector, containers, namespaceSelector: { matchLabels: { [NS_LABEL]: 'shop' } } });
    expect(b.metadata).toEqual({ name: 'set', annotations: { [CONVERTED_FROM_ANNOTATION]: '{"v1alpha1":{"annotations":null,"labels":null,"spec":{"namespace":"shop"}}}' } });
  });

  it('namespace wins over a namespaceSelector, as in Kruise; the annotation keeps both', () => {
    const b = there(alpha({ annotations: { note: 'x' } }, { namespace: 'shop', namespaceSelector: { matchLabels: { env: 'prod' } } }), 'v1beta1');
    expect((b.spec as JsonObject).namespaceSelector).toEqual({ matchLabels: { [NS_LABEL]: 'shop' } });
    expect(JSON.parse(((b.metadata as JsonObject).annotations as Record<string, string>)[CONVERTED_FROM_ANNOTATION] ?? '')).toEqual({
      v1alpha1: { labels: null, spec: { namespace: 'shop', namespaceSelector: { matchLabels: { env: 'prod' } } } },
    });
    expect(((b.metadata as JsonObject).annotations as JsonObject).note).toBe('x');
  });

  it('the custom-version label becomes spec.customVersion and leaves the labels; nothing is carried', () => {
    expect(there(alpha({ labels: { [CV]: 'v2', team: 'a' } }, {}), 'v1beta1')).toEqual(beta({ labels: { team: 'a' } }, { customVersion: 'v2' }));
    // A label map that held only that label is gone, as Go's omitempty drops it.
    expect(there(alpha({ labels: { [CV]: 'v2' } }, {}), 'v1beta1')).toEqual(beta({}, { customVersion: 'v2' }));
  });

  it('an empty custom-version label is dropped, as in Kruise, and carried', () => {
    const b = there(alpha({ labels: { [CV]: '' } }, {}), 'v1beta1');
    expect((b.spec as JsonObject).customVersion).toBeUndefined();
    expect((b.metadata as JsonObject).labels).toBeUndefined();
    expect(((b.metadata as JsonObject).annotations as JsonObject)[CONVERTED_FROM_ANNOTATION]).toBe(`{"v1alpha1":{"annotations":null,"labels":{"${CV}":""}}}`);
  });

  it('an annotation of the same name written by someone else is carried too', () => {
    const b = there(alpha({ annotations: { [CONVERTED_FROM_ANNOTATION]: 'mine' } }, {}), 'v1beta1');
    expect(((b.metadata as JsonObject).annotations as JsonObject)[CONVERTED_FROM_ANNOTATION]).toBe(`{"v1alpha1":{"annotations":{"${CONVERTED_FROM_ANNOTATION}":"mine"},"labels":null}}`);
  });
});

describe('v1beta1 to v1alpha1', () => {
  it('customVersion becomes the label; a selector stays a selector (even one on kubernetes.io/metadata.name); nothing is carried', () => {
    const b = beta({ labels: { team: 'a' } }, { customVersion: 'v3', namespaceSelector: { matchLabels: { [NS_LABEL]: 'shop' } } }, { status });
    expect(there(b, 'v1alpha1')).toEqual(alpha({ labels: { team: 'a', [CV]: 'v3' } }, { namespaceSelector: { matchLabels: { [NS_LABEL]: 'shop' } } }, { status }));
  });

  it('gives back the namespace a v1alpha1 writer wrote, and drops the annotation', () => {
    const a = alpha({ labels: { team: 'a' } }, { namespace: 'shop' });
    expect(converted(converted(a, 'v1beta1'), 'v1alpha1')).toEqual(a);
  });

  it('a selector edited in v1beta1 since is what v1alpha1 shows; the stale annotation is kept, not applied', () => {
    const stored = converted(alpha({}, { namespace: 'shop' }), 'v1beta1');
    const edited = { ...stored, spec: { ...(stored.spec as JsonObject), namespaceSelector: { matchLabels: { env: 'prod' } } } };
    const a = there(edited, 'v1alpha1');
    expect(a.spec).toEqual({ selector, containers, namespaceSelector: { matchLabels: { env: 'prod' } } });
    const carried = JSON.parse(((a.metadata as JsonObject).annotations as Record<string, string>)[CONVERTED_FROM_ANNOTATION] ?? '') as JsonObject;
    expect(Object.keys(carried)).toEqual(['v1beta1']);
  });

  it('the custom-version label written on a v1beta1 object, beside customVersion, is carried (customVersion wins in v1alpha1, as in Kruise)', () => {
    const a = there(beta({ labels: { [CV]: 'old' } }, { customVersion: 'new' }), 'v1alpha1');
    expect(((a.metadata as JsonObject).labels as JsonObject)[CV]).toBe('new');
    expect(((a.metadata as JsonObject).annotations as JsonObject)[CONVERTED_FROM_ANNOTATION]).toBeDefined();
  });

  it('a namespace field on a v1beta1 object (not in its schema) is carried, not turned into a v1alpha1 namespace', () => {
    const a = there(beta({}, { namespace: 'shop' }), 'v1alpha1');
    expect((a.spec as JsonObject).namespace).toBeUndefined();
  });
});

describe('what is not converted', () => {
  it('an object already in the desired version is returned as it is', () => {
    const a = alpha({}, { namespace: 'shop' });
    expect(convertSidecarSet(a, 'v1alpha1')).toEqual({ ok: true, object: a });
  });

  it('does not change the object it converts', () => {
    const a = alpha({ labels: { [CV]: 'v1' } }, { namespace: 'shop' });
    const copy = structuredClone(a);
    converted(a, 'v1beta1');
    expect(a).toEqual(copy);
  });

  it.each([
    ['the object is not a JSON object', 7],
    ['kind is "CloneSet", expected "SidecarSet"', { ...alpha({}, {}), kind: 'CloneSet' }],
    ['apiVersion is "apps.kruise.io/v1", expected "apps.kruise.io/v1alpha1" or "apps.kruise.io/v1beta1"', { ...alpha({}, {}), apiVersion: 'apps.kruise.io/v1' }],
    ['apiVersion is missing', { ...alpha({}, {}), apiVersion: undefined }],
    ['metadata must be an object', { ...alpha({}, {}), metadata: undefined }],
    ['spec must be an object', { ...alpha({}, {}), spec: null }],
    ['metadata.labels must be an object', alpha({ labels: 'x' }, {})],
    ['metadata.annotations must be an object', alpha({ annotations: [] }, {})],
  ])('refuses an object when %s', (error, object) => {
    expect(convertSidecarSet(object, 'v1beta1')).toEqual({ ok: false, error: expect.stringContaining(error) });
  });

  it('a __proto__ key stays a key', () => {
    const a = JSON.parse('{"apiVersion":"apps.kruise.io/v1alpha1","kind":"SidecarSet","metadata":{"name":"p","labels":{"__proto__":"x"}},"spec":{"namespace":"shop","__proto__":{"a":1}}}') as JsonObject;
    const b = there(a, 'v1beta1');
    expect(Object.keys(b.spec as JsonObject)).toContain('__proto__');
    expect(Object.keys((b.metadata as JsonObject).labels as JsonObject)).toEqual(['__proto__']);
  });
});
