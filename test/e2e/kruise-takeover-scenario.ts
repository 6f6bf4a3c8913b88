/**
 * Switching from OpenKruise's SidecarSet to this project and back without
 * restarting a pod (docs/MIGRATION.md), on a real kube-apiserver with the
 * test kubelet, for one Kruise release (1.8 or 1.9): each
 * kruise-takeover*.integration.test.ts runs {@link describeKruiseTakeover}
 * for its release. Kruise's side is Kruise's own code (the conformance
 * reference of that release): its webhooks answer the API server
 * (kruise-webhooks.ts), its controller's reconcile computes the status and writes
 * the ControllerRevisions, and those are put in the cluster as Kruise's
 * manager would have left them; a Deployment stands for the manager, so the
 * preflight reads its version and whether it runs.
 *
 * The cluster starts as that release holds it: the set written in the
 * release's version as its docs write it (1.8: v1alpha1 with `namespace`
 * and the custom-version label; 1.9: v1beta1, stored as v1beta1, with
 * `namespaceSelector` and `customVersion`), defaulted and validated by
 * Kruise's webhooks, pods injected by Kruise's pod webhook, revisions owned
 * through the release's own apiVersion. This project's CRD is installed
 * (every control plane here converts through this project's webhook; on 1.9
 * that is step 3, on 1.8 step 3 after the rewrite), its webhooks not yet.
 * Then the procedure, checked with the preflight (`migrate check`, GET
 * requests only) at each step: status-sync takes over writing nothing,
 * step 4 adds this project's webhooks (a server dry run injects one copy),
 * step 5 removes Kruise's entries (from `webhooks` alone they return from
 * the template), step 6 stops the manager, step 7 finds no pod changed.
 * Later an image change rolls the pods in place. The way back: Kruise's
 * controller's reconcile over the cluster this project ran finds the same status,
 * keeps this project's revisions and writes no pod; with one more image
 * change it and this project's plan update the same pod the same way;
 * Kruise's pod webhook does not inject a pod this project injected twice;
 * and with Kruise's entries back and this project's removed, Kruise's
 * webhook alone injects the current sidecar once.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startTestKubelet, type TestKubelet } from '../../control-plane/test-kubelet.ts';
import { runMigrate } from '../../functions/migrate/cli.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import { composeStatusSync, type StatusSyncRuntime } from '../../functions/status-sync/compose.ts';
import { internalSidecarSet } from '../../lib/conversion/internal-model.ts';
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { kubeFenceCluster } from '../../lib/adapters/kube-fence-backfill.ts';
import { kubeMigrationReads } from '../../lib/adapters/kube-migrate.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import type { KubeClient } from '../../lib/adapters/kube-request.ts';
import type { JsonObject, Pod } from '../../lib/kube/types.ts';
import { KRUISE_MANAGER_DEPLOYMENT, KRUISE_NAMESPACE } from '../../lib/migrate/kruise-manager.ts';
import { KRUISE_MUTATING_CONFIGURATION, KRUISE_VALIDATING_CONFIGURATION, OUR_CONFIGURATION } from '../../lib/migrate/webhook-entries.ts';
import { planRollout } from '../../lib/rollout/plan.ts';
import { podKey } from '../../lib/sidecarset/pod-state.ts';
import { ANNOTATION_FENCE_CONTAINERS } from '../../lib/sidecarset/rollout-fence.ts';
import { LABEL_CUSTOM_VERSION, LABEL_SIDECARSET_NAME, type ControllerRevision } from '../../lib/sidecarset/revisions.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { PROMETHEUS_NAMES } from '../../lib/metrics/registry-recorder.ts';
import { STATUS_SYNC } from '../../lib/status-sync/resync.ts';
import { isReady, readPod } from '../../testkit/cluster-pods.ts';
import { ensureKruiseReference, kruiseReferenceVersion, startKruiseReference, type KruiseLine, type KruiseReference } from '../../testkit/conformance/kruise-reference.ts';
import type { ReferenceAnswer, ReferenceRequest } from '../../testkit/conformance/reference-protocol.ts';
import { forKruise, startKruiseWebhooks, type KruiseWebhooks } from './kruise-webhooks.ts';

const NS = 'takeover';
const SET = 'takeover-log';
const REVISIONS = `/apis/apps/v1/namespaces/${KRUISE_NAMESPACE}/controllerrevisions`;
const PODS = ['web-0', 'web-1', 'web-2'];
const STATUS_FIELDS = ['observedGeneration', 'matchedPods', 'updatedPods', 'readyPods', 'updatedReadyPods', 'latestRevision'] as const;
// A cold build of the reference takes minutes (global setup normally did it already).
const SETUP_TIMEOUT_MS = 30 * 60_000;

/** What differs between the releases: the version the set is written and read in, and how its docs write it. */
interface Release {
  /** The SidecarSet version Kruise's code of this release reads and writes (its revisions' owner apiVersion too). */
  version: 'v1alpha1' | 'v1beta1';
  /** The set as the release's docs write it, scoped to one namespace, with a custom version. */
  set(customVersion: string): JsonObject;
  /** Sets the set's custom version, where the release keeps it. */
  setCustomVersion(set: JsonObject, customVersion: string): void;
}

