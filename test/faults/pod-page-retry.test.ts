/**
 * The reconciler's pod list reads a page again after a dropped connection
 * (same continue token, same snapshot) instead of failing the whole pass,
 * and gives up with the reason after its retries. Real API server, real
 * resets from the fault proxy in front of it.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { kubePodPages } from '../../lib/adapters/kube-status-sync.ts';
import type { PodPages } from '../../lib/ports.ts';
import { describeWithControlPlane } from '../control-plane/availability.ts';
import { startControlPlane, type ControlPlane } from '../control-plane/harness.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';

const PODS = 45;
const PAGE = 10;

describeWithControlPlane('the pod list over a dropped connection', () => {
  let cp: ControlPlane;
  let proxy: FaultProxy;

  beforeAll(async () => {
    cp = await startControlPlane();
    await cp.apply(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'retry' } }));
    for (let i = 0; i < PODS; i++) {
      const res = await cp.request('admin', 'POST', '/api/v1/namespaces/retry/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}` }, spec: { containers: [{ name: 'app', image: 'app:1' }] } });
      if (res.status !== 201) throw new Error(`cannot create pod p-${i}: ${res.status} ${res.body}`);
    }
    proxy = await startFaultProxy({ targetPort: Number(new URL(cp.url).port) });
  }, 180_000);

  afterAll(async () => {
    await proxy.close();
    await cp.stop();
  }, 60_000);

  function pagesThroughProxy(): PodPages {
    const kubeconfig = cp.kubeconfig('functions').replace(cp.url, `https://127.0.0.1:${proxy.port}`);
    return kubePodPages(parseKubeConfig(kubeconfig, 'through the fault proxy'), { pageSize: PAGE, retryDelaysMs: [100, 300] });
  }

  /** Reads every page; after page `faultAfter` the proxy resets connections, for `faultMs` (or for good). */
  async function listWithFault(faultAfter: number, faultMs: number | undefined): Promise<string[]> {
    const names: string[] = [];
    let page = 0;
    for await (const pods of pagesThroughProxy().pages()) {
      names.push(...pods.map((p) => p.name));
      if (++page === faultAfter) {
        proxy.reset();
        if (faultMs !== undefined) setTimeout(() => { proxy.passThrough(); }, faultMs);
      }
    }
    return names;
  }

  it('carries on from the same page when a connection drops for a moment, and misses no pod', async () => {
    proxy.passThrough();
    const resetsBefore = proxy.counters().resets;
    const names = await listWithFault(2, 150);
    expect(proxy.counters().resets).toBeGreaterThan(resetsBefore);
    expect(names).toHaveLength(PODS);
    expect(new Set(names).size).toBe(PODS);
  }, 60_000);

  it('fails the list, saying how often it tried, when the connection keeps dropping', async () => {
    proxy.passThrough();
    const failure = listWithFault(2, undefined);
    await expect(failure).rejects.toThrow(KubeApiError);
    await expect(failure).rejects.toThrow(/^the request failed: .*\(3 attempts\)$/s);
    proxy.passThrough();
  }, 60_000);
});
