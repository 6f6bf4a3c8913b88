/**
 * Switching from OpenKruise's SidecarSet to this project and back without
 * restarting a pod (docs/MIGRATION.md), on a real kube-apiserver with the
 * test kubelet. Kruise's side is Kruise's own code (the conformance
 * reference, OpenKruise v1.8.2): its pod webhook injects the pods, its
 * controller pass computes the status and writes the ControllerRevisions,
 * and those are put in the cluster as Kruise would have left them. Then this
 * project's reconciler (the status-sync pass as composed for Lambda, as the
 * functions' least-privilege identity) takes over: the status it computes is
 * the one Kruise wrote, and it writes no pod, no status and no revision
 * (resourceVersions unchanged); the preflight (`migrate check`, GET requests
 * only) agrees that a switch restarts no pod. A later image change rolls the
 * pods in place (same uid). The way back: Kruise's controller pass over
 * the cluster this project ran finds the same status, keeps this project's
 * revisions and writes no pod; with one more image change its pass and this
 * project's plan update the same pods to the same images; and Kruise's pod
 * webhook, given a pod this project injected, does not inject it twice.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startTestKubelet, type TestKubelet } from '../../control-plane/test-kubelet.ts';
import { runMigrate } from '../../functions/migrate/cli.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import { composeStatusSync, type StatusSyncRuntime } from '../../functions/status-sync/compose.ts';
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { kubeMigrationReads } from '../../lib/adapters/kube-migrate.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import type { KubeClient } from '../../lib/adapters/kube-request.ts';
import type { JsonObject, Pod } from '../../lib/kube/types.ts';
import { planRollout } from '../../lib/rollout/plan.ts';
import { podKey } from '../../lib/sidecarset/pod-state.ts';
import { LABEL_SIDECARSET_NAME, type ControllerRevision } from '../../lib/sidecarset/revisions.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { STATUS_SYNC } from '../../lib/status-sync/pass.ts';
import { createPod, isReady, readPod } from '../../testkit/cluster-pods.ts';
import { ensureKruiseReference, startKruiseReference, type KruiseReference } from '../../testkit/conformance/kruise-reference.ts';
import type { ReferenceAnswer, ReferenceRequest } from '../../testkit/conformance/reference-protocol.ts';

const NS = 'takeover';
const SET = 'takeover-log';
const SETS = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
const REVISIONS = '/apis/apps/v1/namespaces/kruise-system/controllerrevisions';
const PODS = ['web-0', 'web-1', 'web-2'];
const NAMESPACE_OBJECT = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'kubernetes.io/metadata.name': NS } } };
const STATUS_FIELDS = ['observedGeneration', 'matchedPods', 'updatedPods', 'readyPods', 'updatedReadyPods', 'latestRevision'] as const;
// A cold build of the reference takes minutes (global setup normally did it already).
const SETUP_TIMEOUT_MS = 30 * 60_000;

let stack: LocalStack;
let kubelet: TestKubelet;
let kruise: KruiseReference;
let reconciler: StatusSyncRuntime;

async function admin<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await stack.cp.request('admin', method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 600)}`);
  return JSON.parse(res.body) as T;
}

async function ask(request: ReferenceRequest): Promise<ReferenceAnswer> {
  const answer = await kruise.ask(request);
  if (answer.error !== undefined) throw new Error(`Kruise's code failed: ${answer.error}`);
  return answer;
}

/** An object as Kruise's fake client takes it: what only a server sets is left out. */
function forKruise<T extends { metadata?: unknown }>(object: T): T {
  const copy = structuredClone(object) as T & { metadata?: JsonObject };
  if (copy.metadata !== undefined) {
    delete copy.metadata.resourceVersion;
    delete copy.metadata.managedFields;
  }
  return copy;
}

