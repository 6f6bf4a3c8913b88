/**
 * The two identities of infra/k8s/rbac.yaml on a real kube-apiserver: the
 * webhooks' read-only group, and the reconciler's writer, whose pod writes
 * the ValidatingAdmissionPolicy there narrows to what a rollout writes
 * (lib/rollout/pod-patch.ts: sidecar images and SidecarSet annotations) and
 * the SidecarSetUpgradable condition, within the rollout fence pod-inject
 * records on each pod (lib/sidecarset/rollout-fence.ts; issue 36, item 2).
 * Pods are created as the admin, as a workload controller would, injected
 * by the core injection pod-inject runs.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane, type ControlPlaneResponse, type ControlPlaneUser } from '../../control-plane/harness.ts';
import type { Container, Pod } from '../../lib/kube/types.ts';
import { FencedPodError } from '../../lib/rollout/fence-check.ts';
import { podUpdatePatch } from '../../lib/rollout/pod-patch.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { upgradableConditionPatch } from '../../lib/rollout/upgradable-condition.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { createNamespace, createPod, podPath, readPod } from '../../testkit/cluster-pods.ts';
import { NEW_IMAGE, OLD_IMAGE, rolloutSet } from '../rollout/fixtures.ts';

const NS = 'writer-policy';
const POLICY = 'sidecarset-status-sync-pod-writes';
const MERGE = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';

/** test-sidecarset at OLD_IMAGE, writing one annotation (patchPodMetadata) onto the pods it injects. */
const injectingSet = (image: string, value: string): SidecarSet => {
  const set = rolloutSet({ image });
  return { ...set, spec: { ...set.spec, patchPodMetadata: [{ patchPolicy: 'Overwrite', annotations: { 'example.com/patched-by-set': value } }] } };
};

/**
 * A pod as pod-inject makes it (the core injection, so with the rollout
 * fence it writes): test-sidecarset's sidecar1 at OLD_IMAGE and its
 * annotation, beside a system annotation, a finalizer and `containers`
 * of the creator's own (an application container by default).
 */
function injectedPod(name: string, containers: Container[] = [{ name: 'app', image: 'nginx:1' }], initContainers?: Container[], set = injectingSet(OLD_IMAGE, 'v1')): Pod {
  const plain: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { app: 'web' }, finalizers: ['example.com/keep'], annotations: { 'kubectl.kubernetes.io/default-container': 'app' } },
    spec: { containers, ...(initContainers === undefined ? {} : { initContainers }) },
  };
  return injectPod({ pod: plain, namespace: NS, sidecarSets: [set], namespaceLabels: new Map(), now: new Date() }).pod;
}

