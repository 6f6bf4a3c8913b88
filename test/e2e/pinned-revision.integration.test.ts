/**
 * Kruise's e2e scenario 22, its injection half (rollout.md §7,
 * "InjectionStrategy.Revision"), on a real kube-apiserver that calls the
 * webhooks over TLS: a SidecarSet updated six times, each version labelled
 * with its custom version and recorded as a ControllerRevision; then pinned
 * to custom version 3, a new pod gets that version's image, hash and
 * revision name. A pin that does not resolve is refused by validation.
 *
 * The revisions are written here as the admin, exactly as the reconciler
 * registers them (newRevision over the stored set), so this suite tests the
 * webhooks' side alone.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { currentRevisionName, LABEL_CUSTOM_VERSION, newRevision, type ControllerRevision } from '../../lib/sidecarset/revisions.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

const SETS = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
const REVISIONS = '/apis/apps/v1/namespaces/kruise-system/controllerrevisions';
const NAMESPACE = 'e2e-revision';
const SET = `test-sidecarset-${NAMESPACE}`;
const TAGS = ['nginx:1.21', 'nginx:1.22', 'nginx:1.23', 'nginx:1.24', 'nginx:1.25', 'nginx:1.26'];

let stack: LocalStack;

/** Kruise's NewBaseSidecarSet, paused so that nothing is rolled. */
const baseSidecarSet = (): SidecarSet => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: SET, labels: { app: 'sidecar', [LABEL_CUSTOM_VERSION]: '0' } },
  spec: {
    namespace: NAMESPACE,
    selector: { matchLabels: { app: 'sidecarset' } },
    updateStrategy: { type: 'RollingUpdate', paused: true },
    initContainers: [{ name: 'init-sidecar', image: 'busybox:latest', command: ['/bin/sh', '-c', 'sleep 1'] }],
    containers: [
      { name: 'nginx-sidecar', image: TAGS[0] ?? '', command: ['tail', '-f', '/dev/null'], podInjectPolicy: 'BeforeAppContainer', shareVolumePolicy: { type: 'enabled' } },
      { name: 'busybox-sidecar', image: 'busybox:latest', command: ['/bin/sh', '-c', 'sleep 10000000'], podInjectPolicy: 'AfterAppContainer' },
    ],
  },
});

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NAMESPACE, labels: { app: 'sidecarset' } },
  spec: { containers: [{ name: 'main', image: 'busybox:latest', command: ['/bin/sh', '-c', 'sleep 10000000'] }] },
});

/** One request as the admin; the answer's object is a SidecarSet, a Pod, a ControllerRevision or a Status, as the path says. */
async function call(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; object: SidecarSet & Pod; message: string }> {
  const res = await stack.cp.request('admin', method, path, body, contentType);
  const parsed = JSON.parse(res.body) as SidecarSet & Pod & { message?: string };
  return { status: res.status, object: parsed, message: parsed.message ?? '' };
}

const patchSet = (patch: unknown) => call('PATCH', `${SETS}/${SET}`, patch, 'application/merge-patch+json');

/** Registers the stored set's current spec as the reconciler would: the next revision number, collision count 0. */
async function register(number: number): Promise<ControllerRevision> {
  const stored = (await call('GET', `${SETS}/${SET}`)).object;
  const created = await call('POST', REVISIONS, newRevision(stored, 'kruise-system', number, 0));
  expect(created.status).toBe(201);
  return created.object;
}

interface Recorded {
  hash?: string;
  controllerRevision?: string;
}

function recorded(p: Pod): Recorded | undefined {
  return (JSON.parse(p.metadata?.annotations?.['kruise.io/sidecarset-hash'] ?? '{}') as Record<string, Recorded>)[SET];
}

