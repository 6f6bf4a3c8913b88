/** Deployments, read by name (the migration's preflight, the check for OpenKruise's manager). */
import type { JsonObject } from '../kube/types.ts';
import { getObject, type KubeClient } from './kube-request.ts';

/** The Deployment as stored; undefined when there is none of that name. */
export function readDeployment(client: KubeClient, namespace: string, name: string, signal: AbortSignal | undefined): Promise<JsonObject | undefined> {
  const enc = encodeURIComponent;
  return getObject(client, `/apis/apps/v1/namespaces/${enc(namespace)}/deployments/${enc(name)}`, `get Deployment ${namespace}/${name}`, signal);
}
