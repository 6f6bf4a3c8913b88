import { describe, expect, it } from '@jest/globals';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { context, errorsFor, startingWith, tweak, validSidecarSet } from './validate-fixture.ts';

/** Another set, named `other`, that reuses our first container's name. */
function clashing(changes: Record<string, unknown> = {}): SidecarSet {
  return tweak(validSidecarSet('other'), { 'spec.containers.0.name': 'logging-agent', ...changes });
}

const CLASH = 'spec.containers[0].name: Invalid value: "logging-agent": container logging-agent already exist in other';

const namespaces = new Map([
  ['team-a', { 'kubernetes.io/metadata.name': 'team-a', team: 'a' }],
  ['team-b', { 'kubernetes.io/metadata.name': 'team-b', team: 'b' }],
]);

function errorsWith(mine: Record<string, unknown>, others: unknown[]): string[] {
  return errorsFor(mine, context({ others: others as SidecarSet[], namespaceLabels: namespaces }));
}

describe('rule 13: container names across sets', () => {
  it.each<[string, Record<string, unknown>, SidecarSet, string[]]>([
    ['allows distinct names', {}, validSidecarSet('other'), []],
    ['rejects a container name another set uses', {}, clashing(), [CLASH]],
    [
      'rejects an init container name another set uses for a container',
      {},
      tweak(validSidecarSet('other'), { 'spec.containers.0.name': 'logging-init' }),
      ['spec.initContainers[0].name: Invalid value: "logging-init": container logging-init already exist in other'],
    ],
    [
      'rejects an init container name another set uses for an init container',
      {},
      tweak(validSidecarSet('other'), { 'spec.initContainers.0.name': 'logging-init' }),
      ['spec.initContainers[0].name: Invalid value: "logging-init": container logging-init already exist in other'],
    ],
    ['allows a clash when the pod selectors are disjoint', {}, clashing({ 'spec.selector': { matchLabels: { app: 'db' } } }), []],
    [
      'rejects a clash when the pod selectors only may overlap',
      {},
      clashing({ 'spec.selector': { matchExpressions: [{ key: 'tier', operator: 'Exists' }] } }),
      [CLASH],
    ],
  ])('%s', (_name, mine, other, expected) => {
    expect(errorsWith(mine, [other])).toEqual(startingWith(expected));
  });

  it('does not compare a set with its own stored version', () => {
    expect(errorsWith({}, [validSidecarSet()])).toEqual([]);
  });

  it('reports each conflicting set, in order of name', () => {
    const zeta = tweak(clashing(), { 'metadata.name': 'zeta' });
    const alpha = tweak(clashing(), { 'metadata.name': 'alpha' });
    expect(errorsWith({}, [zeta, alpha])).toEqual([
      'spec.containers[0].name: Invalid value: "logging-agent": container logging-agent already exist in alpha',
      'spec.containers[0].name: Invalid value: "logging-agent": container logging-agent already exist in zeta',
    ]);
  });

  it('skips the cross-set rules when the object has errors of its own', () => {
    expect(errorsWith({ 'spec.containers.1.image': '' }, [clashing()])).toEqual(['spec.containers[1].image: Required value']);
  });

  it('reads malformed other sets without throwing', () => {
    const junk = [null, 'x', { metadata: { name: 'x' } }, { metadata: { name: 'y' }, spec: { containers: 'c', selector: 7, namespaceSelector: 'ns' } }];
    expect(errorsWith({}, junk)).toEqual([]);
  });
});