describeWithControlPlane('scenario 22: injection of a pinned revision, on a real API server', () => {
  const history: ControllerRevision[] = [];

  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    // The webhook path: pod-inject reading pinned revisions, for pods created at once after each change of the set.
    stack = await startLocalStack({ injection: 'webhook' });
    expect((await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } })).status).toBe(201);
    expect((await call('POST', SETS, baseSidecarSet())).status).toBe(201);
    history.push(await register(1));
    for (let i = 1; i < TAGS.length; i++) {
      const updated = await patchSet({ metadata: { labels: { [LABEL_CUSTOM_VERSION]: String(i) } }, spec: { containers: [{ ...baseSidecarSet().spec?.containers?.[0], image: TAGS[i] }, baseSidecarSet().spec?.containers?.[1]] } });
      expect(updated.status).toBe(200);
      history.push(await register(i + 1));
    }
  }, 30 * 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  it('records six revisions, one per image, each labelled with its custom version', () => {
    expect(new Set(history.map((r) => r.metadata?.name)).size).toBe(6);
    expect(history.map((r) => r.metadata?.labels?.[LABEL_CUSTOM_VERSION])).toEqual(['0', '1', '2', '3', '4', '5']);
  });

  it('injects the current spec into a pod while nothing is pinned, recording the revision name computed from it', async () => {
    const created = await call('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, pod('unpinned'));
    expect(created.status).toBe(201);
    expect(created.object.spec?.containers.map((c) => [c.name, c.image])).toEqual([['nginx-sidecar', TAGS[5]], ['main', 'busybox:latest'], ['busybox-sidecar', 'busybox:latest']]);
    // The name the reconciler registered for the current spec, with no status.latestRevision to copy.
    expect(recorded(created.object)?.controllerRevision).toBe(history[5]?.metadata?.name);
  });

  it('admits a pin to custom version 3 (it resolves), and a new pod gets that version: image, hash and revision name', async () => {
    const pinned = await patchSet({ spec: { injectionStrategy: { revision: { customVersion: '3', policy: 'Always' } } } });
    expect(pinned.status).toBe(200);
    // Pinning changes no recorded field: the current spec's revision name is still the newest one.
    expect(currentRevisionName(pinned.object)).toBe(history[5]?.metadata?.name);
    const created = await call('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, pod('pinned'));
    expect(created.status).toBe(201);
    expect(created.object.spec?.containers.find((c) => c.name === 'nginx-sidecar')?.image).toBe(TAGS[3]);
    expect(created.object.spec?.initContainers?.map((c) => c.name)).toEqual(['init-sidecar']);
    expect(recorded(created.object)).toMatchObject({
      controllerRevision: history[3]?.metadata?.name,
      hash: history[3]?.metadata?.annotations?.['kruise.io/sidecarset-hash'],
    });
  });

  it('refuses a pin that does not resolve, at spec.injectionStrategy.revision', async () => {
    const missingVersion = await patchSet({ spec: { injectionStrategy: { revision: { customVersion: '9', policy: 'Always' } } } });
    expect(missingVersion.status).toBe(422);
    expect(missingVersion.message).toContain(
      `spec.injectionStrategy.revision: Invalid value: {"customVersion":"9","policy":"Always"}: Cannot find specific ControllerRevision: SidecarSet ${SET} pins custom version 9, but no ControllerRevision carries it`,
    );
    const missingName = await call('POST', SETS, { ...baseSidecarSet(), metadata: { name: 'pins-nothing-real' }, spec: { ...baseSidecarSet().spec, namespace: 'other', injectionStrategy: { revision: { revisionName: 'pins-nothing-real-5d4b' } } } });
    expect(missingName.status).toBe(422);
    expect(missingName.message).toContain('Cannot find specific ControllerRevision: SidecarSet pins-nothing-real pins ControllerRevision pins-nothing-real-5d4b, which does not exist');
  });

  it('refuses a pod (failurePolicy Fail) rather than inject the current spec when the pinned revision is gone', async () => {
    expect((await call('DELETE', `${REVISIONS}/${history[3]?.metadata?.name ?? ''}`)).status).toBe(200);
    const created = await call('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, pod('pinned-but-gone'));
    expect(created.status).toBe(500);
    expect(created.message).toContain('failed calling webhook "pod-inject.sidecarset.kruise.io"');
    // The API server does not pass the webhook's words on; its log has them.
    expect(stack.logs.some((line) => line.includes(`SidecarSet ${SET} pins custom version 3, but no ControllerRevision carries it`))).toBe(true);
  });
});

describeWithControlPlane('npm start with SIDECARSET_REVISION_NAMESPACE, on a real API server', () => {
  const HISTORY_NAMESPACE = 'sidecarset-history';

  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    // The embedded stack installs the revision RBAC in the configured namespace, and reads revisions there.
    // The webhook path: pod-inject reading the pinned revision from the configured namespace, for a pod created at once.
    stack = await startLocalStack({ injection: 'webhook', env: { SIDECARSET_REVISION_NAMESPACE: HISTORY_NAMESPACE } });
    expect((await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } })).status).toBe(201);
  }, 30 * 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  it('injects a revision pinned by name from the configured namespace, and validates pins against it', async () => {
    expect((await call('POST', SETS, baseSidecarSet())).status).toBe(201);
    const stored = (await call('GET', `${SETS}/${SET}`)).object;
    const revision = newRevision(stored, HISTORY_NAMESPACE, 1, 0);
    expect((await call('POST', `/apis/apps/v1/namespaces/${HISTORY_NAMESPACE}/controllerrevisions`, revision)).status).toBe(201);
    const name = revision.metadata?.name ?? '';
    // A revision in kruise-system does not count: only the configured namespace is read.
    const otherSpec = JSON.parse(JSON.stringify(stored).replace(`"${TAGS[0] ?? ''}"`, `"${TAGS[2] ?? ''}"`)) as SidecarSet;
    const inKruiseSystem = newRevision(otherSpec, 'kruise-system', 1, 0);
    expect((await call('POST', REVISIONS, inKruiseSystem)).status).toBe(201);
    const refused = await patchSet({ spec: { injectionStrategy: { revision: { revisionName: inKruiseSystem.metadata?.name } } } });
    expect(refused.status).toBe(422);
    expect(refused.message).toContain('Cannot find specific ControllerRevision');
    expect((await patchSet({ spec: { containers: [{ ...baseSidecarSet().spec?.containers?.[0], image: TAGS[5] }, baseSidecarSet().spec?.containers?.[1]], injectionStrategy: { revision: { revisionName: name } } } })).status).toBe(200);
    const created = await call('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, pod('pinned-elsewhere'));
    expect(created.status).toBe(201);
    expect(created.object.spec?.containers.find((c) => c.name === 'nginx-sidecar')?.image).toBe(TAGS[0]);
    expect(recorded(created.object)?.controllerRevision).toBe(name);
  });
});
