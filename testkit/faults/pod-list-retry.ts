/**
 * The reconciler's pod list over dropped connections: a page whose
 * connection is reset is read again (same continue token, same snapshot)
 * instead of failing the whole resync; a connection that keeps dropping fails
 * the list with the reason after the retries. Real API server, real resets
 * from the fault proxy in front of it.
 */
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { kubePodPages } from '../../lib/adapters/kube-pods.ts';
import type { PodPages } from '../../lib/ports.ts';
import { startControlPlane } from '../../control-plane/harness.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';
import type { Figures } from '../reliability/figures.ts';


export interface PodListRetryOptions {
  pods?: number;
  pageSize?: number;
  /** Lists that each meet one brief outage, at a different page each time. */
  lists?: number;
}

/** Reads every page; after page `faultAfter` the proxy resets connections, for `faultMs` (or for good). */
async function listWithFault(pages: PodPages, proxy: FaultProxy, faultAfter: number, faultMs: number | undefined): Promise<string[]> {
  const names: string[] = [];
  let page = 0;
  for await (const pods of pages.pages()) {
    names.push(...pods.map((p) => p.name));
    if (++page === faultAfter) {
      proxy.reset();
      if (faultMs !== undefined) {
        setTimeout(() => {
          proxy.passThrough();
        }, faultMs);
      }
    }
  }
  return names;
}

/**
 * @throws Error when a list with a brief outage missed or repeated a pod, or
 *   a list whose connection kept dropping did not fail with the reason.
 */
export async function podListRetry(options: PodListRetryOptions = {}): Promise<Figures> {
  const podCount = options.pods ?? 45;
  const pageSize = options.pageSize ?? 10;
  const lists = options.lists ?? 1;
  const pageCount = Math.ceil(podCount / pageSize);
  const cp = await startControlPlane();
  let proxy: FaultProxy | undefined;
  try {
    await cp.apply(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'retry' } }));
    for (let i = 0; i < podCount; i++) {
      const res = await cp.request('admin', 'POST', '/api/v1/namespaces/retry/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}` }, spec: { containers: [{ name: 'app', image: 'app:1' }] } });
      if (res.status !== 201) throw new Error(`cannot create pod p-${i}: ${res.status} ${res.body}`);
    }
    const through = await startFaultProxy({ targetPort: Number(new URL(cp.url).port) });
    proxy = through;
    const kubeconfig = cp.kubeconfig('functions').replace(cp.url, `https://127.0.0.1:${through.port}`);
    const pages = kubePodPages(kubeConfigClient(parseKubeConfig(kubeconfig, 'through the fault proxy'), { retryDelaysMs: [100, 300] }), { pageSize });

    for (let i = 0; i < lists; i++) {
      through.passThrough();
      const faultAfter = 1 + (i % (pageCount - 1));
      const names = await listWithFault(pages, through, faultAfter, 150);
      if (names.length !== podCount || new Set(names).size !== podCount) {
        throw new Error(`a list with a 150 ms outage after page ${faultAfter} read ${names.length} pods (${new Set(names).size} distinct), not ${podCount}`);
      }
    }
    const resetsSurvived = through.counters().resets;
    if (resetsSurvived < lists) throw new Error(`only ${resetsSurvived} connections were reset in ${lists} lists: the outage proved nothing`);

    through.passThrough();
    let persistent: unknown;
    try {
      await listWithFault(pages, through, 2, undefined);
    } catch (error) {
      persistent = error;
    }
    through.passThrough();
    if (!(persistent instanceof KubeApiError) || !/\(3 attempts\)$/.test(persistent.message)) {
      throw new Error(`a list whose connection kept dropping ended with ${persistent instanceof Error ? persistent.message : String(persistent)}, not a KubeApiError after 3 attempts`);
    }
    return { pods: podCount, pageSize, listsWithOutage: lists, connectionsReset: resetsSurvived, podsMissedOrRepeated: 0, persistentOutage: persistent.message.slice(0, 160) };
  } finally {
    await proxy?.close();
    await cp.stop();
  }
}
