import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { formatFieldErrors } from '../../lib/kube/field-errors.ts';
import { validateSidecarSet } from '../../lib/sidecarset/validate.ts';
import { context, errorPaths, errorsFor, tweak, validSidecarSet } from './validate-fixture.ts';

describe('validateSidecarSet as a whole', () => {
  it('admits a valid, fully defaulted SidecarSet', () => {
    expect(validateSidecarSet(validSidecarSet(), context())).toEqual([]);
  });

  it('collects every problem rather than stopping at the first', () => {
    expect(
      errorsFor({
        'spec.containers.0.image': '',
        'spec.volumes.0.name': 'Bad_Name',
        'spec.updateStrategy.maxUnavailable': -1,
      }),
    ).toEqual([
      expect.stringMatching(/^spec\.volumes\[0\]\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 label/),
      'spec.containers[0].image: Required value',
      // The mount that named the renamed volume now names nothing.
      'spec.containers[0].volumeMounts[0].name: Not found: "logging-logs"',
      'spec.updateStrategy.maxUnavailable: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });

  it('gives three errors for three independent problems', () => {
    expect(
      errorPaths({
        'spec.containers.0.image': '',
        'spec.containers.1.podInjectPolicy': 'Sideways',
        'spec.injectionStrategy.revision.policy': 'Never',
      }),
    ).toEqual(['spec.containers[1].podInjectPolicy', 'spec.containers[0].image', 'spec.injectionStrategy.revision.policy']);
  });

  it('reads as Kubernetes field errors do when aggregated', () => {
    expect(formatFieldErrors(validateSidecarSet(tweak(validSidecarSet(), { 'spec.containers.0.image': '' }), context()))).toBe(
      'spec.containers[0].image: Required value',
    );
  });

  it.each<[string, unknown, string[]]>([
    ['a string', 'SidecarSet', ['']],
    ['null', null, ['']],
    ['a list', [], ['']],
    ['a spec that is a string', { metadata: { name: 'a' }, spec: 'x' }, ['spec']],
    ['no spec', { metadata: { name: 'a' } }, ['spec']],
    ['containers that are an object', tweak(validSidecarSet(), { 'spec.containers': { name: 'x' } }), ['spec.containers']],
    ['a container that is a number', tweak(validSidecarSet(), { 'spec.containers.1': 7 }), ['spec.containers[1]']],
    ['ports that are a string', tweak(validSidecarSet(), { 'spec.containers.0.ports': '80' }), ['spec.containers[0].ports']],
    ['a name that is a number', tweak(validSidecarSet(), { 'metadata.name': 5 }), ['metadata.name']],
  ])('reports %s as a field error instead of throwing', (_name, object, paths) => {
    expect(validateSidecarSet(object, context()).map((e) => e.path)).toEqual(paths);
  });

  it('never throws, whatever JSON it is given', () => {
    const base = validSidecarSet();
    const keys = ['spec.containers.0', 'spec.containers.0.ports.0', 'spec.volumes', 'spec.updateStrategy', 'spec.patchPodMetadata.0', 'spec.selector', 'metadata'];
    fc.assert(
      fc.property(fc.constantFrom(...keys), fc.jsonValue(), (key, value) => {
        expect(Array.isArray(validateSidecarSet(tweak(base, { [key]: value }), context({ others: [base, validSidecarSet('other')] })))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('rule 1: metadata.name', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['accepts letters, digits and dashes, upper case included', { 'metadata.name': 'Log-Agent-2' }, []],
    ['accepts 63 characters', { 'metadata.name': 'a'.repeat(63) }, []],
    ['requires a name', { 'metadata.name': undefined }, ['metadata.name: Required value: name or generateName is required']],
    [
      'rejects other characters',
      { 'metadata.name': 'log.agent' },
      [
        "metadata.name: Invalid value: \"log.agent\": sidecarset name must consist of alphanumeric characters or '-' (e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')",
      ],
    ],
    ['rejects 64 characters', { 'metadata.name': 'a'.repeat(64) }, [`metadata.name: Invalid value: "${'a'.repeat(64)}": must be no more than 63 characters`]],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });
});

describe('rule 2: spec.selector', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['accepts matchExpressions alone', { 'spec.selector': { matchExpressions: [{ key: 'app', operator: 'Exists' }] } }, []],
    ['treats null matchLabels as unset', { 'spec.selector': { matchLabels: null, matchExpressions: [{ key: 'app', operator: 'Exists' }] } }, []],
    ['requires a selector', { 'spec.selector': undefined }, ['spec.selector: Required value: no selector defined for SidecarSet']],
    ['rejects an empty selector', { 'spec.selector': {} }, ['spec.selector: Invalid value: {}: empty selector is not valid for sidecarset.']],
    [
      'rejects In without values',
      { 'spec.selector': { matchExpressions: [{ key: 'app', operator: 'In' }] } },
      ["spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
    ],
    [
      'rejects Exists with values',
      { 'spec.selector': { matchExpressions: [{ key: 'app', operator: 'Exists', values: ['web'] }] } },
      ["spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"],
    ],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });

  it('rejects a label key that is not a qualified name', () => {
    expect(errorPaths({ 'spec.selector.matchLabels': { 'bad key': 'web' } })).toEqual(['spec.selector.matchLabels']);
  });
});

describe('rule 3: spec.namespace and spec.namespaceSelector', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['accepts a namespace alone', { 'spec.namespace': 'team-a' }, []],
    ['accepts a namespaceSelector alone', { 'spec.namespaceSelector': { matchLabels: { team: 'a' } } }, []],
    ['accepts both together, as Kruise 1.9 does (1.8 refused them): the namespace wins', { 'spec.namespace': 'team-a', 'spec.namespaceSelector': { matchLabels: { team: 'a' } } }, []],
    [
      'still checks the namespaceSelector beside a namespace',
      { 'spec.namespace': 'team-a', 'spec.namespaceSelector': { matchExpressions: [{ key: 'team', operator: 'In' }] } },
      ["spec.namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
    ],
    ['rejects an empty namespaceSelector', { 'spec.namespaceSelector': {} }, ['spec.namespaceSelector: Invalid value: {}: empty selector is not valid for sidecarset.']],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });

  it('checks namespaceSelector syntax as rule 2 does', () => {
    expect(errorPaths({ 'spec.namespaceSelector': { matchExpressions: [{ key: 'team', operator: 'Near' }] } })).toEqual([
      'spec.namespaceSelector.matchExpressions[0].operator',
    ]);
  });

  it('rejects a namespace no Namespace can have', () => {
    expect(errorPaths({ 'spec.namespace': 'Team_A' })).toEqual(['spec.namespace']);
  });
});

describe('rule 4: at least one sidecar', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['accepts only init containers', { 'spec.containers': [] }, []],
    ['accepts only containers', { 'spec.initContainers': undefined }, []],
    [
      'rejects neither',
      { 'spec.containers': [], 'spec.initContainers': [] },
      ['spec.containers: Required value: no initContainer or container defined for SidecarSet'],
    ],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });
});