const SIDECAR = { name: 'log', image: 'busybox:1.36', command: ['sleep', '1000000'], volumeMounts: [{ name: 'logs', mountPath: '/var/log/app' }] };

const RELEASES: Readonly<Record<KruiseLine, Release>> = {
  '1.8': {
    version: 'v1alpha1',
    set: (customVersion) => ({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: SET, labels: { [LABEL_CUSTOM_VERSION]: customVersion } },
      spec: { selector: { matchLabels: { app: 'web' } }, namespace: NS, containers: [SIDECAR], volumes: [{ name: 'logs', emptyDir: {} }] },
    }),
    setCustomVersion: (set, customVersion) => {
      const metadata = set.metadata as { labels?: Record<string, string> };
      metadata.labels = { ...metadata.labels, [LABEL_CUSTOM_VERSION]: customVersion };
    },
  },
  '1.9': {
    version: 'v1beta1',
    set: (customVersion) => ({
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'SidecarSet',
      metadata: { name: SET },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
        customVersion,
        containers: [SIDECAR],
        volumes: [{ name: 'logs', emptyDir: {} }],
      },
    }),
    setCustomVersion: (set, customVersion) => {
      (set.spec as JsonObject).customVersion = customVersion;
    },
  },
};

/** The pod a user creates: the app container alone. */
const appPod = (name: string): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '1000000'] }] } });

const versions = (pods: readonly Pod[]) => pods.map((p) => `${podKey(p)} uid=${p.metadata?.uid ?? ''} rv=${p.metadata?.resourceVersion ?? ''}`);
const imagesOf = (pod: Pod) => (pod.spec?.containers ?? []).map((c) => `${c.name}=${c.image ?? ''}`);
const volumeNames = (pod: Pod) => (pod.spec?.volumes ?? []).map((v) => v.name);
const setHash = (pod: Pod) => (JSON.parse(pod.metadata?.annotations?.['kruise.io/sidecarset-hash'] ?? '{}') as Record<string, { hash?: string } | undefined>)[SET]?.hash;

