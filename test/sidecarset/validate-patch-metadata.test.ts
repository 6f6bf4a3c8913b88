import { describe, expect, it } from '@jest/globals';
import { errorsFor, startingWith } from './validate-fixture.ts';
import { patchPodMetadataWarnings } from '../../lib/sidecarset/validate-patch-metadata.ts';

const entry = (annotations: unknown, patchPolicy: unknown = 'Retain'): unknown => ({ annotations, patchPolicy });

describe('rule 11: patchPodMetadata', () => {
  it.each<[string, unknown[], string[]]>([
    ['accepts different keys in different entries', [entry({ 'example.com/a': '1' }), entry({ 'example.com/b': '{}' }, 'MergePatchJson')], []],
    ['accepts upper-case annotation keys', [entry({ 'Example.com/Owner': 'team-a' }, 'Overwrite')], []],
    ['requires annotations', [entry(undefined)], ['spec.patchPodMetadata[0].annotations: Required value: no annotations defined for SidecarSet']],
    ['rejects empty annotations', [entry({})], ['spec.patchPodMetadata[0].annotations: Required value: no annotations defined for SidecarSet']],
    ['rejects a key that is not a qualified name', [entry({ 'bad key': 'x' })], ['spec.patchPodMetadata[0].annotations: Invalid value: "bad key": name part must consist of']],
    ['rejects a value that is not a string', [entry({ a: 5 })], ['spec.patchPodMetadata[0].annotations[a]: Invalid value: 5: must be a string']],
    [
      'rejects one key in two entries',
      [entry({ a: '1', b: '2' }), entry({ b: '3' }, 'Overwrite')],
      ['spec.patchPodMetadata[1].annotations[b]: Duplicate value: "b": patch annotation[b] already exist in spec.patchPodMetadata[0]'],
    ],
    ['requires a patchPolicy', [entry({ a: '1' }, '')], ['spec.patchPodMetadata[0].patchPolicy: Required value: no patchPolicy defined for patchPodMetadata']],
    ...[
      'kruise.io/sidecarset-hash',
      'kruise.io/sidecarset-hash-without-image',
      'kruise.io/sidecarset-injected-list',
    ].map((key): [string, unknown[], string[]] => [
      `refuses ${key}, which injection writes`,
      [entry({ [key]: '{}' }, 'Overwrite')],
      [`spec.patchPodMetadata[0].annotations[${key}]: Forbidden: ${key} is written by the injection itself`],
    ]),
    ...[
      'kruise.io/sidecarset-working-hotupgrade-container',
      'kruise.io/sidecarset-inplace-update-state',
      'version.sidecarset.kruise.io/agent-1',
      'versionalt.sidecarset.kruise.io/agent-2',
    ].map((key): [string, unknown[], string[]] => [
      `refuses ${key}, the rollout's own bookkeeping`,
      [entry({ 'example.com/ok': '1', [key]: '{}' }, 'Overwrite')],
      [`spec.patchPodMetadata[0].annotations[${key}]: Forbidden: ${key} is the rollout's own bookkeeping (a SidecarSet writing it would steer the rollout of the pods it selects)`],
    ]),
    ['accepts a key that only resembles a bookkeeping one', [entry({ 'example.com/sidecarset-inplace-update-state': '1', 'version.example.com/agent': '2' })], []],
    [
      'rejects an unknown patchPolicy',
      [entry({ a: '1' }, 'Replace')],
      ['spec.patchPodMetadata[0].patchPolicy: Unsupported value: "Replace": supported values: "Retain", "Overwrite", "MergePatchJson"'],
    ],
  ])('%s', (_name, patches, expected) => {
    expect(errorsFor({ 'spec.patchPodMetadata': patches })).toEqual(startingWith(expected));
  });
});

/** Annotations as a body parsed from JSON holds them: `__proto__` is then an own key, as in Go's map. */
const parsedAnnotations = (text: string): unknown => JSON.parse(text) as unknown;
const QUALIFIED = "name part must consist of alphanumeric characters, '-', '_' or '.'";
const TOO_LONG = 'Too long: may not be more than 262144 bytes';
/** One annotation whose key and value together are `bytes` long, as Kubernetes counts them (UTF-8 bytes). */
const sized = (key: string, bytes: number): Record<string, string> => ({ [key]: 'v'.repeat(bytes - Buffer.byteLength(key)) });

