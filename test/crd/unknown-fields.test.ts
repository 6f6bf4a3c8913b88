import { describe, expect, it } from '@jest/globals';
import { strictDecodingError, unknownFieldPaths } from '../../lib/crd/unknown-fields.ts';

const schema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: {
        containers: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, volumeMounts: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } } } } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { a: { type: 'string' } } } } },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } },
      },
    },
  },
};

describe('undeclared fields, named as the API server\'s strict decoding names them', () => {
  it.each<[string, unknown, string[]]>([
    ['nothing undeclared', { apiVersion: 'v', kind: 'K', metadata: { name: 'x', whatever: 1 }, spec: { containers: [{ name: 'a', volumeMounts: [{ name: 'v' }] }] } }, []],
    ['a misspelt field in a list item, with its index', { spec: { containers: [{ name: 'a' }, { name: 'b', volumeMount: [] }] } }, ['spec.containers[1].volumeMount']],
    ['every one, sorted', { spec: { zeta: 1, containers: [{ name: 'a', volumeMounts: [{ name: 'v', readonly: true }] }] }, alpha: 2 }, ['alpha', 'spec.containers[0].volumeMounts[0].readonly', 'spec.zeta']],
    ['map values checked against additionalProperties, any key', { spec: { labels: { a: 'b', 'c.d/e': 'f' } } }, []],
    ['nothing unknown under x-kubernetes-preserve-unknown-fields, but declared fields below are checked', { spec: { free: { anything: { deep: 1 }, known: { a: 'x', b: 'y' } } } }, ['spec.free.known.b']],
    ['an embedded resource keeps its own apiVersion, kind and metadata', { spec: { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {}, extra: 1 } } }, ['spec.template.extra']],
    ['an object the schema says nothing of: all its fields', { spec: { template: { spec: { containers: [] } } } }, ['spec.template.spec.containers']],
  ])('%s', (_what, object, paths) => {
    expect(unknownFieldPaths(object, schema)).toEqual(paths);
  });

  it('words the refusal as kube-apiserver does (endpoints/handlers/rest.go around runtime\'s strictDecodingError)', () => {
    expect(strictDecodingError('SidecarSet', 'v1alpha1', ['spec.containers[0].volumeMount', 'spec.updateStrategy.maxUnavaliable'])).toBe(
      'SidecarSet in version "v1alpha1" cannot be handled as a SidecarSet: strict decoding error: unknown field "spec.containers[0].volumeMount", unknown field "spec.updateStrategy.maxUnavaliable"',
    );
  });
});