describe('rule 13: namespaces', () => {
  const teamA = { matchLabels: { team: 'a' } };
  const teamB = { matchLabels: { team: 'b' } };
  it.each<[string, boolean, Record<string, unknown>, Record<string, unknown>]>([
    ['the same namespace', true, { 'spec.namespace': 'team-a' }, { 'spec.namespace': 'team-a' }],
    ['different namespaces', false, { 'spec.namespace': 'team-a' }, { 'spec.namespace': 'team-b' }],
    ['a namespace and no restriction', true, { 'spec.namespace': 'team-a' }, {}],
    ['no restriction and a namespace', true, {}, { 'spec.namespace': 'team-b' }],
    ['overlapping namespaceSelectors', true, { 'spec.namespaceSelector': teamA }, { 'spec.namespaceSelector': { matchExpressions: [{ key: 'team', operator: 'In', values: ['a', 'b'] }] } }],
    ['disjoint namespaceSelectors', false, { 'spec.namespaceSelector': teamA }, { 'spec.namespaceSelector': teamB }],
    ['a namespace whose labels match the other set\'s namespaceSelector', true, { 'spec.namespace': 'team-a' }, { 'spec.namespaceSelector': teamA }],
    ['a namespace whose labels do not match the other set\'s namespaceSelector', false, { 'spec.namespace': 'team-a' }, { 'spec.namespaceSelector': teamB }],
    ['a namespaceSelector that matches the other set\'s namespace', true, { 'spec.namespaceSelector': teamB }, { 'spec.namespace': 'team-b' }],
    // Kruise 1.9: a set that names its namespace is scoped by it alone; its namespaceSelector is not read.
    ['a namespace beside a namespaceSelector that the other set\'s selector excludes: the namespace wins', true, { 'spec.namespace': 'team-a', 'spec.namespaceSelector': teamB }, { 'spec.namespaceSelector': teamA }],
    ['a namespace beside a namespaceSelector matching the other set\'s namespace: the namespace wins', false, { 'spec.namespace': 'team-a', 'spec.namespaceSelector': teamB }, { 'spec.namespace': 'team-b' }],
    // Kruise tests the other set's namespace against the other set's own selector here, and so finds a clash.
    ['a namespaceSelector that does not match the other set\'s namespace', false, { 'spec.namespaceSelector': teamA }, { 'spec.namespace': 'team-b' }],
    [
      'a Namespace that does not exist yet, by the name label it will get',
      true,
      { 'spec.namespace': 'team-c' },
      { 'spec.namespaceSelector': { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['team-c'] }] } },
    ],
    ['a Namespace that does not exist yet, and a selector on other labels', false, { 'spec.namespace': 'team-c' }, { 'spec.namespaceSelector': teamA }],
  ])('%s: clash reported = %s', (_name, clash, mine, theirs) => {
    expect(errorsWith(mine, [clashing(theirs)])).toEqual(clash ? [CLASH] : []);
  });
});

describe('rule 13: volumes and pod annotations', () => {
  it.each<[string, Record<string, unknown>, SidecarSet, string[]]>([
    ['allows an identical volume of the same name', {}, tweak(validSidecarSet('other'), { 'spec.volumes.2': { name: 'logging-logs', emptyDir: {} } }), []],
    [
      'rejects a different volume of the same name',
      {},
      tweak(validSidecarSet('other'), { 'spec.volumes.2': { name: 'logging-logs', hostPath: { path: '/var/log' } } }),
      ['spec.volumes[0]: Invalid value: "logging-logs": volume logging-logs is in conflict with sidecarset other'],
    ],
    ['allows a key both sets Retain', {}, validSidecarSet('other'), []],
    [
      'allows a key one set Retains and the other merges',
      {},
      tweak(validSidecarSet('other'), { 'spec.patchPodMetadata.0.patchPolicy': 'MergePatchJson' }),
      [],
    ],
    // Kruise's rule: a Retain entry only fills a missing key, so beside an
    // Overwrite the pod gets the Overwrite's value whichever set comes first.
    ['allows a key this set Retains and the other overwrites', {}, tweak(validSidecarSet('other'), { 'spec.patchPodMetadata.0.patchPolicy': 'Overwrite' }), []],
    ['allows a key this set overwrites and the other Retains', { 'spec.patchPodMetadata.0.patchPolicy': 'Overwrite' }, validSidecarSet('other'), []],
    [
      'rejects a key the other set overwrites and this set merges',
      { 'spec.patchPodMetadata.0': { annotations: { 'example.com/logging': '{"on":true}' }, patchPolicy: 'MergePatchJson' } },
      tweak(validSidecarSet('other'), { 'spec.patchPodMetadata.0.patchPolicy': 'Overwrite' }),
      ['spec.patchPodMetadata[0].annotations[example.com/logging]: Invalid value: "example.com/logging": annotation example.com/logging is in conflict with sidecarset other'],
    ],
    [
      'rejects a key both sets overwrite',
      { 'spec.patchPodMetadata.0.patchPolicy': 'Overwrite' },
      tweak(validSidecarSet('other'), { 'spec.patchPodMetadata.0.patchPolicy': 'Overwrite' }),
      ['spec.patchPodMetadata[0].annotations[example.com/logging]: Invalid value: "example.com/logging": annotation example.com/logging is in conflict with sidecarset other'],
    ],
    [
      'rejects a key this set overwrites and the other merges',
      { 'spec.patchPodMetadata.0.patchPolicy': 'Overwrite' },
      tweak(validSidecarSet('other'), { 'spec.patchPodMetadata.0.patchPolicy': 'MergePatchJson' }),
      ['spec.patchPodMetadata[0].annotations[example.com/logging]: Invalid value: "example.com/logging": annotation example.com/logging is in conflict with sidecarset other'],
    ],
  ])('%s', (_name, mine, other, expected) => {
    expect(errorsWith(mine, [other])).toEqual(startingWith(expected));
  });
});