describe('rule 11: patchPodMetadata annotations are what a pod may carry (ValidateAnnotations)', () => {
  it.each<[string, unknown[], string[]]>([
    ['rejects a __proto__ key, which would otherwise vanish at injection', [entry(parsedAnnotations('{"__proto__":"x"}'))], [`spec.patchPodMetadata[0].annotations: Invalid value: "__proto__": ${QUALIFIED}`]],
    ['rejects __proto__ beside a valid key', [entry(parsedAnnotations('{"a":"1","__proto__":"x"}'), 'Overwrite')], [`spec.patchPodMetadata[0].annotations: Invalid value: "__proto__": ${QUALIFIED}`]],
    ['rejects a __proto__ key whose value is an object', [entry(parsedAnnotations('{"__proto__":{"b":"c"}}'))], ['spec.patchPodMetadata[0].annotations[__proto__]: Invalid value: {"b":"c"}: must be a string']],
    ['rejects constructor-like keys that are not qualified names', [entry({ 'a/': 'x', '/a': 'y' })], ['spec.patchPodMetadata[0].annotations: Invalid value: "a/": name part must be non-empty', 'spec.patchPodMetadata[0].annotations: Invalid value: "/a": prefix part must be non-empty']],
    ['rejects a key with two slashes', [entry({ 'a/b/c': 'x' })], ['spec.patchPodMetadata[0].annotations: Invalid value: "a/b/c": a qualified name must consist of']],
    ['rejects a name part over 63 characters', [entry({ [`example.com/${'n'.repeat(64)}`]: 'x' })], ['spec.patchPodMetadata[0].annotations: Invalid value: "example.com/nnnn']],
    ['accepts a name part of 63 characters', [entry({ [`example.com/${'n'.repeat(63)}`]: 'x' })], []],
    ['rejects a prefix over 253 characters', [entry({ [`${'p'.repeat(254)}/n`]: 'x' })], ['spec.patchPodMetadata[0].annotations: Invalid value: "pppp']],
    ['rejects a prefix that is not a DNS subdomain', [entry({ 'Example_com/n': 'x' })], ['spec.patchPodMetadata[0].annotations: Invalid value: "Example_com/n": prefix part a lowercase RFC 1123 subdomain']],
    ['accepts annotations of exactly 256 KiB', [entry(sized('example.com/big', 262144))], []],
    ['rejects annotations over 256 KiB', [entry(sized('example.com/big', 262145))], [`spec.patchPodMetadata[0].annotations: ${TOO_LONG}`]],
    ['counts bytes, not characters', [entry({ 'example.com/big': 'é'.repeat(131065) })], [`spec.patchPodMetadata[0].annotations: ${TOO_LONG}`]],
    [
      'rejects entries that together are over 256 KiB: every pod they inject would be refused',
      [entry(sized('example.com/a', 200_000)), entry(sized('example.com/b', 62_145), 'Overwrite')],
      [`spec.patchPodMetadata: ${TOO_LONG}: the annotations of all entries together are 262145 bytes`],
    ],
    ['accepts a JSON object for MergePatchJson', [entry({ 'example.com/j': '{"a":{"b":null}}' }, 'MergePatchJson')], []],
    ...(['not json', '[1,2]', '"text"', '5', 'null', ''] as const).map((value): [string, unknown[], string[]] => [
      `rejects ${JSON.stringify(value)} for MergePatchJson: a merge patch must be a JSON object`,
      [entry({ 'example.com/j': value }, 'MergePatchJson')],
      [`spec.patchPodMetadata[0].annotations[example.com/j]: Invalid value: ${JSON.stringify(value)}: must be a JSON object for patchPolicy MergePatchJson`],
    ]),
    ['accepts any text for Retain and Overwrite', [entry({ 'example.com/r': 'not json' }), entry({ 'example.com/o': '[1' }, 'Overwrite')], []],
  ])('%s', (_name, patches, expected) => {
    expect(errorsFor({ 'spec.patchPodMetadata': patches })).toEqual(startingWith(expected));
  });
});

describe('patchPodMetadataWarnings', () => {
  it('warns for each kubernetes.io or k8s.io key (subdomains too, any case), which the reconciler may not change in running pods', () => {
    const spec = { patchPodMetadata: [entry({ 'example.com/a': '1', 'Kubernetes.io/x': '1' }), entry({ 'k8s.io/y': '1', 'a.b.k8s.io/z': '1', 'notk8s.io/w': '1' })] };
    expect(patchPodMetadataWarnings(spec).map((w) => w.split(':')[0])).toEqual(['Kubernetes.io/x', 'k8s.io/y', 'a.b.k8s.io/z']);
  });

  it('says nothing for a set without patchPodMetadata or with malformed entries (the errors say those)', () => {
    expect(patchPodMetadataWarnings({})).toEqual([]);
    expect(patchPodMetadataWarnings({ patchPodMetadata: [null, { annotations: 'x' }] })).toEqual([]);
    expect(patchPodMetadataWarnings(undefined)).toEqual([]);
  });
});
