/**
 * The webhooks' ControllerRevision source against a real kube-apiserver,
 * read as the functions' identity (infra/k8s/rbac.yaml as shipped), through
 * both readers the functions compose: the project's HTTPS client and
 * client-node. The revisions are written as the admin, as the reconciler
 * (or Kruise) would have stored them.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { kubeClient, settingsConnection } from '../../lib/adapters/kube-request.ts';
import { kubeRevisionSource, RevisionSelectorError } from '../../lib/adapters/kube-revisions.ts';
import { kubeClusterReader, type ServerReader } from '../../lib/adapters/kube-sources.ts';
import { checkKubeconfig, kubeconfigHttpsSettings } from '../../lib/adapters/kubeconfig-reader.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { revisionData, storedRevisionData } from '../../lib/sidecarset/revision-data.ts';
import { LABEL_CUSTOM_VERSION, newRevision, type ControllerRevision } from '../../lib/sidecarset/revisions.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { sidecar, sidecarSet } from '../../testkit/sidecarset-objects.ts';

const NAMESPACE = 'kruise-system';

function version(image: string, customVersion: string): SidecarSet {
  const set = sidecarSet('agent', {
    containers: [sidecar('agent', { image, env: [{ name: 'HTML', value: '<a&b>' }], resources: { limits: { memory: '1Gi', cpu: '0.5' } } })],
    volumes: [{ name: 'cache', emptyDir: { sizeLimit: '1024Mi' } }],
  });
  set.metadata = { ...set.metadata, uid: '0b8a53a5-8f6a-4b53-9a53-2f0c1f3c7a11', labels: { [LABEL_CUSTOM_VERSION]: customVersion } };
  return set;
}

const V1 = version('agent:1', 'v1');
const V2 = version('agent:2', 'v2');
const V2_AGAIN = version('agent:2b', 'v2');
const REVISIONS = [newRevision(V1, NAMESPACE, 1, 0), newRevision(V2, NAMESPACE, 2, 0), newRevision(V2_AGAIN, NAMESPACE, 3, 0)];
const nameOf = (r: ControllerRevision | undefined) => r?.metadata?.name;

const READERS = [
  { name: 'settings the project reads itself', make: async (kubeconfig: string): Promise<ServerReader> => kubeClusterReader(kubeClient(settingsConnection(await kubeconfigHttpsSettings(checkKubeconfig(kubeconfig, 'test'))), { retryDelaysMs: [] })) },
  { name: "client-node's KubeConfig credentials", make: (kubeconfig: string): Promise<ServerReader> => Promise.resolve(kubeClusterReader(kubeConfigClient(parseKubeConfig(kubeconfig, 'test'), { retryDelaysMs: [] }))) },
];

describeWithControlPlane('ControllerRevisions on a real kube-apiserver, read as the functions identity', () => {
  let controlPlane: ControlPlane | undefined;
  const running = (): ControlPlane => {
    if (controlPlane === undefined) throw new Error('the control plane did not start');
    return controlPlane;
  };

  beforeAll(async () => {
    controlPlane = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    const cp = controlPlane;
    for (const revision of REVISIONS) {
      const res = await cp.request('admin', 'POST', `/apis/apps/v1/namespaces/${NAMESPACE}/controllerrevisions`, revision);
      if (res.status !== 201) throw new Error(`creating ${nameOf(revision)}: ${res.status} ${res.body}`);
    }
    await cp.request('admin', 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'elsewhere' } });
    // RBAC reaches the authorizer through a watch: wait until the Role applies.
    for (const deadline = Date.now() + 30_000; ; ) {
      const res = await cp.request('functions', 'GET', `/apis/apps/v1/namespaces/${NAMESPACE}/controllerrevisions?limit=1`);
      if (res.status === 200) break;
      if (Date.now() > deadline) throw new Error(`the functions identity still cannot list ControllerRevisions: ${res.status} ${res.body}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 30 * 60_000);

  afterAll(async () => {
    await controlPlane?.stop();
  });

  describe.each(READERS)('through $name', ({ make }) => {
    let source: ReturnType<typeof kubeRevisionSource>;
    beforeAll(async () => {
      source = kubeRevisionSource(await make(running().kubeconfig('functions')), NAMESPACE);
    });

    it('gets a revision by name with its data byte for byte, and undefined for one that does not exist', async () => {
      const read = await source.get(nameOf(REVISIONS[0]) ?? '');
      expect(read).toMatchObject({ kind: 'ControllerRevision', revision: 1, metadata: { name: nameOf(REVISIONS[0]), namespace: NAMESPACE } });
      // The name hashes these bytes: the API server and both clients keep them (order, escapes, quantities).
      expect(storedRevisionData(read ?? {})).toBe(revisionData(V1));
      await expect(source.get('agent-does-not-exist')).resolves.toBeUndefined();
    });

    it('lists the set\'s revisions, and those carrying a custom version', async () => {
      expect((await source.list('agent')).map(nameOf).sort()).toEqual(REVISIONS.map(nameOf).sort());
      expect((await source.list('agent', { [LABEL_CUSTOM_VERSION]: 'v2' })).map(nameOf).sort()).toEqual([nameOf(REVISIONS[1]), nameOf(REVISIONS[2])].sort());
      await expect(source.list('agent', { [LABEL_CUSTOM_VERSION]: 'v9' })).resolves.toEqual([]);
      await expect(source.list('other')).resolves.toEqual([]);
    });

    it('refuses a label no selector can hold before any request', async () => {
      await expect(source.list('agent', { [LABEL_CUSTOM_VERSION]: 'v1,kruise.io/sidecarset-name=other' })).rejects.toThrow(RevisionSelectorError);
    });

    it('is refused the revisions of another namespace (the Role is kruise-system\'s alone), naming the read', async () => {
      const elsewhere = kubeRevisionSource(await make(running().kubeconfig('functions')), 'elsewhere');
      const error = (await elsewhere.get('agent-x').catch((e: unknown) => e)) as KubeApiError;
      expect(error).toBeInstanceOf(KubeApiError);
      expect(error.code).toBe(403);
      expect(error.operation).toBe('get ControllerRevision "elsewhere/agent-x"');
      await expect(elsewhere.list('agent')).rejects.toMatchObject({ code: 403, operation: 'list ControllerRevisions in namespace "elsewhere" labelled kruise.io/sidecarset-name=agent' });
    });
  });

  /** What the API server's authorizer says the functions identity may do. */
  async function allowed(attributes: Record<string, string>): Promise<boolean> {
    const res = await running().request('functions', 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: attributes },
    });
    expect(res.status).toBe(201);
    return (JSON.parse(res.body) as { status: { allowed: boolean } }).status.allowed;
  }

  it.each([
    ...['get', 'list', 'create', 'update', 'patch', 'delete'].map((verb) => [{ group: 'apps', resource: 'controllerrevisions', verb, namespace: NAMESPACE }, true] as const),
    ...['get', 'list', 'create', 'delete'].map((verb) => [{ group: 'apps', resource: 'controllerrevisions', verb, namespace: 'elsewhere' }, false] as const),
    [{ group: 'apps', resource: 'controllerrevisions', verb: 'deletecollection', namespace: NAMESPACE }, false],
    [{ group: 'apps', resource: 'controllerrevisions', verb: 'watch', namespace: NAMESPACE }, false],
    ...['get', 'list', 'watch', 'patch'].map((verb) => [{ group: '', resource: 'pods', verb, namespace: 'elsewhere' }, true] as const),
    [{ group: '', resource: 'pods', verb: 'update', namespace: 'elsewhere' }, false],
    [{ group: '', resource: 'pods', verb: 'delete', namespace: 'elsewhere' }, false],
    [{ group: '', resource: 'pods', subresource: 'status', verb: 'patch', namespace: 'elsewhere' }, true],
    [{ group: '', resource: 'pods', subresource: 'status', verb: 'update', namespace: 'elsewhere' }, false],
    [{ group: '', resource: 'events', verb: 'create', namespace: 'elsewhere' }, true],
  ])('rbac.yaml lets the functions identity %j: %s', async (attributes, expected) => {
    expect(await allowed(attributes)).toBe(expected);
  });
});
