/**
 * The KubeConfig connection's sockets against a real kube-apiserver:
 * client-node 2.0.1 makes a new connection pool (a TCP connection and a TLS
 * handshake) for every request, so a rollout's thousands of pod writes would
 * each open one; the connection (kubeconfig.ts) keeps its sockets alive.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { kubePodWriter } from '../../lib/adapters/kube-pods.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { readFile } from 'node:fs/promises';
import { crdPath, waitForCrd, waitForFunctionsAccess } from '../../functions/server/local-stack.ts';
import { createNamespace, createPod } from '../../testkit/cluster-pods.ts';
import { startFaultProxy } from '../../testkit/faults/fault-proxy.ts';

const NAMESPACE = 'kept-alive';
let controlPlane: ControlPlane | undefined;
const running = (): ControlPlane => {
  if (controlPlane === undefined) throw new Error('the control plane did not start');
  return controlPlane;
};

describeWithControlPlane('the KubeConfig connection on a real kube-apiserver', () => {
  beforeAll(async () => {
    controlPlane = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    // The functions' access is checked on SidecarSets: their CRD first.
    await controlPlane.apply(await readFile(crdPath, 'utf8'));
    await waitForCrd(controlPlane, 'sidecarsets.apps.kruise.io');
    await waitForFunctionsAccess(controlPlane);
    await createNamespace(controlPlane, NAMESPACE);
  }, 10 * 60_000);

  afterAll(async () => {
    await controlPlane?.stop();
  });

  it("sends one client's requests over a few kept-alive connections, not one connection each", async () => {
    const cp = running();
    const proxy = await startFaultProxy({ targetPort: Number(new URL(cp.url).port) });
    try {
      // As admin: the writes re-image an app container, which the reconciler's pod policy refuses its identities (rbac.yaml).
      const pods = kubePodWriter(kubeConfigClient(parseKubeConfig(cp.kubeconfig('admin').replace(cp.url, `https://127.0.0.1:${proxy.port}`), 'test')));
      const created = await createPod(cp, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'agent', namespace: NAMESPACE }, spec: { containers: [{ name: 'agent', image: 'agent:1' }] } });
      let version = created.metadata?.resourceVersion ?? '';
      for (let i = 0; i < 20; i++) {
        const write = await pods.patch(NAMESPACE, 'agent', [
          { op: 'test', path: '/metadata/resourceVersion', value: version },
          { op: 'replace', path: '/spec/containers/0/image', value: `agent:${i + 2}` },
        ]);
        if (write.outcome !== 'written') throw new Error('the pod is gone');
        version = write.resourceVersion;
      }
      // 20 writes one after another: one connection would do; client-node alone opened one per request.
      expect(proxy.counters().connections).toBeLessThanOrEqual(2);
    } finally {
      await proxy.close();
    }
  });
});
