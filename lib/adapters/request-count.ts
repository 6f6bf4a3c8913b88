/**
 * Counts the requests made through a client-node KubeConfig: every client
 * built on it (client-node's typed APIs, kube-raw.ts, its watches) asks it
 * to authenticate each request, so that one method is where every request
 * to the API server passes. The reconciler reports the count per pass.
 */
import type { KubeConfig } from '@kubernetes/client-node';

export interface RequestCounter {
  /** Requests started through the KubeConfig since it was counted. */
  count(): number;
}

/** Makes `kc` count its requests (in place: the clients already made from it count too). */
export function countRequests(kc: KubeConfig): RequestCounter {
  let requests = 0;
  const authenticate = kc.applySecurityAuthentication.bind(kc);
  kc.applySecurityAuthentication = async (context) => {
    requests++;
    return authenticate(context);
  };
  return { count: () => requests };
}