describeWithControlPlane('the webhooks’ and the reconciler’s identities on a real kube-apiserver', () => {
  let controlPlane: ControlPlane | undefined;
  const cp = (): ControlPlane => {
    if (controlPlane === undefined) throw new Error('the control plane did not start');
    return controlPlane;
  };
  let seq = 0;
  /** A fresh injected pod (each test changes its own). */
  const freshPod = async (containers?: Container[], initContainers?: Container[], set?: SidecarSet): Promise<Pod> => createPod(cp(), injectedPod(`pod-${seq++}`, containers, initContainers, set));
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
    it('admits a rollout patch exactly as lib/rollout/pod-patch.ts writes it: the sidecar image, the SidecarSet annotations and the set’s patchPodMetadata', async () => {
      const pod = await freshPod();
      const ops = podUpdatePatch({ pod, set: injectingSet(NEW_IMAGE, 'v2'), latestRevision: 'test-sidecarset-78bb8d68cc', injectedList: 'test-sidecarset', now: new Date() });
      const res = await patchPod('status-sync', pod, ops, JSON_PATCH);
      expect(res.status).toBe(200);
      const after = await readPod(cp(), NS, pod.metadata?.name ?? '');
      expect(after?.spec?.containers.map((c) => c.image)).toEqual([NEW_IMAGE, 'nginx:1']);
      expect(after?.metadata?.annotations?.['kruise.io/sidecarset-inplace-update-state']).toContain('test-sidecarset');
      expect(after?.metadata?.annotations?.['example.com/patched-by-set']).toBe('v2');
    });

    it('admits a rollout of a native sidecar (an init container pod-inject injected with restartPolicy: Always)', async () => {
      const base = injectingSet(OLD_IMAGE, 'v1');
      const native = { ...base, spec: { ...base.spec, initContainers: [{ name: 'native1', image: OLD_IMAGE, restartPolicy: 'Always' }] } } as SidecarSet;
      const pod = await freshPod(undefined, undefined, native);
      const at = (pod.spec?.initContainers ?? []).findIndex((c) => c.name === 'native1');
      const res = await patchPod('status-sync', pod, [{ op: 'replace', path: `/spec/initContainers/${at}/image`, value: NEW_IMAGE }], JSON_PATCH);
      expect(res.status).toBe(200);
    });

    it('admits a HotUpgrade pair’s images: both containers pod-inject injected for one sidecar', async () => {
      const base = injectingSet(OLD_IMAGE, 'v1');
      const sidecar = { ...(base.spec?.containers?.[0] ?? { name: 'sidecar1' }), upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } };
      const hot = { ...base, spec: { ...base.spec, containers: [sidecar] } } as SidecarSet;
      const pod = await freshPod(undefined, undefined, hot);
      const names = (pod.spec?.containers ?? []).map((c) => c.name);
      expect(names).toEqual(['sidecar1-1', 'sidecar1-2', 'app']);
      const res = await patchPod('status-sync', pod, [{ op: 'replace', path: '/spec/containers/0/image', value: 'empty:1' }, { op: 'replace', path: '/spec/containers/1/image', value: NEW_IMAGE }], JSON_PATCH);
      expect(res.status).toBe(200);
    });

    it('admits the SidecarSetUpgradable condition on pods/status', async () => {
      const pod = await freshPod();
      const patch = upgradableConditionPatch(pod, 'test-sidecarset', { reason: 'UpdateImmutableField', why: 'env of sidecar1 changed' }, new Date());
      const res = await patchPod('status-sync', pod, patch, STRATEGIC, '/status');
      expect(res.status).toBe(200);
      expect((JSON.parse(res.body) as Pod).status?.conditions?.map((c) => c.type)).toContain('SidecarSetUpgradable');
    });

    it('admits a patchPodMetadata annotation pod-inject recorded being changed', async () => {
      const pod = await freshPod();
      const res = await patchPod('status-sync', pod, { metadata: { annotations: { 'example.com/patched-by-set': 'v2' } } }, MERGE);
      expect(res.status).toBe(200);
    });

    // Issue 36, item 2: what the old rule (IS_INJECTED containers; any annotation outside kubernetes.io and k8s.io) let through.
    it.each([
      ['an AWS role for kube2iam and kiam', { 'iam.amazonaws.com/role': 'arn:aws:iam::123456789012:role/admin' }],
      ['karpenter.sh/do-not-disrupt', { 'karpenter.sh/do-not-disrupt': 'true' }],
      ['an annotation no SidecarSet names', { 'example.com/new': 'x' }],
    ])('refuses adding %s to a pod, naming the policy', async (_what, annotations) => {
      const pod = await freshPod();
      const res = await patchPod('status-sync', pod, { metadata: { annotations } }, MERGE);
      expect(refusal(res)).toContain(`ValidatingAdmissionPolicy '${POLICY}' with binding '${POLICY}' denied request: sidecarset-status-sync may change only SidecarSet bookkeeping annotations and the patchPodMetadata keys pod-inject recorded`);
      expect(res.status).toBe(422);
    });

    it.each([
      ['widening the containers it may re-image', { 'serverless-sidecarset/rollout-containers': 'app,sidecar1' }],
      ['widening the annotation keys it may write', { 'serverless-sidecarset/rollout-annotations': 'example.com/patched-by-set,iam.amazonaws.com/role' }],
      ['removing it', { 'serverless-sidecarset/rollout-containers': null }],
    ])('refuses %s: the rollout fence pod-inject wrote', async (_what, annotations) => {
      const pod = await freshPod();
      const res = await patchPod('status-sync', pod, { metadata: { annotations } }, MERGE);
      expect(refusal(res)).toContain(`denied request: sidecarset-status-sync may not change the rollout fence`);
      expect(res.status).toBe(422);
    });

    it('refuses the image of a container carrying IS_INJECTED that pod-inject did not inject (its creator wrote the env var)', async () => {
      const pod = await freshPod([{ name: 'app', image: 'nginx:1', env: [{ name: 'IS_INJECTED', value: 'true' }] }]);
      const res = await patchPod('status-sync', pod, { spec: { containers: [{ name: 'app', image: 'evil:1' }] } }, STRATEGIC);
      expect(refusal(res)).toContain('denied request: sidecarset-status-sync may change only the images of the sidecar containers pod-inject injected');
      expect(res.status).toBe(422);
    });

    it('refuses the sidecar image of a pod created before the fence (no serverless-sidecarset/rollout-* annotations): no silent fallback to IS_INJECTED', async () => {
      const injected = injectedPod(`pod-${seq++}`);
      const annotations = { ...injected.metadata?.annotations };
      delete annotations['serverless-sidecarset/rollout-containers'];
      delete annotations['serverless-sidecarset/rollout-annotations'];
      const pod = await createPod(cp(), { ...injected, metadata: { ...injected.metadata, annotations } });
      const res = await patchPod('status-sync', pod, { spec: { containers: [{ name: 'sidecar1', image: NEW_IMAGE }] } }, STRATEGIC);
      expect(refusal(res)).toContain('may change only the images of the sidecar containers pod-inject injected');
      expect(res.status).toBe(422);
      // The reconciler does not try: the pod is set aside, told, and never refused reconcile after reconcile.
      expect(() => podUpdatePatch({ pod, set: injectingSet(NEW_IMAGE, 'v1'), latestRevision: 'r', injectedList: 'test-sidecarset', now: new Date() })).toThrow(FencedPodError);
    });

    it('lets the reconciler write what it plans for a set whose patchPodMetadata named a key after the pod was created: the image, without the key', async () => {
      const pod = await freshPod();
      const later = injectingSet(NEW_IMAGE, 'v2');
      const grown = { ...later, spec: { ...later.spec, patchPodMetadata: [...(later.spec?.patchPodMetadata ?? []), { patchPolicy: 'Overwrite', annotations: { 'example.com/added-later': 'y' } }] } } as SidecarSet;
      const res = await patchPod('status-sync', pod, podUpdatePatch({ pod, set: grown, latestRevision: 'r', injectedList: 'test-sidecarset', now: new Date() }), JSON_PATCH);
      expect(res.status).toBe(200);
      const after = await readPod(cp(), NS, pod.metadata?.name ?? '');
      expect([after?.spec?.containers[0]?.image, after?.metadata?.annotations?.['example.com/added-later']]).toEqual([NEW_IMAGE, undefined]);
    });

    it.each([
      ['an application container’s image', { spec: { containers: [{ name: 'app', image: 'evil:1' }] } }, 'may change only the images of the sidecar containers pod-inject injected'],
      ['a label', { metadata: { labels: { app: 'db' } } }, 'may not change a pod\'s labels, finalizers or owner references'],
      ['a finalizer', { metadata: { finalizers: null } }, 'may not change a pod\'s labels, finalizers or owner references'],
      ['a toleration (a field a pod update may change)', { spec: { tolerations: [{ key: 'x', operator: 'Exists', effect: 'NoSchedule' }] } }, 'may not change a pod\'s spec beyond sidecar images'],
      ['the removal of a non-SidecarSet annotation', { metadata: { annotations: { 'example.com/patched-by-set': null } } }, 'may change only SidecarSet bookkeeping annotations'],
      ['a kubernetes.io annotation', { metadata: { annotations: { 'kubectl.kubernetes.io/default-container': 'sidecar1' } } }, 'may change only SidecarSet bookkeeping annotations'],
    ])('refuses a pod patch changing %s, naming the policy and the rule', async (_what, patch, message) => {
      const pod = await freshPod();
      const res = await patchPod('status-sync', pod, patch, STRATEGIC);
      expect(refusal(res)).toContain(`ValidatingAdmissionPolicy '${POLICY}' with binding '${POLICY}' denied request: sidecarset-status-sync ${message}`);
      expect(res.status).toBe(422);
    });

    // Issue 45, item 1: forged bookkeeping on an unfenced pod is what `migrate fence` would have trusted.
    it('refuses any bookkeeping change on a pod without the rollout fence, and admits it on a fenced one', async () => {
      const injected = injectedPod(`pod-${seq++}`);
      const fenced = await createPod(cp(), injected);
      const annotations = { ...injected.metadata?.annotations };
      delete annotations['serverless-sidecarset/rollout-containers'];
      delete annotations['serverless-sidecarset/rollout-annotations'];
      const bare = await createPod(cp(), { ...injected, metadata: { ...injected.metadata, name: `pod-${seq++}`, annotations } });
      const forged = { metadata: { annotations: { 'kruise.io/sidecarset-hash': '{"role-set":{"hash":"h","sidecarSetName":"role-set","sidecarList":[]}}' } } };
      for (const patch of [forged, { metadata: { annotations: { 'kruise.io/sidecarset-injected-list': null } } }]) {
        const res = await patchPod('status-sync', bare, patch, MERGE);
        expect(refusal(res)).toContain('denied request: sidecarset-status-sync may change only SidecarSet bookkeeping annotations and the patchPodMetadata keys pod-inject recorded (serverless-sidecarset/rollout-annotations), only on a pod carrying the rollout fence');
      }
      expect((await patchPod('status-sync', fenced, forged, MERGE)).status).toBe(200);
    });

    // Issue 45, item 4: spec fields a later Kubernetes made mutable (a gated pod's scheduling, since 1.27) stay the creator's.
    it.each([
      ['a nodeSelector', { spec: { nodeSelector: { 'kubernetes.io/hostname': 'attacker-node' } } }],
      ['a node affinity', { spec: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['attacker-node'] }] }] } } } } }],
    ])('refuses %s on a pod with schedulingGates (the allow-list of spec fields)', async (_what, patch) => {
      const gated = injectedPod(`pod-${seq++}`);
      const pod = await createPod(cp(), { ...gated, spec: { ...gated.spec, containers: gated.spec?.containers ?? [], schedulingGates: [{ name: 'example.com/batch' }] } });
      expect((await patchPod('admin', pod, { spec: { nodeSelector: { tier: 'batch' } } }, STRATEGIC)).status).toBe(200);
      const now = await readPod(cp(), NS, pod.metadata?.name ?? '');
      const res = await patchPod('status-sync', now ?? pod, patch, STRATEGIC);
      expect(refusal(res)).toContain('denied request: sidecarset-status-sync may not change a pod\'s spec beyond sidecar images');
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

    it('may get one pod by name (the pod-eviction webhook), never list or watch pods, nor evict one', async () => {
      const pod = await freshPod();
      const path = podPath(NS, pod.metadata?.name ?? '');
      const eviction = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod.metadata?.name, namespace: NS }, deleteOptions: { preconditions: { uid: pod.metadata?.uid } } };
      const statuses = [
        (await cp().request('webhooks', 'GET', path)).status,
        (await cp().request('webhooks', 'GET', `/api/v1/namespaces/${NS}/pods`)).status,
        (await cp().request('webhooks', 'GET', `/api/v1/namespaces/${NS}/pods?watch=true&timeoutSeconds=1`)).status,
        (await cp().request('webhooks', 'POST', `${path}/eviction`, eviction)).status,
      ];
      expect(statuses).toEqual([200, 403, 403, 403]);
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