const getSet = () => admin<SidecarSet>('GET', `${SETS}/${SET}`);
const listPods = async () => (await admin<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods`)).items.sort((a, b) => podKey(a).localeCompare(podKey(b)));
const listRevisions = async () =>
  (await admin<{ items: ControllerRevision[] }>('GET', `${REVISIONS}?labelSelector=${encodeURIComponent(`${LABEL_SIDECARSET_NAME}=${SET}`)}`)).items.sort((a, b) =>
    (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  );

function statusOf(set: { status?: unknown } | undefined): Record<string, unknown> {
  const status = (set?.status ?? {}) as Record<string, unknown>;
  return Object.fromEntries(STATUS_FIELDS.map((f) => [f, status[f] ?? (f === 'latestRevision' ? '' : 0)]));
}

/** What identifies each pod's object and its last write: a patch or a recreation changes it. */
const versions = (pods: readonly Pod[]) => pods.map((p) => `${podKey(p)} uid=${p.metadata?.uid ?? ''} rv=${p.metadata?.resourceVersion ?? ''}`);
const imagesOf = (pod: Pod) => (pod.spec?.containers ?? []).map((c) => `${c.name}=${c.image ?? ''}`);

/** The set as the API server would store it with `change` (defaulted and hashed by this project's webhook), without storing it. */
async function dryRunUpdate(change: (set: SidecarSet) => void): Promise<SidecarSet> {
  const set = await getSet();
  change(set);
  return admin<SidecarSet>('PUT', `${SETS}/${SET}?dryRun=All`, set);
}

async function updateSet(change: (set: SidecarSet) => void): Promise<SidecarSet> {
  for (let attempt = 1; ; attempt++) {
    const set = await getSet();
    change(set);
    const res = await stack.cp.request('admin', 'PUT', `${SETS}/${SET}`, set);
    if (res.status === 200) return JSON.parse(res.body) as SidecarSet;
    if (res.status !== 409 || attempt === 5) throw new Error(`updating ${SET}: ${res.status} ${res.body.slice(0, 600)}`);
  }
}

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms; last: ${JSON.stringify(value).slice(0, 1500)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Runs the reconciler's pass until the set's status says every pod is updated and ready. */
async function rollUntilDone(): Promise<SidecarSet> {
  return waitFor(
    'the rollout finished',
    async () => {
      const result = await reconciler.runPass();
      expect(result.errors).toEqual([]);
      return getSet();
    },
    (set) => set.status?.observedGeneration === set.metadata?.generation && set.status?.updatedReadyPods === PODS.length && set.status.updatedPods === PODS.length,
  );
}

/**
 * Kruise's controller pass over the cluster as stored, and what it leaves
 * put back in the cluster as Kruise's manager would have written it: the
 * ControllerRevisions it created and the status it computed.
 */
async function kruisePass(set: SidecarSet): Promise<ReferenceAnswer> {
  const existing = await listRevisions();
  const pass = await ask({
    op: 'controller',
    sidecarSet: forKruise(set),
    cluster: { sidecarSets: [forKruise(set)], namespaces: [NAMESPACE_OBJECT], pods: (await listPods()).map(forKruise), controllerRevisions: existing.map(forKruise) },
  });
  expect(pass.passError).toBeUndefined();
  const known = new Set(existing.map((r) => r.metadata?.name));
  for (const revision of pass.revisions ?? []) {
    const metadata = { ...(revision.metadata as JsonObject) };
    if (metadata.namespace !== 'kruise-system' || known.has(metadata.name as string)) continue;
    for (const field of ['resourceVersion', 'uid', 'creationTimestamp', 'managedFields']) Reflect.deleteProperty(metadata, field);
    await admin('POST', REVISIONS, { ...revision, metadata });
  }
  if (JSON.stringify(statusOf(pass.storedSet)) !== JSON.stringify(statusOf(set))) await admin('PUT', `${SETS}/${SET}/status`, { ...set, status: pass.storedSet?.status });
  return pass;
}

/** A client that records the method of every request it sends (a watch is a GET). */
function recordingClient(content: string, methods: string[]): KubeClient {
  const client = kubeConfigClient(parseKubeConfig(content, 'the test control plane'));
  return {
    ...client,
    request: (request) => {
      methods.push(request.method);
      return client.request(request);
    },
    watch: (request, onEvent) => {
      methods.push('GET');
      return client.watch(request, onEvent);
    },
  };
}

describeWithControlPlane("taking over pods and revisions from Kruise's own code, and handing them back, without restarting a pod", () => {
  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    kruise = startKruiseReference(await ensureKruiseReference('1.8'));
    // The webhooks of this project are installed; its reconciler runs only when the test says.
    stack = await startLocalStack();
    kubelet = startTestKubelet(stack.cp, { namespaces: [NS], readyDelayMs: 200 });
    await admin('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    reconciler = await composeStatusSync({ KUBECONFIG_CONTENT: stack.cp.kubeconfig('functions') }, { logger: jsonLogger({ function: STATUS_SYNC }, (line) => stack.logs.push(line)) });
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    // Each is undefined when beforeAll failed before starting it.
    await (kruise as KruiseReference | undefined)?.close();
    await (kubelet as TestKubelet | undefined)?.stop();
    await (stack as LocalStack | undefined)?.stop();
  });

  let kruiseStatus: Record<string, unknown>;
  let takenOver: Pod[];

  it('pods injected by Kruise and the status and revisions its controller wrote are taken over: same status, nothing written, no pod patched', async () => {
    await admin('POST', SETS, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: SET },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        namespace: NS,
        containers: [{ name: 'log', image: 'busybox:1.36', command: ['sleep', '1000000'], volumeMounts: [{ name: 'logs', mountPath: '/var/log/app' }] }],
        volumes: [{ name: 'logs', emptyDir: {} }],
      },
    });
    // Kruise's controller sees the new set first: it registers the set's first revision and writes the status.
    await kruisePass(await getSet());
    const set = await getSet();
    expect(set.status?.latestRevision).toMatch(new RegExp(`^${SET}-`));

    // Kruise's pod webhook injects; the API server then calls this project's webhook with Kruise's result.
    for (const name of PODS) {
      const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '1000000'] }] } };
      const injected = (await ask({ op: 'inject', operation: 'CREATE', namespace: NS, object: pod, cluster: { sidecarSets: [forKruise(set)], namespaces: [NAMESPACE_OBJECT] } })).result as Pod;
      expect(imagesOf(injected)).toEqual(['log=busybox:1.36', 'app=busybox:1.36']);
      const stored = await createPod(stack.cp, injected);
      // Not injected twice: this project's webhook found Kruise's sidecar and bookkeeping and changed nothing.
      expect(imagesOf(stored)).toEqual(imagesOf(injected));
      expect(stored.spec?.volumes?.map((v) => v.name).filter((v) => v === 'logs')).toEqual(['logs']);
      for (const key of ['kruise.io/sidecarset-hash', 'kruise.io/sidecarset-hash-without-image', 'kruise.io/sidecarset-injected-list']) {
        expect(stored.metadata?.annotations?.[key]).toBe(injected.metadata?.annotations?.[key]);
      }
    }
    for (const name of PODS) await waitFor(`pod ${name} ready`, () => readPod(stack.cp, NS, name), isReady);

    // Kruise's controller pass over the cluster as it is now: the status it writes.
    const pass = await kruisePass(await getSet());
    expect(pass.writes ?? []).toEqual([]);
    kruiseStatus = statusOf(pass.storedSet);
    expect(kruiseStatus).toMatchObject({ matchedPods: 3, updatedPods: 3, readyPods: 3, updatedReadyPods: 3, latestRevision: set.status?.latestRevision });

    const before = { pods: versions(await listPods()), set: (await getSet()).metadata?.resourceVersion, revisions: (await listRevisions()).map((r) => `${r.metadata?.name ?? ''} rv=${r.metadata?.resourceVersion ?? ''}`) };

    // This project's reconciler takes over: a few passes, as the schedule would run them.
    for (let i = 0; i < 3; i++) expect((await reconciler.runPass()).errors).toEqual([]);

    const after = await getSet();
    expect(statusOf(after)).toEqual(kruiseStatus);
    expect({
      pods: versions(await listPods()),
      set: after.metadata?.resourceVersion,
      revisions: (await listRevisions()).map((r) => `${r.metadata?.name ?? ''} rv=${r.metadata?.resourceVersion ?? ''}`),
    }).toEqual(before);
    takenOver = await listPods();
  });

  it('the preflight, with GET requests only, finds nothing that would restart a pod', async () => {
    const methods: string[] = [];
    const out: string[] = [];
    const err: string[] = [];
    const client = recordingClient(stack.cp.kubeconfig('admin'), methods);
    const code = await runMigrate(['check'], { out: (t) => out.push(t), err: (t) => err.push(t) }, () =>
      Promise.resolve({ reads: kubeMigrationReads(client), revisionNamespace: 'kruise-system', server: stack.cp.url }),
    );
    expect(err.join('')).toBe('');
    const report = out.join('');
    expect(report).toContain('A switch now would restart no pod');
    expect(report).toContain(`${SET}: matched 3, updated 3, ready 3`);
    expect(report).toContain('ControllerRevisions of SidecarSets: 1 in kruise-system');
    expect(report).toContain('READY');
    expect(code).toBe(0);
    expect(methods.length).toBeGreaterThan(5);
    expect(new Set(methods)).toEqual(new Set(['GET']));
    // And nothing changed meanwhile.
    expect(versions(await listPods())).toEqual(versions(takenOver));
  });

  it('a later image change rolls the taken-over pods in place: the same pods, only the sidecar image changed', async () => {
    await updateSet((s) => {
      const container = s.spec?.containers?.[0];
      if (container !== undefined) container.image = 'busybox:1.37';
    });
    const done = await rollUntilDone();
    expect(done.status?.latestRevision).not.toBe(kruiseStatus.latestRevision);
    const pods = await listPods();
    expect(pods.map((p) => p.metadata?.uid)).toEqual(takenOver.map((p) => p.metadata?.uid));
    for (const pod of pods) expect(imagesOf(pod)).toEqual(['log=busybox:1.37', 'app=busybox:1.36']);
  }, 180_000);

  it("the way back: Kruise's controller agrees with the status, keeps the revisions and writes no pod; with a new image both update the same pods the same way", async () => {
    const set = await getSet();
    const pods = await listPods();
    const revisions = await listRevisions();
    expect(revisions).toHaveLength(2);
    const cluster = { sidecarSets: [forKruise(set)], namespaces: [NAMESPACE_OBJECT], pods: pods.map(forKruise), controllerRevisions: revisions.map(forKruise) };
    const pass = await ask({ op: 'controller', sidecarSet: forKruise(set), cluster });
    expect(pass.passError).toBeUndefined();
    expect(statusOf(pass.storedSet)).toEqual(statusOf(set));
    expect(pass.writes ?? []).toEqual([]);
    expect((pass.revisions ?? []).map((r) => (r.metadata as JsonObject).name).sort()).toEqual(revisions.map((r) => r.metadata?.name));

    // One more image change, not stored: what each controller would do with it.
    const next = await dryRunUpdate((s) => {
      const container = s.spec?.containers?.[0];
      if (container !== undefined) container.image = 'busybox:1.38';
    });
    const kruisePass = await ask({ op: 'controller', sidecarSet: forKruise(next), cluster: { ...cluster, sidecarSets: [forKruise(next)] } });
    const kruiseUpdates = (kruisePass.writes ?? []).filter((w) => w.kind === 'update').map((w) => `${podKey(w.pod as Pod)} ${imagesOf(w.pod as Pod).join(' ')}`);
    const plan = planRollout(next, pods, new Map());
    const ourUpdates = plan.updates.map((u) => `${podKey(u.pod)} ${imagesOf({ ...u.pod, spec: { ...u.pod.spec, containers: (u.pod.spec?.containers ?? []).map((c) => ({ ...c, image: u.images[c.name] ?? c.image })) } }).join(' ')}`);
    expect(kruiseUpdates).toHaveLength(1);
    expect(ourUpdates).toEqual(kruiseUpdates);
  });

  it("Kruise's pod webhook, given a pod this project injected, does not inject it twice", async () => {
    const set = await getSet();
    const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-ours', namespace: NS, labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '1000000'] }] } };
    const ours = await createPod(stack.cp, pod);
    expect(imagesOf(ours)).toEqual(['log=busybox:1.37', 'app=busybox:1.36']);
    const again = await ask({ op: 'inject', operation: 'CREATE', namespace: NS, object: forKruise({ ...ours, status: {} }), cluster: { sidecarSets: [forKruise(set)], namespaces: [NAMESPACE_OBJECT] } });
    const result = (again.result ?? forKruise(ours)) as Pod;
    expect(imagesOf(result)).toEqual(imagesOf(ours));
    expect(result.spec?.volumes?.map((v) => v.name).filter((v) => v === 'logs')).toEqual(['logs']);
    expect(JSON.parse(result.metadata?.annotations?.['kruise.io/sidecarset-hash'] ?? '{}')[SET].hash).toBe(JSON.parse(ours.metadata?.annotations?.['kruise.io/sidecarset-hash'] ?? '{}')[SET].hash);
  });
});
