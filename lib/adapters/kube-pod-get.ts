/** One pod read by name (`npm run -s explain`): undefined when the API server says it is not there. */
import type { Pod } from '../kube/types.ts';
import { getObject, type KubeClient } from './kube-request.ts';

export const getPodOperation = (namespace: string, name: string): string => `get pod ${namespace}/${name}`;

/** Reads pods by namespace and name through `client`. */
export function kubePodGetter(client: KubeClient): (namespace: string, name: string, signal?: AbortSignal) => Promise<Pod | undefined> {
  return async (namespace, name, signal) => {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
    return (await getObject(client, path, getPodOperation(namespace, name), signal));
  };
}
