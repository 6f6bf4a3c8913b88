/** Kubernetes OpenAPI v3 definitions rewritten as inline CRD schemas. */
import { describe, expect, it } from '@jest/globals';
import {
  FIELDS_V1,
  INT_OR_STRING,
  OpenApiSchemaError,
  QUANTITY,
  referencedDefinitions,
  structuralSchema,
  type OpenApiSchemas,
} from '../../lib/crd/openapi-structural.ts';
import { openApiSubset, parseOpenApiSubset } from '../../lib/crd/openapi-subset.ts';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const schemas: OpenApiSchemas = {
  Port: {
    description: 'A port.',
    type: 'object',
    required: ['containerPort'],
    properties: {
      containerPort: { description: 'The number.', type: 'integer', format: 'int32', default: 0 },
      protocol: { description: 'The protocol.', type: 'string', default: 'TCP', enum: ['TCP', 'UDP'] },
      target: { description: 'Where a probe goes.', allOf: [ref(INT_OR_STRING)] },
    },
  },
  Box: {
    description: 'Holds things.',
    type: 'object',
    properties: {
      ports: {
        description: 'The ports.',
        type: 'array',
        items: { default: {}, allOf: [ref('Port')] },
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
        'x-kubernetes-patch-merge-key': 'containerPort',
      },
      limits: { description: 'Limits.', type: 'object', additionalProperties: ref(QUANTITY) },
      managed: ref(FIELDS_V1),
      selector: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { a: { type: 'string', format: 'int-or-string' } } },
    },
  },
  [INT_OR_STRING]: { description: 'Int or string.', format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] },
  [QUANTITY]: { description: 'A quantity.', oneOf: [{ type: 'string' }, { type: 'number' }] },
  [FIELDS_V1]: { description: 'Managed fields.', type: 'object' },
  Loop: { type: 'object', properties: { next: ref('Knot') } },
  Knot: { type: 'object', properties: { back: { type: 'array', items: ref('Loop') } } },
  TwoRefs: { type: 'object', properties: { x: { allOf: [ref('Port'), ref('Box')] } } },
  Dangling: { type: 'object', properties: { x: ref('Nowhere') } },
  Untyped: { type: 'object', properties: { x: { description: 'no type' } } },
};

describe('structuralSchema', () => {
  it('inlines references, keeps descriptions, types, formats and map types, and drops what a CRD must not enforce', () => {
    expect(structuralSchema(schemas, 'Box', 'A box field.')).toEqual({
      description: 'A box field.',
      type: 'object',
      properties: {
        ports: {
          description: 'The ports.',
          type: 'array',
          items: {
            description: 'A port.',
            type: 'object',
            properties: {
              containerPort: { description: 'The number.', type: 'integer', format: 'int32' },
              protocol: { description: 'The protocol.', type: 'string' },
              target: { description: 'Where a probe goes.', anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true },
            },
          },
        },
        limits: { description: 'Limits.', type: 'object', additionalProperties: { description: 'A quantity.', 'x-kubernetes-preserve-unknown-fields': true } },
        managed: { description: 'Managed fields.', type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        selector: { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-map-type': 'atomic' },
      },
    });
  });

  it('refuses a recursive type, naming the cycle', () => {
    expect(() => structuralSchema(schemas, 'Loop')).toThrow(new OpenApiSchemaError('Loop -> Knot -> Loop: a recursive type cannot be inlined into a CRD'));
  });

  it('names a missing definition, an allOf of several references and a schema without a type', () => {
    expect(() => structuralSchema(schemas, 'Dangling')).toThrow('Dangling: the document has no definition Nowhere');
    expect(() => structuralSchema(schemas, 'TwoRefs')).toThrow('TwoRefs.x: allOf is only supported around a single $ref');
    expect(() => structuralSchema(schemas, 'Untyped')).toThrow('Untyped.x: a schema without a type');
    expect(() => structuralSchema(schemas, 'Absent')).toThrow('roots: the document has no definition Absent');
  });
});

describe('the OpenAPI subset', () => {
  it('holds exactly the definitions the roots reach', () => {
    expect(referencedDefinitions(schemas, ['Box'])).toEqual(['Box', FIELDS_V1, QUANTITY, INT_OR_STRING, 'Port'].sort());
    const subset = openApiSubset({ components: { schemas } }, ['Port'], 'v1.36.3', 'api/v1');
    expect(subset).toEqual({ server: 'v1.36.3', document: 'api/v1', schemas: { [INT_OR_STRING]: schemas[INT_OR_STRING], Port: schemas.Port } });
  });

  it('refuses what is not an OpenAPI v3 document or a subset file, naming the source', () => {
    expect(() => openApiSubset({ definitions: {} }, ['Port'], 'v1.36.3', 'api/v1')).toThrow('api/v1: not an OpenAPI v3 document (no components.schemas)');
    expect(() => parseOpenApiSubset('{', 'core-v1.json')).toThrow(/^core-v1.json: not JSON/);
    expect(() => parseOpenApiSubset('{"server": "v1", "schemas": {}}', 'core-v1.json')).toThrow('core-v1.json: expected {"server": string, "document": string, "schemas": {...}}');
    expect(() => parseOpenApiSubset('{"server": "v1", "document": "api/v1", "schemas": {"A": 1}}', 'core-v1.json')).toThrow('core-v1.json: schemas.A is not an object');
  });
});
