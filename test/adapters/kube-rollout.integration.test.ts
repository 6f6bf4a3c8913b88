/**
 * The rollout's guarded writes against a real kube-apiserver, as the
 * functions' identity: a JSON Patch whose `test` of the resourceVersion
 * fails is a conflict (the API server answers it with a bare 422 that names
 * no cause), while a patch the API server rejects for another reason on the
 * very version it tested stays an error naming the answer.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { kubePodWriter, kubeRevisionStore } from '../../lib/adapters/kube-rollout.ts';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { newRevision } from '../../lib/rollout/revisions.ts';
import { WriteConflictError } from '../../lib/status-sync/errors.ts';
import { crdPath, waitForCrd, waitForFunctionsAccess } from '../../functions/server/local-stack.ts';
import { createNamespace, createPod, readPod } from '../../testkit/cluster-pods.ts';
import { startFaultProxy } from '../../testkit/faults/fault-proxy.ts';
import { sidecarSet } from '../../testkit/sidecarset-objects.ts';

const NAMESPACE = 'writes';
let controlPlane: ControlPlane | undefined;
const running = (): ControlPlane => {
  if (controlPlane === undefined) throw new Error('the control plane did not start');
  return controlPlane;
};

function writer() {
  return kubePodWriter(parseKubeConfig(running().kubeconfig('functions'), 'test'));
}

async function freshPod(name: string): Promise<string> {
  const pod = await createPod(running(), { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NAMESPACE }, spec: { containers: [{ name: 'agent', image: 'agent:1' }] } });
  return pod.metadata?.resourceVersion ?? '';
}

const imagePatch = (resourceVersion: string, image: string) => [
  { op: 'test' as const, path: '/metadata/resourceVersion', value: resourceVersion },
  { op: 'replace' as const, path: '/spec/containers/0/image', value: image },
];

describeWithControlPlane('the rollout\'s guarded writes on a real kube-apiserver', () => {
  beforeAll(async () => {
    controlPlane = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await controlPlane.apply(await readFile(crdPath, 'utf8'));
    await waitForCrd(controlPlane, 'sidecarsets.apps.kruise.io');
    await waitForFunctionsAccess(controlPlane);
    await createNamespace(controlPlane, NAMESPACE);
  }, 10 * 60_000);

  afterAll(async () => {
    await controlPlane?.stop();
  });

  it('writes a pod at the version it tested and returns the new version', async () => {
    const rv = await freshPod('current');
    const write = await writer().patch(NAMESPACE, 'current', imagePatch(rv, 'agent:2'));
    const stored = await readPod(running(), NAMESPACE, 'current');
    expect(write).toEqual({ outcome: 'written', resourceVersion: stored?.metadata?.resourceVersion });
    expect(stored?.spec?.containers[0]?.image).toBe('agent:2');
  });

  it('reports a pod changed since it was read as a conflict, and leaves it alone', async () => {
    const rv = await freshPod('moved-on');
    const moved = await running().request('admin', 'PATCH', `/api/v1/namespaces/${NAMESPACE}/pods/moved-on`, { metadata: { annotations: { other: 'writer' } } }, 'application/merge-patch+json');
    expect(moved.status).toBe(200);
    await expect(writer().patch(NAMESPACE, 'moved-on', imagePatch(rv, 'agent:2'))).rejects.toThrow(WriteConflictError);
    expect((await readPod(running(), NAMESPACE, 'moved-on'))?.spec?.containers[0]?.image).toBe('agent:1');
  });

  it('reports a patch refused on the very version it tested as an error, not a conflict', async () => {
    const rv = await freshPod('bad-path');
    const patch = [{ op: 'test' as const, path: '/metadata/resourceVersion', value: rv }, { op: 'replace' as const, path: '/spec/containers/5/image', value: 'agent:2' }];
    const refused = writer().patch(NAMESPACE, 'bad-path', patch);
    await expect(refused).rejects.toThrow(KubeApiError);
    await expect(refused).rejects.toThrow(/422/);
  });

  it('answers gone for a pod that no longer exists', async () => {
    expect(await writer().patch(NAMESPACE, 'never-was', imagePatch('1', 'agent:2'))).toEqual({ outcome: 'gone' });
  });

  it('sends one client\'s requests over a few kept-alive connections, not one connection each', async () => {
    const cp = running();
    const proxy = await startFaultProxy({ targetPort: Number(new URL(cp.url).port) });
    try {
      const pods = kubePodWriter(parseKubeConfig(cp.kubeconfig('functions').replace(cp.url, `https://127.0.0.1:${proxy.port}`), 'test'));
      const rv = await freshPod('kept-alive');
      let version = rv;
      for (let i = 0; i < 20; i++) {
        const write = await pods.patch(NAMESPACE, 'kept-alive', imagePatch(version, `agent:${i + 2}`));
        if (write.outcome !== 'written') throw new Error('the pod is gone');
        version = write.resourceVersion;
      }
      // 20 writes one after another: one connection would do; client-node alone opened one per request.
      expect(proxy.counters().connections).toBeLessThanOrEqual(2);
    } finally {
      await proxy.close();
    }
  });

  it('reports a ControllerRevision renumbered since it was read as a conflict', async () => {
    const cp = running();
    const store = kubeRevisionStore(parseKubeConfig(cp.kubeconfig('functions'), 'test'), 'kruise-system');
    const set = sidecarSet('renumbered');
    set.metadata = { ...set.metadata, uid: '5d0c6b4e-1f0e-4c55-9a1e-6a3c0f1d2b77' };
    const created = await store.create(newRevision(set, 'kruise-system', 1, 0));
    await store.setNumber(created, 2);
    await expect(store.setNumber(created, 3)).rejects.toThrow(WriteConflictError);
  });
});
