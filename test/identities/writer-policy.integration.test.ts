/**
 * The two identities of infra/k8s/rbac.yaml on a real kube-apiserver: the
 * webhooks' read-only group, and the reconciler's writer, whose pod writes
 * the ValidatingAdmissionPolicy there narrows to what a rollout writes
 * (lib/rollout/pod-patch.ts: sidecar images and SidecarSet annotations) and
 * the SidecarSetUpgradable condition. Pods are created as the admin, as a
 * workload controller (and pod-inject) would have made them.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane, type ControlPlaneResponse, type ControlPlaneUser } from '../../control-plane/harness.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { podUpdatePatch } from '../../lib/rollout/pod-patch.ts';
import { upgradableConditionPatch } from '../../lib/rollout/upgradable-condition.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { createNamespace, createPod, podPath, readPod } from '../../testkit/cluster-pods.ts';
import { hashOf, NEW_IMAGE, OLD_IMAGE, rolloutSet, withoutImageOf } from '../rollout/fixtures.ts';

const NS = 'writer-policy';
const POLICY = 'sidecarset-status-sync-pod-writes';
const MERGE = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';

/** A pod test-sidecarset injected at OLD_IMAGE, with a patchPodMetadata annotation and a system one. */
function injectedPod(name: string, set: SidecarSet): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NS,
      labels: { app: 'web' },
      finalizers: ['example.com/keep'],
      annotations: {
        'kruise.io/sidecarset-hash': `{"test-sidecarset":{"updateTimestamp":"2025-01-01T00:00:00Z","hash":"${hashOf(set)}","sidecarSetName":"test-sidecarset","sidecarList":["sidecar1"],"controllerRevision":"test-sidecarset-cf4bf7796"}}`,
        'kruise.io/sidecarset-hash-without-image': `{"test-sidecarset":{"updateTimestamp":"2025-01-01T00:00:00Z","hash":"${withoutImageOf(set)}","sidecarSetName":"test-sidecarset","sidecarList":["sidecar1"]}}`,
        'kruise.io/sidecarset-injected-list': 'test-sidecarset',
        'example.com/patched-by-set': 'v1',
        'kubectl.kubernetes.io/default-container': 'app',
      },
    },
    spec: { containers: [{ name: 'app', image: 'nginx:1' }, { name: 'sidecar1', image: OLD_IMAGE, env: [{ name: 'IS_INJECTED', value: 'true' }] }] },
  };
}

