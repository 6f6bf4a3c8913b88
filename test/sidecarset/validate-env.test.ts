/**
 * Env vars and envFrom of sidecars, as Kruise 1.8 gets them checked by
 * Kubernetes 1.30's ValidateEnv/ValidateEnvFrom (issue 15 items 1-3): the
 * whole message, byte for byte as Go's field.Error prints it.
 */
import { describe, expect, it } from '@jest/globals';
import { errorsFor } from './validate-fixture.ts';

type Row = [string, unknown, string[]];
const env = 'spec.containers.0.env';
const at = 'spec.containers[0].env';
const ENV_NAME_RULE =
  "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')";
const ENV_FIELD_PATHS =
  'supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"';

describe('env (issue 15 items 1-3)', () => {
  it.each<Row>([
    ['accepts a plain value', [{ name: 'A', value: 'x' }], []],
    ['accepts an empty value', [{ name: 'A' }], []],
    [
      'item 1: rejects value beside valueFrom',
      [{ name: 'A', value: 'x', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }],
      [`${at}[0].valueFrom: Invalid value: "": may not be specified when \`value\` is not empty`],
    ],
    [
      'requires a source in valueFrom',
      [{ name: 'A', valueFrom: {} }],
      [`${at}[0].valueFrom: Invalid value: "": must specify one of: \`fieldRef\`, \`resourceFieldRef\`, \`configMapKeyRef\` or \`secretKeyRef\``],
    ],
    [
      'rejects two sources',
      [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' }, secretKeyRef: { name: 's', key: 'k' } } }],
      [`${at}[0].valueFrom: Invalid value: "": may not have more than one field specified at a time`],
    ],
    ['item 2: rejects a name starting with a digit', [{ name: '1BAD' }], [`${at}[0].name: Invalid value: "1BAD": ${ENV_NAME_RULE}`]],
    ['rejects a name with a space (Kruise 1.8 does not relax env names)', [{ name: 'A B' }], [`${at}[0].name: Invalid value: "A B": ${ENV_NAME_RULE}`]],
    ['accepts dots and dashes in names', [{ name: 'my.env-name' }], []],
    ['rejects the name ..', [{ name: '..' }], [`${at}[0].name: Invalid value: "..": must not be '..'`]],
    ['rejects a name starting with ..', [{ name: '..a' }], [`${at}[0].name: Invalid value: "..a": must not start with '..'`]],
    ['requires a name', [{ value: 'x' }], [`${at}[0].name: Required value`]],
    [
      'item 3: rejects a field path the downward API does not offer',
      [{ name: 'A', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.bogus' } } }],
      [`${at}[0].valueFrom.fieldRef.fieldPath: Invalid value: "spec.bogus": error converting fieldPath: field label not supported: spec.bogus`],
    ],
    [
      'rejects a convertible path env vars cannot read',
      [{ name: 'A', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.phase' } } }],
      [`${at}[0].valueFrom.fieldRef.fieldPath: Unsupported value: "status.phase": ${ENV_FIELD_PATHS}`],
    ],
    ['accepts spec.host, the old name of spec.nodeName', [{ name: 'A', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.host' } } }], []],
    ['accepts a label by key', [{ name: 'A', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.labels['app']" } } }], []],
    [
      'rejects a subscript on another field',
      [{ name: 'A', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.name['x']" } } }],
      [`${at}[0].valueFrom.fieldRef.fieldPath: Invalid value: "metadata.name['x']": error converting fieldPath: field label does not support subscript: metadata.name['x']`],
    ],
    [
      'rejects an api version other than v1',
      [{ name: 'A', valueFrom: { fieldRef: { apiVersion: 'v2', fieldPath: 'metadata.name' } } }],
      [`${at}[0].valueFrom.fieldRef.fieldPath: Invalid value: "metadata.name": error converting fieldPath: unsupported pod version: v2`],
    ],
    [
      'requires the api version first',
      [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
      [`${at}[0].valueFrom.fieldRef.apiVersion: Required value`],
    ],
    [
      'rejects an annotation key that is not a qualified name',
      [{ name: 'A', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.annotations['a b']" } } }],
      [
        `${at}[0].valueFrom.fieldRef: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      ],
    ],
    ['accepts a resource with a cpu divisor', [{ name: 'A', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } }], []],
    ['accepts a hugepages resource', [{ name: 'A', valueFrom: { resourceFieldRef: { resource: 'requests.hugepages-2Mi' } } }], []],
    [
      'rejects an unknown resource',
      [{ name: 'A', valueFrom: { resourceFieldRef: { resource: 'limits.gpu' } } }],
      [
        `${at}[0].valueFrom.resourceFieldRef.resource: Unsupported value: "limits.gpu": supported values: "limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory"`,
      ],
    ],
    [
      'rejects a cpu divisor other than 1 or 1m',
      [{ name: 'A', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '2' } } }],
      [`${at}[0].valueFrom.resourceFieldRef.divisor: Invalid value: "limits.cpu": only divisor's values 1m and 1 are supported with the cpu resource`],
    ],
    [
      'rejects a memory divisor that is not a unit',
      [{ name: 'A', valueFrom: { resourceFieldRef: { resource: 'requests.memory', divisor: '3Mi' } } }],
      [
        `${at}[0].valueFrom.resourceFieldRef.divisor: Invalid value: "requests.memory": only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource`,
      ],
    ],
    [
      'requires a key and a valid name in a key selector',
      [{ name: 'A', valueFrom: { secretKeyRef: { name: 'Bad' } } }],
      [
        `${at}[0].valueFrom.secretKeyRef.name: Invalid value: "Bad": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
        `${at}[0].valueFrom.secretKeyRef.key: Required value`,
      ],
    ],
    [
      'rejects a key with a slash',
      [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'c', key: 'a/b' } } }],
      [
        `${at}[0].valueFrom.configMapKeyRef.key: Invalid value: "a/b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
      ],
    ],
  ])('%s', (_name, value, expected) => {
    expect(errorsFor({ [env]: value })).toEqual(expected);
  });
});

describe('envFrom', () => {
  const envFrom = 'spec.containers.0.envFrom';
  it.each<Row>([
    ['accepts a config map with a prefix', [{ prefix: 'CFG_', configMapRef: { name: 'c' } }], []],
    ['accepts a generateName-style name ending in a dash', [{ secretRef: { name: 'creds-' } }], []],
    ['requires a source, reported on the list', [{ prefix: 'X' }], ['spec.containers[0].envFrom: Invalid value: "": must specify one of: `configMapRef` or `secretRef`']],
    [
      'rejects two sources',
      [{ configMapRef: { name: 'c' }, secretRef: { name: 's' } }],
      ['spec.containers[0].envFrom: Invalid value: "": may not have more than one field specified at a time'],
    ],
    ['requires the source name', [{ configMapRef: {} }], ['spec.containers[0].envFrom[0].configMapRef.name: Required value']],
    ['rejects a prefix starting with a digit', [{ prefix: '9', configMapRef: { name: 'c' } }], [`spec.containers[0].envFrom[0].prefix: Invalid value: "9": ${ENV_NAME_RULE}`]],
  ])('%s', (_name, value, expected) => {
    expect(errorsFor({ [envFrom]: value })).toEqual(expected);
  });
});
