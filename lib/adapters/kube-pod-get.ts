/** One pod read by name (`npm run -s explain`): undefined when the API server says it is not there. */
import type { Pod } from '../kube/types.ts';
import { getObject, type KubeClient } from './kube-request.ts';

export const getPodOperation = (namespace: string, name: string): string => `get pod ${namespace}/${name}`;

/** The pod's path on the API server. */
export const podPath = (namespace: string, name: string): string => `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;

/** Reads pods by namespace and name through `client`. */
export function kubePodGetter(client: KubeClient): (namespace: string, name: string, signal?: AbortSignal) => Promise<Pod | undefined> {
  return async (namespace, name, signal) => {
    return await getObject(client, podPath(namespace, name), getPodOperation(namespace, name), signal);
  };
}
