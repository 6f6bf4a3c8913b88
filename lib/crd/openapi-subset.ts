/**
 * The part of the API server's OpenAPI v3 document the CRD embeds, as kept in
 * infra/k8s/openapi/: the definitions the CRD's Kubernetes types reach and
 * the server version they were read from, so that the CRD can be generated
 * without a control plane and a test can check the file against the server.
 */
import { isObject } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import { OpenApiSchemaError, referencedDefinitions, type OpenApiSchemas } from './openapi-structural.ts';

export interface OpenApiSubset {
  /** The kube-apiserver's gitVersion (GET /version). */
  server: string;
  /** The OpenAPI v3 group-version document the definitions come from, e.g. `api/v1`. */
  document: string;
  /** The definitions, sorted by name. */
  schemas: Record<string, JsonObject>;
}

/** The definitions `roots` reach in one group-version document (`{components: {schemas}}`). */
export function openApiSubset(doc: unknown, roots: readonly string[], server: string, document: string): OpenApiSubset {
  const schemas = isObject(doc) && isObject(doc.components) && isObject(doc.components.schemas) ? doc.components.schemas : undefined;
  if (schemas === undefined) throw new OpenApiSchemaError(`${document}: not an OpenAPI v3 document (no components.schemas)`);
  const all = schemas as OpenApiSchemas;
  const picked: Record<string, JsonObject> = {};
  for (const name of referencedDefinitions(all, roots)) picked[name] = all[name] as JsonObject;
  return { server, document, schemas: picked };
}

/** A subset read back from its file; `source` names the file in errors. */
export function parseOpenApiSubset(text: string, source: string): OpenApiSubset {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new OpenApiSchemaError(`${source}: not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!isObject(value) || typeof value.server !== 'string' || typeof value.document !== 'string' || !isObject(value.schemas)) {
    throw new OpenApiSchemaError(`${source}: expected {"server": string, "document": string, "schemas": {...}}`);
  }
  for (const [name, schema] of Object.entries(value.schemas)) {
    if (!isObject(schema)) throw new OpenApiSchemaError(`${source}: schemas.${name} is not an object`);
  }
  return { server: value.server, document: value.document, schemas: value.schemas as Record<string, JsonObject> };
}

/** The file's text: stable (sorted definitions, two-space JSON, final newline) so that a refresh diffs cleanly. */
export function formatOpenApiSubset(subset: OpenApiSubset): string {
  return `${JSON.stringify(subset, null, 2)}\n`;
}
