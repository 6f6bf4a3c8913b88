/**
 * What the API server does before any webhook sees a SidecarSet: kubectl
 * asks for strict field validation, and an undeclared field (`volumeMount:`
 * for `volumeMounts:`, `maxUnavaliable:`) fails the request there. invoke
 * works on files, so it checks the set against the CRD it would be stored
 * under (infra/k8s/crd.yaml) and says it in the API server's words.
 */
import { fileURLToPath } from 'node:url';
import { isObject } from '../../lib/kube/json.ts';
import { parseObjects } from '../../lib/kube/yaml-objects.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { CRD_NAME } from '../../lib/crd/sidecarset-crd.ts';
import { strictDecodingError, unknownFieldPaths, versionSchema } from '../../lib/crd/unknown-fields.ts';

export const CRD_FILE = fileURLToPath(new URL('../../infra/k8s/crd.yaml', import.meta.url));

let crd: Promise<JsonObject | undefined> | undefined;

/** The API server's refusal of `object` (a SidecarSet), or undefined when its fields are all declared. */
export async function strictDecodingRefusal(object: JsonObject, readText: (path: string) => Promise<string>): Promise<string | undefined> {
  crd ??= readText(CRD_FILE).then((text) => parseObjects(text, CRD_FILE).find((o) => isObject(o.metadata) && o.metadata.name === CRD_NAME));
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
  const found = await crd;
  const schema = found === undefined ? undefined : versionSchema(found, version);
  if (schema === undefined) return undefined;
  const paths = unknownFieldPaths(object, schema);
  return paths.length === 0 ? undefined : strictDecodingError('SidecarSet', version, paths);
}
