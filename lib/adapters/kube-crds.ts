/** CustomResourceDefinitions, read by name (the migration's preflight reads the SidecarSet CRD's versions). */
import type { JsonObject } from '../kube/types.ts';
import { getObject, type KubeClient } from './kube-request.ts';

/** The CRD as stored; undefined when there is none of that name. */
export function readCrd(client: KubeClient, name: string, signal: AbortSignal | undefined): Promise<JsonObject | undefined> {
  return getObject(client, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(name)}`, `get CustomResourceDefinition ${name}`, signal);
}