function statusOf(set: { status?: unknown } | undefined): Record<string, unknown> {
  const status = (set?.status ?? {}) as Record<string, unknown>;
  return Object.fromEntries(STATUS_FIELDS.map((f) => [f, status[f] ?? (f === 'latestRevision' ? '' : 0)]));
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

/** What a webhook configuration is created from again: the object without what the server set. */
function recreatable(configuration: JsonObject): JsonObject {
  const metadata = configuration.metadata as JsonObject;
  return { ...configuration, metadata: { name: metadata.name, ...(metadata.labels ? { labels: metadata.labels } : {}), ...(metadata.annotations ? { annotations: metadata.annotations } : {}) } };
}

/** Registers the takeover suite for one Kruise release. */
export function describeKruiseTakeover(line: KruiseLine): void {
  const release = RELEASES[line];
  const SETS = `/apis/apps.kruise.io/${release.version}/sidecarsets`;

  describeWithControlPlane(`taking over pods and revisions from Kruise ${line}'s own code, step by step, and handing them back, without restarting a pod`, () => {
    let stack: LocalStack;
    let kubelet: TestKubelet;
    let kruise: KruiseReference;
    let kruiseWebhooks: KruiseWebhooks;
    let reconciler: StatusSyncRuntime;
    let kruiseVersion: string;
    /** This project's webhook configurations, taken out until step 4 puts them in. */
    let ours: { mutating: JsonObject; validating: JsonObject };

    async function request(method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> {
      return stack.cp.request('admin', method, path, body, method === 'PATCH' ? 'application/merge-patch+json' : undefined);
    }

    async function admin<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await request(method, path, body);
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 600)}`);
      return JSON.parse(res.body) as T;
    }

    async function ask(asked: ReferenceRequest): Promise<ReferenceAnswer> {
      const answer = await kruise.ask(asked);
      if (answer.error !== undefined) throw new Error(`Kruise's code failed: ${answer.error}`);
      return answer;
    }

    const getSet = () => admin<SidecarSet>('GET', `${SETS}/${SET}`);
    const listPods = async () => (await admin<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods`)).items.sort((a, b) => podKey(a).localeCompare(podKey(b)));
    const listNamespaces = async () => (await admin<{ items: JsonObject[] }>('GET', '/api/v1/namespaces')).items.map(forKruise);
    const listRevisions = async () =>
      (await admin<{ items: ControllerRevision[] }>('GET', `${REVISIONS}?labelSelector=${encodeURIComponent(`${LABEL_SIDECARSET_NAME}=${SET}`)}`)).items.sort((a, b) =>
        (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
      );
    const revisionVersions = async () => (await listRevisions()).map((r) => `${r.metadata?.name ?? ''} rv=${r.metadata?.resourceVersion ?? ''}`);

    /** Pod admissions this project's pod-inject answered (the local server's counter). */
    const ourInjections = () =>
      stack.metrics
        .render()
        .split('\n')
        .filter((l) => l.startsWith(`${PROMETHEUS_NAMES.reviews}{function="pod-inject"`))
        .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

    /**
     * A pod as the API server would store it now, through every mutating
     * webhook installed (`kubectl run --dry-run=server`), with how many times
     * Kruise's pod webhook and this project's answered for it.
     */
    async function dryRunPod(name: string): Promise<{ pod: Pod; kruise: number; ours: number }> {
      const kruiseBefore = kruiseWebhooks.calls.inject;
      const oursBefore = ourInjections();
      const pod = await admin<Pod>('POST', `/api/v1/namespaces/${NS}/pods?dryRun=All`, appPod(name));
      return { pod, kruise: kruiseWebhooks.calls.inject - kruiseBefore, ours: ourInjections() - oursBefore };
    }

    async function updateSet(change: (set: JsonObject) => void, dryRun = false): Promise<SidecarSet> {
      for (let attempt = 1; ; attempt++) {
        const set = (await getSet()) as JsonObject;
        change(set);
        const res = await request('PUT', `${SETS}/${SET}${dryRun ? '?dryRun=All' : ''}`, set);
        if (res.status === 200) return JSON.parse(res.body) as SidecarSet;
        if (res.status !== 409 || attempt === 5) throw new Error(`updating ${SET}: ${res.status} ${res.body.slice(0, 600)}`);
      }
    }

    /** A new sidecar image with a new custom version, as a release is rolled. */
    const newRelease = (image: string, customVersion: string) => (set: JsonObject) => {
      const container = ((set.spec as JsonObject).containers as JsonObject[])[0];
      if (container !== undefined) container.image = image;
      release.setCustomVersion(set, customVersion);
    };

    async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 90_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await read();
        if (done(value)) return value;
        if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms; last: ${JSON.stringify(value).slice(0, 1500)}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }

    /**
     * Kruise's controller reconciling the set over the cluster as stored, and what it
     * leaves put back in the cluster as Kruise's manager would have written
     * it: the ControllerRevisions it created and the status it computed.
     */
    async function kruiseReconcile(set: SidecarSet): Promise<ReferenceAnswer> {
      const existing = await listRevisions();
      const reconciled = await ask({
        op: 'controller',
        sidecarSet: forKruise(set),
        cluster: { sidecarSets: [forKruise(set)], namespaces: await listNamespaces(), pods: (await listPods()).map(forKruise), controllerRevisions: existing.map(forKruise) },
      });
      expect(reconciled.passError).toBeUndefined();
      const known = new Set(existing.map((r) => r.metadata?.name));
      for (const revision of reconciled.revisions ?? []) {
        const metadata = { ...(revision.metadata as JsonObject) };
        if (metadata.namespace !== KRUISE_NAMESPACE || known.has(metadata.name as string)) continue;
        for (const field of ['resourceVersion', 'uid', 'creationTimestamp', 'managedFields']) Reflect.deleteProperty(metadata, field);
        await admin('POST', REVISIONS, { ...revision, metadata });
      }
      if (JSON.stringify(statusOf(reconciled.storedSet)) !== JSON.stringify(statusOf(set))) await admin('PUT', `${SETS}/${SET}/status`, { ...set, status: reconciled.storedSet?.status });
      return reconciled;
    }

    /** The preflight as an operator runs it; every request it sends must be a GET. */
    async function preflight(): Promise<{ code: number; report: string }> {
      const methods: string[] = [];
      const out: string[] = [];
      const err: string[] = [];
      const client = recordingClient(stack.cp.kubeconfig('admin'), methods);
      const code = await runMigrate(['check'], { out: (t) => out.push(t), err: (t) => err.push(t) }, () =>
        Promise.resolve({ reads: kubeMigrationReads(client), revisionNamespace: KRUISE_NAMESPACE, server: stack.cp.url }),
      );
      expect(err.join('')).toBe('');
      expect(methods.length).toBeGreaterThan(5);
      expect(new Set(methods)).toEqual(new Set(['GET']));
      return { code, report: out.join('') };
    }

    /** Removes Kruise's SidecarSet and pod entries from a configuration's `webhooks`, and from its `template` annotation too when asked. */
    async function removeKruiseEntries(kind: 'mutating' | 'validating', fromTemplate: boolean): Promise<void> {
      const path = `/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations/${kind === 'mutating' ? KRUISE_MUTATING_CONFIGURATION : KRUISE_VALIDATING_CONFIGURATION}`;
      const doomed = new Set(['msidecarset.kb.io', 'mpod.kb.io', 'vsidecarset.kb.io']);
      const configuration = await admin<JsonObject>('GET', path);
      const keep = (entries: JsonObject[]) => entries.filter((e) => !doomed.has(e.name as string));
      configuration.webhooks = keep((configuration.webhooks as JsonObject[] | undefined) ?? []);
      const annotations = (configuration.metadata as { annotations: Record<string, string> }).annotations;
      if (fromTemplate) annotations.template = JSON.stringify(keep(JSON.parse(annotations.template ?? '[]') as JsonObject[]));
      await admin('PUT', path, configuration);
    }

    beforeAll(async () => {
      await ensureControlPlaneBinaries();
      kruise = startKruiseReference(await ensureKruiseReference(line));
      kruiseVersion = await kruiseReferenceVersion(line);
      // The webhooks and the CRD of this project are installed; its reconciler runs only when the test says.
      stack = await startLocalStack();
      kubelet = startTestKubelet(stack.cp, { namespaces: [NS], readyDelayMs: 200, pullDelayMs: 0 });
      await admin('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      reconciler = await composeStatusSync({ KUBECONFIG_CONTENT: stack.cp.kubeconfig('functions') }, { logger: jsonLogger({ function: STATUS_SYNC }, (line) => stack.logs.push(line)) });
      // Before step 4 only Kruise's webhooks answer: this project's are taken out, to be put back in step 4.
      ours = {
        mutating: recreatable(await admin('GET', `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${OUR_CONFIGURATION}`)),
        validating: recreatable(await admin('GET', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${OUR_CONFIGURATION}`)),
      };
      await admin('DELETE', `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${OUR_CONFIGURATION}`);
      await admin('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${OUR_CONFIGURATION}`);
      // Kruise's manager: no pod runs it here (no controller-manager), but the preflight reads its version and replicas.
      await admin('POST', `/apis/apps/v1/namespaces/${KRUISE_NAMESPACE}/deployments`, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: KRUISE_MANAGER_DEPLOYMENT, namespace: KRUISE_NAMESPACE },
        spec: {
          replicas: 2,
          selector: { matchLabels: { 'control-plane': 'controller-manager' } },
          template: {
            metadata: { labels: { 'control-plane': 'controller-manager' } },
            spec: { containers: [{ name: 'manager', image: `openkruise/kruise-manager:${kruiseVersion}`, args: ['--enable-leader-election', '--metrics-addr=127.0.0.1:8080'] }] },
          },
        },
      });
      kruiseWebhooks = await startKruiseWebhooks(stack.cp, kruise, SETS);
      const kruiseConfigurations = kruiseWebhooks.configurations();
      await admin('POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', kruiseConfigurations.mutating);
      await admin('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', kruiseConfigurations.validating);
    }, SETUP_TIMEOUT_MS);

    afterAll(async () => {
      // Each is undefined when beforeAll failed before starting it.
      await (kruiseWebhooks as KruiseWebhooks | undefined)?.close();
      await (kruise as KruiseReference | undefined)?.close();
      await (kubelet as TestKubelet | undefined)?.stop();
      await (stack as LocalStack | undefined)?.stop();
    });

    let kruiseStatus: Record<string, unknown>;
    /** The pods, set and revisions as Kruise left them. */
    let kruiseLeft: { pods: string[]; set: string | undefined; revisions: string[] };
    let takenOver: Pod[];

    it(`a Kruise ${line} cluster: Kruise's webhooks write the set and inject the pods, its controller writes the revision and the status; the preflight names step 4`, async () => {
      await admin('POST', SETS, release.set('v1'));
      expect(kruiseWebhooks.calls.default).toBeGreaterThan(0);
      expect(kruiseWebhooks.calls.validate).toBeGreaterThan(0);
      // Kruise's controller sees the new set first: it registers the set's first revision and writes the status.
      await kruiseReconcile(await getSet());
      const set = await getSet();
      expect(set.apiVersion).toBe(`apps.kruise.io/${release.version}`);
      expect(set.status?.latestRevision).toMatch(new RegExp(`^${SET}-`));
      const [revision] = await listRevisions();
      // The revision as this release's controller writes it: owned through the version it reads, labelled with the custom version.
      expect(revision?.metadata?.ownerReferences).toMatchObject([{ apiVersion: `apps.kruise.io/${release.version}`, kind: 'SidecarSet', name: SET, controller: true }]);
      expect(revision?.metadata?.labels?.[LABEL_CUSTOM_VERSION]).toBe('v1');

      // Kruise's pod webhook injects (the API server calls it; this project's are not installed yet).
      const injectCalls = kruiseWebhooks.calls.inject;
      for (const name of PODS) {
        const stored = await admin<Pod>('POST', `/api/v1/namespaces/${NS}/pods`, appPod(name));
        expect(imagesOf(stored)).toEqual(['log=busybox:1.36', 'app=busybox:1.36']);
        expect(volumeNames(stored)).toEqual(['logs']);
        expect(setHash(stored)).toBeTruthy();
      }
      expect(kruiseWebhooks.calls.inject - injectCalls).toBe(PODS.length);
      for (const name of PODS) await waitFor(`pod ${name} ready`, () => readPod(stack.cp, NS, name), isReady);

      // Kruise's controller reconciling the set over the cluster as it is now: the status it writes.
      const reconciled = await kruiseReconcile(await getSet());
      expect(reconciled.writes ?? []).toEqual([]);
      kruiseStatus = statusOf(reconciled.storedSet);
      expect(kruiseStatus).toMatchObject({ matchedPods: 3, updatedPods: 3, readyPods: 3, updatedReadyPods: 3, latestRevision: set.status?.latestRevision });
      kruiseLeft = { pods: versions(await listPods()), set: (await getSet()).metadata?.resourceVersion, revisions: await revisionVersions() };

      // Step 1: the preflight finds Kruise, its active entries, this project's CRD (step 3 done) without its webhooks.
      const { code, report } = await preflight();
      expect(report).toContain(`Kruise: ${kruiseVersion} (the ${line} line), image openkruise/kruise-manager:${kruiseVersion}`);
      expect(report).toContain('SidecarSet controller: active');
      for (const entry of [`${KRUISE_MUTATING_CONFIGURATION} mpod.kb.io (pod-inject): active`, `${KRUISE_MUTATING_CONFIGURATION} msidecarset.kb.io (sidecarset): active`, `${KRUISE_VALIDATING_CONFIGURATION} vsidecarset.kb.io (sidecarset): active`]) {
        expect(report).toContain(entry);
      }
      expect(report).not.toContain('mcloneset');
      expect(report).toContain("This project's webhooks: not installed");
      expect(report).toContain("SidecarSet CRD: this project's; serves v1alpha1, v1beta1, stores v1beta1; storedVersions v1beta1");
      expect(report).toContain(`${SET}: matched 3, updated 3, ready 3`);
      expect(report).toContain(`latestRevision ${String(kruiseStatus.latestRevision)}; revisions 1 in ${KRUISE_NAMESPACE}; a reconcile now updates 0 pods and flips 0`);
      expect(report).toContain('A switch now would restart no pod');
      expect(report).not.toContain('note:');
      expect(report).toContain('READY');
      expect(report).toContain('Next: step 4 of docs/MIGRATION.md');
      expect(code).toBe(0);
    });

    it("this project's status-sync, running beside Kruise's controller from step 3, finds the status Kruise wrote and writes nothing", async () => {
      for (let i = 0; i < 3; i++) expect((await reconciler.resync()).errors).toEqual([]);
      const after = await getSet();
      expect(statusOf(after)).toEqual(kruiseStatus);
      expect({ pods: versions(await listPods()), set: after.metadata?.resourceVersion, revisions: await revisionVersions() }).toEqual(kruiseLeft);
    });

    it("step 4: with this project's webhooks after Kruise's, a server dry run gets one copy of each sidecar, as Kruise injected it; the preflight names step 5", async () => {
      await admin('POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', ours.mutating);
      await admin('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', ours.validating);
      const kruiseAlone = (await ask({ op: 'inject', operation: 'CREATE', namespace: NS, object: appPod('probe'), cluster: { sidecarSets: [forKruise(await getSet())], namespaces: await listNamespaces() } })).result as Pod;
      // The API server calls a new configuration once its informer saw it: dry runs until both webhooks answered one.
      const { pod: probe } = await waitFor('a dry run through both webhooks', () => dryRunPod('probe'), (r) => r.kruise === 1 && r.ours === 1, 30_000);
      expect(imagesOf(probe)).toEqual(imagesOf(kruiseAlone));
      expect(imagesOf(probe)).toEqual(['log=busybox:1.36', 'app=busybox:1.36']);
      expect(volumeNames(probe)).toEqual(['logs']);
      for (const key of ['kruise.io/sidecarset-injected-list']) expect(probe.metadata?.annotations?.[key]).toBe(kruiseAlone.metadata?.annotations?.[key]);
      expect(setHash(probe)).toBe(setHash(kruiseAlone));

      const { code, report } = await preflight();
      expect(report).toContain("This project's webhooks: sidecarset-default, sidecarset-validate, pod-inject");
      expect(report).toContain('Next: step 5 of docs/MIGRATION.md');
      expect(report).toContain('mpod.kb.io, msidecarset.kb.io, vsidecarset.kb.io');
      expect(code).toBe(0);
    });

    it("step 5: Kruise's entries removed from webhooks alone return from the template (the preflight says so); removed from the template too, the preflight names step 6 and a dry run still injects once", async () => {
      await removeKruiseEntries('mutating', false);
      await removeKruiseEntries('validating', false);
      const halfway = await preflight();
      expect(halfway.report).toContain(`${KRUISE_MUTATING_CONFIGURATION} mpod.kb.io (pod-inject): removed, but the manager puts it back from the template within a minute`);
      expect(halfway.report).toContain('Next: step 5 of docs/MIGRATION.md');
      expect(halfway.report).toContain('mpod.kb.io (returns from the template)');

      await removeKruiseEntries('mutating', true);
      await removeKruiseEntries('validating', true);
      const { code, report } = await preflight();
      expect(report).toContain('no SidecarSet or pod-injection entry in its webhook configurations');
      expect(report).toContain('Next: step 6 of docs/MIGRATION.md');
      expect(code).toBe(0);
      // Kruise's other entries stay.
      const mutating = await admin<JsonObject>('GET', `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${KRUISE_MUTATING_CONFIGURATION}`);
      expect((mutating.webhooks as JsonObject[]).map((e) => e.name)).toEqual(['mcloneset.kb.io']);

      // Only this project's webhook injects now (once the API server saw the change), the same way Kruise did.
      const probe = await waitFor('a dry run through this project alone', () => dryRunPod('probe'), (r) => r.kruise === 0 && r.ours === 1, 30_000);
      expect(imagesOf(probe.pod)).toEqual(['log=busybox:1.36', 'app=busybox:1.36']);
      expect(volumeNames(probe.pod)).toEqual(['logs']);
      const kruiseInjected = (await listPods())[0];
      expect(setHash(probe.pod)).toBe(kruiseInjected === undefined ? 'no pod' : setHash(kruiseInjected));
    });

    it("steps 6 and 7: with Kruise's manager stopped the preflight is READY at step 7, and no pod, status or revision changed since Kruise left them", async () => {
      await admin('PATCH', `/apis/apps/v1/namespaces/${KRUISE_NAMESPACE}/deployments/${KRUISE_MANAGER_DEPLOYMENT}`, { spec: { replicas: 0 } });
      const { code, report } = await preflight();
      expect(report).toContain('SidecarSet controller: stopped');
      expect(report).toContain('A switch now would restart no pod');
      expect(report).toContain('READY');
      expect(report).toContain('Next: step 7 of docs/MIGRATION.md');
      expect(code).toBe(0);
      for (let i = 0; i < 2; i++) expect((await reconciler.resync()).errors).toEqual([]);
      const after = await getSet();
      expect(statusOf(after)).toEqual(kruiseStatus);
      expect({ pods: versions(await listPods()), set: after.metadata?.resourceVersion, revisions: await revisionVersions() }).toEqual(kruiseLeft);
      // Step 7's fence (docs/MIGRATION.md): Kruise's pods carry no rollout fence, so the pod policy would let the
      // reconciler re-image none of them; an administrator records it with `npm run -s migrate -- fence`.
      const out: string[] = [];
      const err: string[] = [];
      const fenceCode = await runMigrate(['fence', '-n', NS], { out: (t) => out.push(t), err: (t) => err.push(t) }, () => {
        const client = kubeConfigClient(parseKubeConfig(stack.cp.kubeconfig('admin'), 'admin kubeconfig'));
        return Promise.resolve({ reads: kubeMigrationReads(client), revisionNamespace: KRUISE_NAMESPACE, server: stack.cp.url, fence: kubeFenceCluster(client, KRUISE_NAMESPACE) });
      });
      expect(err.join('')).toBe('');
      expect(out.join('')).toContain(`${PODS.length} pod(s) carry kruise.io/sidecarset-hash: ${PODS.length} fenced, 0 already fenced, 0 skipped, 0 failed`);
      expect(fenceCode).toBe(0);
      takenOver = await listPods();
      for (const pod of takenOver) expect(pod.metadata?.annotations?.[ANNOTATION_FENCE_CONTAINERS]).toBe('log');
    });

    it('a later image change rolls the taken-over pods in place: the same pods, only the sidecar image changed', async () => {
      await updateSet(newRelease('busybox:1.37', 'v2'));
      const done = await waitFor(
        'the rollout finished',
        async () => {
          const result = await reconciler.resync();
          expect(result.errors).toEqual([]);
          return getSet();
        },
        (set) => set.status?.observedGeneration === set.metadata?.generation && set.status?.updatedReadyPods === PODS.length && set.status.updatedPods === PODS.length,
      );
      expect(done.status?.latestRevision).not.toBe(kruiseStatus.latestRevision);
      const pods = await listPods();
      expect(pods.map((p) => p.metadata?.uid)).toEqual(takenOver.map((p) => p.metadata?.uid));
      for (const pod of pods) expect(imagesOf(pod)).toEqual(['log=busybox:1.37', 'app=busybox:1.36']);
      // The new revision carries the new custom version, as Kruise labels it.
      const latest = (await listRevisions()).find((r) => r.metadata?.name === done.status?.latestRevision);
      expect(latest?.metadata?.labels?.[LABEL_CUSTOM_VERSION]).toBe('v2');
    }, 180_000);

    it("the way back: Kruise's controller agrees with the status, keeps the revisions and writes no pod; with a new image both update the same pods the same way", async () => {
      const set = await getSet();
      const pods = await listPods();
      const revisions = await listRevisions();
      expect(revisions).toHaveLength(2);
      const namespaces = await listNamespaces();
      const cluster = { sidecarSets: [forKruise(set)], namespaces, pods: pods.map(forKruise), controllerRevisions: revisions.map(forKruise) };
      const reconciled = await ask({ op: 'controller', sidecarSet: forKruise(set), cluster });
      expect(reconciled.passError).toBeUndefined();
      expect(statusOf(reconciled.storedSet)).toEqual(statusOf(set));
      expect(reconciled.writes ?? []).toEqual([]);
      const labelled = (rs: readonly (JsonObject | ControllerRevision)[]) =>
        rs.map((r) => {
          const metadata = r.metadata as { name?: string; labels?: Record<string, string> };
          return `${metadata.name ?? ''} ${metadata.labels?.[LABEL_CUSTOM_VERSION] ?? ''}`;
        }).sort();
      expect(labelled(reconciled.revisions ?? [])).toEqual(labelled(revisions));

      // One more release, not stored: what each controller would do with it.
      const next = await updateSet(newRelease('busybox:1.38', 'v3'), true);
      const kruiseNext = await ask({ op: 'controller', sidecarSet: forKruise(next), cluster: { ...cluster, sidecarSets: [forKruise(next)] } });
      const kruiseUpdates = (kruiseNext.writes ?? []).filter((w) => w.kind === 'update').map((w) => `${podKey(w.pod as Pod)} ${imagesOf(w.pod as Pod).join(' ')}`);
      const labels = new Map(namespaces.map((n) => [String((n.metadata as JsonObject).name), (n.metadata as { labels?: Record<string, string> }).labels ?? {}]));
      const plan = planRollout(internalSidecarSet(next), pods, labels);
      const ourUpdates = plan.updates.map((u) => `${podKey(u.pod)} ${imagesOf({ ...u.pod, spec: { ...u.pod.spec, containers: (u.pod.spec?.containers ?? []).map((c) => ({ ...c, image: u.images[c.name] ?? c.image })) } }).join(' ')}`);
      expect(kruiseUpdates).toHaveLength(1);
      expect(ourUpdates).toEqual(kruiseUpdates);
    });

    it("Kruise's pod webhook, given a pod this project injected, does not inject it twice; with Kruise's entries back and this project's removed, Kruise alone injects the current sidecar once", async () => {
      const set = await getSet();
      const mine = await admin<Pod>('POST', `/api/v1/namespaces/${NS}/pods`, appPod('web-ours'));
      expect(imagesOf(mine)).toEqual(['log=busybox:1.37', 'app=busybox:1.36']);
      const again = await ask({ op: 'inject', operation: 'CREATE', namespace: NS, object: forKruise({ ...mine, status: {} }), cluster: { sidecarSets: [forKruise(set)], namespaces: await listNamespaces() } });
      const result = (again.result ?? forKruise(mine)) as Pod;
      expect(imagesOf(result)).toEqual(imagesOf(mine));
      expect(volumeNames(result)).toEqual(['logs']);
      expect(setHash(result)).toBe(setHash(mine));

      // The way back, step 2 and 3: Kruise's configurations rendered again (helm upgrade), this project's removed.
      const kruiseConfigurations = kruiseWebhooks.configurations();
      for (const [kind, configuration] of [['mutating', kruiseConfigurations.mutating], ['validating', kruiseConfigurations.validating]] as const) {
        const path = `/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations/${(configuration.metadata as JsonObject).name as string}`;
        const current = await admin<JsonObject>('GET', path);
        await admin('PUT', path, { ...configuration, metadata: { ...(configuration.metadata as JsonObject), resourceVersion: (current.metadata as JsonObject).resourceVersion } });
      }
      await admin('PATCH', `/apis/apps/v1/namespaces/${KRUISE_NAMESPACE}/deployments/${KRUISE_MANAGER_DEPLOYMENT}`, { spec: { replicas: 2 } });
      const back = await preflight();
      for (const entry of ['mpod.kb.io (pod-inject): active', 'msidecarset.kb.io (sidecarset): active', 'vsidecarset.kb.io (sidecarset): active']) expect(back.report).toContain(entry);
      expect(back.report).toContain('SidecarSet controller: active');
      await admin('DELETE', `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${OUR_CONFIGURATION}`);
      await admin('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${OUR_CONFIGURATION}`);
      const probe = await waitFor('a dry run through Kruise alone', () => dryRunPod('probe'), (r) => r.kruise === 1 && r.ours === 0, 30_000);
      expect(imagesOf(probe.pod)).toEqual(['log=busybox:1.37', 'app=busybox:1.36']);
      expect(volumeNames(probe.pod)).toEqual(['logs']);
      expect(setHash(probe.pod)).toBe(setHash(mine));
    });
  });
}