describeWithControlPlane('the webhooks’ and the reconciler’s identities on a real kube-apiserver', () => {
  let controlPlane: ControlPlane | undefined;
  const cp = (): ControlPlane => {
    if (controlPlane === undefined) throw new Error('the control plane did not start');
    return controlPlane;
  };
  const oldSet = rolloutSet({ image: OLD_IMAGE });
  let seq = 0;
  /** A fresh injected pod (each test changes its own). */
  const freshPod = async (): Promise<Pod> => createPod(cp(), injectedPod(`pod-${seq++}`, oldSet));
  const patchPod = (user: ControlPlaneUser, pod: Pod, body: unknown, type: string, sub = ''): Promise<ControlPlaneResponse> =>
    cp().request(user, 'PATCH', `${podPath(NS, pod.metadata?.name ?? '')}${sub}`, body, type);
  const refusal = (res: ControlPlaneResponse): string => `${res.status} ${(JSON.parse(res.body) as { message?: string }).message ?? ''}`;

  beforeAll(async () => {
    controlPlane = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await controlPlane.apply(await readFile(join(process.cwd(), 'infra', 'k8s', 'crd.yaml'), 'utf8'));
    await createNamespace(controlPlane, NS);
    // RBAC and admission policies reach the API server through watches: wait
    // until the writer may patch pods and the policy refuses a relabel.
    const probe = await freshPod();
    for (const deadline = Date.now() + 30_000; ; ) {
      const res = await patchPod('status-sync', probe, { metadata: { labels: { app: 'probe' } } }, MERGE);
      const sets = await cp().request('admin', 'GET', '/apis/apps.kruise.io/v1alpha1/sidecarsets');
      if (res.status === 422 && res.body.includes(POLICY) && sets.status === 200) break;
      if (res.status === 200) await patchPod('admin', probe, { metadata: { labels: { app: 'web' } } }, MERGE);
      if (Date.now() > deadline) throw new Error(`the writer policy is not in force after 30 s: ${res.status} ${res.body}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 30 * 60_000);

  afterAll(async () => {
    await controlPlane?.stop();
  });

  describe('the reconciler (sidecarset-status-sync) under the pod-writes policy', () => {
    it('admits a rollout patch exactly as lib/rollout/pod-patch.ts writes it: the sidecar image and the SidecarSet annotations', async () => {
      const pod = await freshPod();
      const ops = podUpdatePatch({ pod, set: rolloutSet(), latestRevision: 'test-sidecarset-78bb8d68cc', injectedList: 'test-sidecarset', now: new Date() });
      const res = await patchPod('status-sync', pod, ops, JSON_PATCH);
      expect(res.status).toBe(200);
      const after = await readPod(cp(), NS, pod.metadata?.name ?? '');
      expect(after?.spec?.containers.map((c) => c.image)).toEqual(['nginx:1', NEW_IMAGE]);
      expect(after?.metadata?.annotations?.['kruise.io/sidecarset-inplace-update-state']).toContain('test-sidecarset');
    });

    it('admits the SidecarSetUpgradable condition on pods/status', async () => {
      const pod = await freshPod();
      const patch = upgradableConditionPatch(pod, 'test-sidecarset', { reason: 'UpdateImmutableField', why: 'env of sidecar1 changed' }, new Date());
      const res = await patchPod('status-sync', pod, patch, STRATEGIC, '/status');
      expect(res.status).toBe(200);
      expect((JSON.parse(res.body) as Pod).status?.conditions?.map((c) => c.type)).toContain('SidecarSetUpgradable');
    });

    it('admits a patchPodMetadata annotation being added or changed', async () => {
      const pod = await freshPod();
      const res = await patchPod('status-sync', pod, { metadata: { annotations: { 'example.com/patched-by-set': 'v2', 'example.com/new': 'x' } } }, MERGE);
      expect(res.status).toBe(200);
    });

    it.each([
      ['an application container’s image', { spec: { containers: [{ name: 'app', image: 'evil:1' }] } }, 'may change only the images of injected sidecar containers'],
      ['a label', { metadata: { labels: { app: 'db' } } }, 'may not change a pod\'s labels, finalizers or owner references'],
      ['a finalizer', { metadata: { finalizers: null } }, 'may not change a pod\'s labels, finalizers or owner references'],
      ['a toleration (a field a pod update may change)', { spec: { tolerations: [{ key: 'x', operator: 'Exists', effect: 'NoSchedule' }] } }, 'may not change a pod\'s spec beyond sidecar images'],
      ['the removal of a non-SidecarSet annotation', { metadata: { annotations: { 'example.com/patched-by-set': null } } }, 'may change only SidecarSet annotations'],
      ['a kubernetes.io annotation', { metadata: { annotations: { 'kubectl.kubernetes.io/default-container': 'sidecar1' } } }, 'may change only SidecarSet annotations'],
    ])('refuses a pod patch changing %s, naming the policy and the rule', async (_what, patch, message) => {
      const pod = await freshPod();
      const res = await patchPod('status-sync', pod, patch, STRATEGIC);
      expect(refusal(res)).toContain(`ValidatingAdmissionPolicy '${POLICY}' with binding '${POLICY}' denied request: sidecarset-status-sync ${message}`);
      expect(res.status).toBe(422);
    });

    it('refuses a pods/status patch changing anything but the SidecarSetUpgradable condition', async () => {
      const pod = await freshPod();
      const other = await patchPod('status-sync', pod, { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, STRATEGIC, '/status');
      expect(refusal(other)).toContain('may change only the SidecarSetUpgradable condition of a pod\'s status');
      const phase = await patchPod('status-sync', pod, { status: { phase: 'Failed' } }, STRATEGIC, '/status');
      expect(refusal(phase)).toContain('may change only the SidecarSetUpgradable condition of a pod\'s status');
    });

    it('leaves every other identity alone: the admin relabels and repoints an application image', async () => {
      const pod = await freshPod();
      expect((await patchPod('admin', pod, { metadata: { labels: { app: 'db' } } }, MERGE)).status).toBe(200);
      expect((await patchPod('admin', pod, { spec: { containers: [{ name: 'app', image: 'nginx:2' }] } }, STRATEGIC)).status).toBe(200);
    });
  });

  describe('the webhooks (group sidecarset-webhooks): read-only', () => {
    it.each([
      ['GET', '/apis/apps.kruise.io/v1alpha1/sidecarsets'],
      ['GET', '/api/v1/namespaces'],
      ['GET', '/apis/apps/v1/namespaces/kruise-system/controllerrevisions'],
    ])('may %s %s', async (method, path) => {
      expect((await cp().request('webhooks', method, path)).status).toBe(200);
    });

    it('may write nothing: a pod patch, a SidecarSet status, a ControllerRevision, an Event or its webhook configuration are all forbidden', async () => {
      const pod = await freshPod();
      const writes: [string, string, unknown, string][] = [
        ['PATCH', podPath(NS, pod.metadata?.name ?? ''), { metadata: { annotations: { 'kruise.io/sidecarset-hash': '{}' } } }, MERGE],
        ['PATCH', '/apis/apps.kruise.io/v1alpha1/sidecarsets/any/status', { status: {} }, MERGE],
        ['POST', '/apis/apps/v1/namespaces/kruise-system/controllerrevisions', { metadata: { name: 'r' }, revision: 1 }, 'application/json'],
        ['POST', `/api/v1/namespaces/${NS}/events`, { metadata: { name: 'e' }, involvedObject: {} }, 'application/json'],
        ['PATCH', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/serverless-sidecarset', { webhooks: [] }, MERGE],
        ['GET', '/api/v1/pods'],
      ].map((w) => w as [string, string, unknown, string]);
      const statuses = await Promise.all(writes.map(async ([method, path, body, type]) => `${method} ${path} ${(await cp().request('webhooks', method, path, body, type)).status}`));
      expect(statuses).toEqual(writes.map(([method, path]) => `${method} ${path} 403`));
    });
  });
});
