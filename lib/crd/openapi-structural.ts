/**
 * Kubernetes types from the API server's OpenAPI v3 document, rewritten as the
 * structural schemas a CustomResourceDefinition accepts: every `$ref` inlined
 * (CRD schemas cannot refer to anything), and only what a CRD can hold and
 * what keeps the CRD no stricter than the API server's own Go validation of a
 * pod (which, not the OpenAPI document, decides what a pod may carry):
 *
 * - kept: description, type, format, items, properties, additionalProperties,
 *   x-kubernetes-map-type;
 * - IntOrString becomes `x-kubernetes-int-or-string` (integer or string);
 * - Quantity keeps any value (`x-kubernetes-preserve-unknown-fields`): the
 *   server reads a string or a number (`cpu: 0.5`), and a CRD can say
 *   "integer or string" but not "number or string"; the validating webhook
 *   parses every quantity;
 * - FieldsV1 (opaque managed-fields JSON) keeps any object;
 * - dropped: `default` (a CRD default would change stored objects; the
 *   defaulting webhook applies the server's defaults), `enum` and `required`
 *   (the server's Go validation accepts some values and omissions these
 *   forbid, e.g. an `httpHeaders` entry without `value`; the webhooks and the
 *   pod's own admission validate), `x-kubernetes-list-type`/`-list-map-keys`
 *   (on a CRD they reject duplicates, e.g. two `env` entries of one name, that
 *   a pod accepts), patch strategies, unions, `oneOf`.
 */
import { isObject } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';

/** `components.schemas` of an OpenAPI v3 document: definitions keyed by their full Go name. */
export type OpenApiSchemas = Readonly<Record<string, JsonObject>>;

export const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
export const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
export const FIELDS_V1 = 'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1';

/** The OpenAPI document does not hold what the CRD needs; the message names the definition and where. */
export class OpenApiSchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OpenApiSchemaError';
  }
}

const REF_PREFIX = '#/components/schemas/';

/** The definition name a `$ref` points at. */
function refName(ref: unknown, where: string): string {
  if (typeof ref !== 'string' || !ref.startsWith(REF_PREFIX)) {
    throw new OpenApiSchemaError(`${where}: $ref ${JSON.stringify(ref)} is not a reference into components.schemas`);
  }
  return ref.slice(REF_PREFIX.length);
}

/** The definition a schema node stands for: `$ref`, or `allOf` holding exactly one `$ref` (how v3 adds a description to a reference). */
function referenced(node: JsonObject, where: string): string | undefined {
  if ('$ref' in node) return refName(node.$ref, where);
  const { allOf } = node;
  if (Array.isArray(allOf)) {
    const [only] = allOf as unknown[];
    if (allOf.length !== 1 || !isObject(only) || !('$ref' in only)) {
      throw new OpenApiSchemaError(`${where}: allOf is only supported around a single $ref`);
    }
    return refName(only.$ref, where);
  }
  return undefined;
}

/** The names of every definition `roots` reach, roots included, sorted. */
export function referencedDefinitions(schemas: OpenApiSchemas, roots: readonly string[]): string[] {
  const seen = new Set<string>();
  const visit = (name: string, from: string): void => {
    if (seen.has(name)) return;
    const definition = schemas[name];
    if (definition === undefined) throw new OpenApiSchemaError(`${from}: the document has no definition ${name}`);
    seen.add(name);
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (isObject(value)) {
        for (const [key, child] of Object.entries(value)) {
          if (key === '$ref') visit(refName(child, name), name);
          else walk(child);
        }
      }
    };
    walk(definition);
  };
  for (const root of roots) visit(root, 'roots');
  return [...seen].sort();
}

/**
 * The CRD schema of definition `name`, every reference inlined. `description`
 * replaces the definition's own (a field's description says more than its
 * type's). A definition that refers back to itself cannot be inlined and is
 * an error naming the cycle.
 */
export function structuralSchema(schemas: OpenApiSchemas, name: string, description?: string): JsonObject {
  return inline(schemas, name, description, []);
}

function inline(schemas: OpenApiSchemas, name: string, description: string | undefined, path: readonly string[]): JsonObject {
  if (path.includes(name)) throw new OpenApiSchemaError(`${[...path, name].join(' -> ')}: a recursive type cannot be inlined into a CRD`);
  const definition = schemas[name];
  if (definition === undefined) throw new OpenApiSchemaError(`${path.at(-1) ?? 'roots'}: the document has no definition ${name}`);
  const text = description ?? stringField(definition.description);
  const described = (schema: JsonObject): JsonObject => (text === undefined ? schema : { description: text, ...schema });
  switch (name) {
    case INT_OR_STRING:
      return described({ anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true });
    case QUANTITY:
      return described({ 'x-kubernetes-preserve-unknown-fields': true });
    case FIELDS_V1:
      return described({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    default:
      return convert(schemas, definition, text, [...path, name], name);
  }
}

function stringField(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Formats a CRD schema accepts that the core types use. */
const KEPT_FORMATS = new Set(['int32', 'int64', 'double', 'float', 'byte', 'date-time']);

function convert(schemas: OpenApiSchemas, node: JsonObject, description: string | undefined, path: readonly string[], where: string): JsonObject {
  const ref = referenced(node, where);
  if (ref !== undefined) return inline(schemas, ref, description ?? stringField(node.description), path);
  const out: JsonObject = {};
  if (description !== undefined) out.description = description;
  const { type, format } = node;
  if (typeof type !== 'string') throw new OpenApiSchemaError(`${where}: a schema without a type (${JSON.stringify(Object.keys(node))})`);
  out.type = type;
  if (typeof format === 'string' && KEPT_FORMATS.has(format)) out.format = format;
  if (type === 'array') {
    if (!isObject(node.items)) throw new OpenApiSchemaError(`${where}: an array without items`);
    out.items = convert(schemas, node.items, stringField(node.items.description), path, `${where}[]`);
  }
  if (type === 'object') {
    if (isObject(node.properties)) {
      const properties: JsonObject = {};
      for (const [key, child] of Object.entries(node.properties)) {
        if (!isObject(child)) throw new OpenApiSchemaError(`${where}.${key}: not a schema`);
        properties[key] = convert(schemas, child, stringField(child.description), path, `${where}.${key}`);
      }
      out.properties = properties;
    }
    if (isObject(node.additionalProperties)) {
      const child = node.additionalProperties;
      out.additionalProperties = convert(schemas, child, stringField(child.description), path, `${where}{}`);
    }
  }
  if (typeof node['x-kubernetes-map-type'] === 'string') out['x-kubernetes-map-type'] = node['x-kubernetes-map-type'];
  return out;
}
