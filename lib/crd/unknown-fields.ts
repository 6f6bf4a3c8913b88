/**
 * The fields of an object its CRD's structural schema does not declare, as
 * the API server's strict decoding names them (k8s.io/apiextensions-apiserver
 * pkg/apiserver/schema/pruning: each path `spec.containers[0].volumeMount`,
 * sorted; apiVersion, kind and metadata of the root and of embedded
 * resources are the API machinery's own), and the error kubectl shows for
 * them (customresource_handler.go's schemaCoercingDecoder, wrapped by
 * endpoints/handlers/rest.go).
 */
import { isObject } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

type Schema = JsonObject | undefined;

const propertiesOf = (s: JsonObject): JsonObject => (isObject(s.properties) ? s.properties : {});
const schemaAt = (value: unknown): Schema => (isObject(value) ? value : undefined);

function walk(value: unknown, schema: Schema, path: string, root: boolean, found: string[]): void {
  const at = (key: string) => (path === '' ? key : `${path}.${key}`);
  if (schema !== undefined && schema['x-kubernetes-preserve-unknown-fields'] === true) {
    walkKnown(value, schema, path, found);
    return;
  }
  if (Array.isArray(value)) {
    const items = schema === undefined ? undefined : schemaAt(schema.items);
    value.forEach((item, i) => {
      walk(item, items, `${path}[${i}]`, false, found);
    });
    return;
  }
  if (!isObject(value)) return;
  const embedded = root || schema?.['x-kubernetes-embedded-resource'] === true;
  for (const [key, child] of Object.entries(value)) {
    if (embedded && META_FIELDS.has(key)) continue;
    const known = schema === undefined ? undefined : (schemaAt(propertiesOf(schema)[key]) ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined));
    if (known !== undefined) walk(child, known, at(key), false, found);
    else if (schema !== undefined && schema.additionalProperties === true) continue;
    else found.push(at(key));
  }
}

/** Under x-kubernetes-preserve-unknown-fields: nothing unknown here, but declared fields below are still checked. */
function walkKnown(value: unknown, schema: JsonObject, path: string, found: string[]): void {
  if (Array.isArray(value)) {
    const items = schemaAt(schema.items);
    if (items !== undefined) {
      value.forEach((item, i) => {
        walk(item, items, `${path}[${i}]`, false, found);
      });
    }
    return;
  }
  if (!isObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    const known = schemaAt(propertiesOf(schema)[key]) ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
    if (known !== undefined) walk(child, known, path === '' ? key : `${path}.${key}`, false, found);
  }
}

/** The undeclared fields' paths, sorted as the API server sorts them. */
export function unknownFieldPaths(object: unknown, openAPIV3Schema: JsonObject): string[] {
  const found: string[] = [];
  walk(object, openAPIV3Schema, '', true, found);
  // Go's sort.Strings: byte order, which a plain comparison of ASCII paths matches.
  return found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** What the API server answers a strict request (kubectl's default) for an object with undeclared fields. */
export function strictDecodingError(kind: string, version: string, paths: readonly string[]): string {
  return `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: strict decoding error: ${paths.map((p) => `unknown field ${JSON.stringify(p)}`).join(', ')}`;
}

/** The openAPIV3Schema a CRD gives `version`, or undefined when it serves no such version. */
export function versionSchema(crd: JsonObject, version: string): JsonObject | undefined {
  const spec = isObject(crd.spec) ? crd.spec : {};
  const versions: unknown[] = Array.isArray(spec.versions) ? spec.versions : [];
  const entry = versions.find((v) => isObject(v) && v.name === version);
  const schema = isObject(entry) && isObject(entry.schema) ? entry.schema.openAPIV3Schema : undefined;
  return isObject(schema) ? schema : undefined;
}
