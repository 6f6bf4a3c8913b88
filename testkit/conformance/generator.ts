/**
 * Seeded cases for the differential suite: SidecarSets, pods and clusters as
 * users and controllers write them (not the fuzzer's awkward bytes), with a
 * realistic share of invalid SidecarSets so that validation disagreements
 * surface. The same seed gives the same cases, on both sides.
 */
import fc from 'fast-check';
import { applyPatch } from '../../lib/admission/json-patch-apply.ts';
import type { JsonObject, Namespace, Pod } from '../../lib/kube/types.ts';
import { dueFlips } from '../../lib/rollout/hot-swap.ts';
import { podFlipPatch, podUpdatePatch } from '../../lib/rollout/pod-patch.ts';
import { isInjectedBy, podHasSetContainers } from '../../lib/sidecarset/pod-state.ts';
import { currentRevisionName } from '../../lib/sidecarset/revisions.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { sidecarSetSelectsPod } from '../../lib/sidecarset/match.ts';
import { LABEL_CUSTOM_VERSION } from '../../lib/sidecarset/revisions.ts';
import { ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, type SidecarSet } from '../../lib/sidecarset/types.ts';
import { validateSidecarSet } from '../../lib/sidecarset/validate.ts';

export const CASE_CLASSES = ['default', 'validate', 'inject', 'status', 'rollout', 'convert'] as const;
export type CaseClass = (typeof CASE_CLASSES)[number];

/**
 * The Kruise release a case stream is drawn for: `1.8` draws only what
 * Kruise 1.8 knows (v1alpha1, no 1.9 field); `1.9` also draws 1.9's fields
 * (resourcesPolicy, shareVolumeDevicePolicy, the custom version,
 * `namespace` beside a `namespaceSelector`, numeric strings for
 * maxUnavailable and partition) and conversion cases.
 */
export type GeneratedLine = '1.8' | '1.9';

export interface Cluster {
  sidecarSets: SidecarSet[];
  namespaces: Namespace[];
  pods: Pod[];
}

/** One case; both sides get exactly this. */
export type ConformanceCase =
  | { class: 'default'; operation: 'CREATE' | 'UPDATE'; object: SidecarSet; oldObject?: SidecarSet }
  | { class: 'validate'; operation: 'CREATE' | 'UPDATE'; object: SidecarSet; oldObject?: SidecarSet; cluster: Cluster }
  | { class: 'inject'; namespace: string; pod: Pod; cluster: Cluster }
  | { class: 'status'; sidecarSet: SidecarSet; cluster: Cluster }
  /** One reconcile of `sidecarSet` over the cluster: what it writes to the pods. */
  | { class: 'rollout'; sidecarSet: SidecarSet; cluster: Cluster }
  /**
   * A ConversionReview of `objects` to `desiredAPIVersion`; with `roundTrip`,
   * each side's answer is converted back to the objects' own version by the
   * same side, and the objects that come back are compared.
   */
  | { class: 'convert'; objects: JsonObject[]; desiredAPIVersion: string; roundTrip: boolean };

/** The time our injection records; Kruise records its own clock (normalised away). */
export const CONFORMANCE_NOW = new Date('2026-11-30T12:00:00.000Z');

/**
 * The clock of this project's reconcile: later than anything the
 * generator records on a pod, so a time the reconcile writes never equals one the
 * pod carried (compare.ts tells the two apart by that).
 */
export const ROLLOUT_NOW = new Date('2026-11-30T12:30:00.000Z');

/** The cluster's namespaces: two labelled, one not. */
export const NAMESPACES: Namespace[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: { env: 'prod', team: 'shop', 'kubernetes.io/metadata.name': 'shop' } } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { env: 'dev', 'kubernetes.io/metadata.name': 'team-a' } } },
  // The API server labels every Namespace with its name (Kubernetes 1.21 on); Kruise 1.9 selects a v1alpha1 set's namespace by it.
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default', labels: { 'kubernetes.io/metadata.name': 'default' } } },
];
const namespaceLabels = new Map(NAMESPACES.map((ns) => [ns.metadata?.name ?? '', { ...ns.metadata?.labels }]));

// ---------------------------------------------------------------------------
// Containers

const appName = fc.constantFrom('app', 'web', 'worker');
const sidecarName = fc.constantFrom('log-agent', 'proxy', 'dns-f', 'metrics', 'vault-agent');
const initName = fc.constantFrom('init-config', 'wait-db', 'mesh-init');
const image = fc.constantFrom(
  'nginx:1.27',
  'busybox:1.36',
  'fluent/fluent-bit:3.1',
  'envoyproxy/envoy:v1.31.0',
  'registry.example.com/team/agent@sha256:' + 'a'.repeat(64),
  'docker.io/library/agent@sha256:' + 'b'.repeat(64),
  'agent@sha256:' + 'd'.repeat(64),
);
const envName = fc.constantFrom('LOG_LEVEL', 'POD_IP', 'POD_NAME', 'REGION', 'TOKEN');

/** Valid env vars, and now and then one Kubernetes' validation refuses (issue 15 items 1-3). */
const envVar = fc.oneof(
  { weight: 60, arbitrary: fc.record({ name: envName, value: fc.constantFrom('info', 'debug', 'eu-west-1', '') }) },
  { weight: 30, arbitrary: fc.record({ name: envName, valueFrom: fc.constantFrom({ fieldRef: { fieldPath: 'status.podIP' } }, { fieldRef: { fieldPath: 'metadata.name' } }) }) },
  { weight: 1, arbitrary: fc.constant({ name: 'BOTH', value: 'x', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }) },
  { weight: 1, arbitrary: fc.constant({ name: '1BAD', value: 'x' }) },
  { weight: 1, arbitrary: fc.constant({ name: 'BOGUS', valueFrom: { fieldRef: { fieldPath: 'spec.bogus' } } }) },
);

const volumeName = fc.constantFrom('logs', 'config', 'certs', 'cache');
const mountPath: Record<string, string> = { logs: '/var/log/app', config: '/etc/config', certs: '/etc/certs', cache: '/cache' };
const volumeMount = volumeName.chain((name) =>
  fc.record({ name: fc.constant(name), mountPath: fc.constant(mountPath[name] ?? '/x'), readOnly: fc.boolean() }, { requiredKeys: ['name', 'mountPath'] }),
);

/** A volume, now and then one Kubernetes' validation refuses (issue 15 items 4-5). */
function volume(name: string): fc.Arbitrary<JsonObject> {
  return fc.oneof(
    { weight: 40, arbitrary: fc.constant({ name, emptyDir: {} }) },
    { weight: 12, arbitrary: fc.constant({ name, configMap: { name: `${name}-cm` } }) },
    { weight: 8, arbitrary: fc.constant({ name, hostPath: { path: '/var/log', type: 'DirectoryOrCreate' } }) },
    { weight: 1, arbitrary: fc.constant({ name, emptyDir: {}, hostPath: { path: '/x' } }) },
    { weight: 1, arbitrary: fc.constant({ name, hostPath: { path: '' } }) },
  );
}

const probe = fc.oneof(
  fc.constant({ httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10 }),
  fc.constant({ tcpSocket: { port: 9000 }, initialDelaySeconds: 5 }),
  fc.constant({ exec: { command: ['cat', '/tmp/ready'] } }),
);

const resources = fc.oneof(
  { weight: 30, arbitrary: fc.constantFrom({ limits: { cpu: '100m', memory: '64Mi' } }, { requests: { cpu: '50m', memory: '32Mi' }, limits: { cpu: '200m', memory: '128Mi' } }) },
  // A request above its limit: invalid.
  { weight: 1, arbitrary: fc.constant({ requests: { cpu: '500m' }, limits: { cpu: '100m' } }) },
);

const transferEnv = fc.oneof(
  fc.record({ sourceContainerName: appName, envName }),
  fc.record({ sourceContainerName: appName, envNames: fc.uniqueArray(envName, { minLength: 1, maxLength: 2 }) }),
  fc.record({ sourceContainerNameFrom: fc.constant({ fieldRef: { fieldPath: "metadata.labels['app']" } }), envNames: fc.constant(['REGION']) }),
);

/**
 * Kruise 1.9's resourcesPolicy: aggregated over the app containers the regex
 * names (none: the pod is refused), in Kruise's calculator grammar.
 */
const resourcesPolicy = fc.record(
  {
    targetContainersMode: fc.constantFrom('sum', 'max'),
    // Always written: the API server applies the CRD's default (`.*`) before any webhook sees the set.
    targetContainersNameRegex: fc.constantFrom('.*', '.*', '^app$', '^(web|worker)$', '^nomatch$'),
    resourcesExpr: fc.record(
      {
        limits: fc.record({ cpu: fc.constantFrom('cpu*50%', 'max(cpu*50%, 50m)', '200m'), memory: fc.constantFrom('200Mi', 'memory*50%', 'min(memory, 256Mi)') }, { requiredKeys: [] }),
        requests: fc.record({ cpu: fc.constantFrom('cpu*50%', '50m', 'cpu/2 + 10m'), memory: fc.constantFrom('100Mi', 'memory*25%') }, { requiredKeys: [] }),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['targetContainersMode', 'targetContainersNameRegex', 'resourcesExpr'] },
);

/** Kruise 1.9 only: whether the app containers' volumeDevices are shared with the sidecar. */
const shareVolumeDevicePolicy = fc.record({ type: fc.constantFrom('enabled', 'disabled') });

function sidecarContainer(init: boolean, line: GeneratedLine) {
  const only19 = <T,>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => (line === '1.9' ? arb : fc.constant(undefined));
  return fc.record(
    {
      name: init ? initName : sidecarName,
      image,
      command: fc.constantFrom(['/bin/agent'], ['sh', '-c', 'sleep 3600']),
      env: fc.uniqueArray(envVar, { maxLength: 3, selector: (e) => e.name }),
      volumeMounts: fc.uniqueArray(volumeMount, { maxLength: 2, selector: (m) => m.name }),
      ports: init ? fc.constant([]) : fc.constantFrom([], [{ name: 'metrics', containerPort: 9090 }], [{ containerPort: 15001, protocol: 'TCP' }]),
      resources,
      readinessProbe: init ? fc.constant(undefined) : probe,
      // Mostly none; without successThreshold Kruise's defaulting leaves it 0
      // and denies (issue 15 item 7), so some carry it as Kubernetes defaults it.
      startupProbe: init
        ? fc.constant(undefined)
        : fc.oneof(
            { weight: 8, arbitrary: fc.constant(undefined) },
            { weight: 1, arbitrary: probe },
            { weight: 1, arbitrary: probe.map((p) => ({ ...p, successThreshold: 1, timeoutSeconds: 1, periodSeconds: 10, failureThreshold: 3, ...('httpGet' in p ? { httpGet: { ...p.httpGet, scheme: 'HTTP' } } : {}) })) },
          ),
      // Kruise checks these three on spec.containers only (issue 15 item 6): rarely on init containers.
      podInjectPolicy: init
        ? fc.oneof({ weight: 15, arbitrary: fc.constant('BeforeAppContainer') }, { weight: 1, arbitrary: fc.constant('Middle') })
        : fc.constantFrom('BeforeAppContainer', 'AfterAppContainer'),
      shareVolumePolicy: fc.record({ type: fc.constantFrom('enabled', 'disabled') }),
      transferEnv: fc.array(transferEnv, { maxLength: 2 }),
      // Some HotUpgrade, always with the image of the idle copy: this project requires it (Kruise does
      // not check, and refuses the pods instead), a deliberate difference left out of the comparison.
      upgradeStrategy: fc.oneof(
        { weight: 3, arbitrary: fc.constant({ upgradeType: 'ColdUpgrade' }) },
        { weight: 1, arbitrary: fc.record({ upgradeType: fc.constant('HotUpgrade'), hotUpgradeEmptyImage: fc.constantFrom('openkruise/hotupgrade-sample:empty', 'busybox:1.36') }) },
      ),
      restartPolicy: init ? fc.constantFrom('Always', undefined) : fc.constant(undefined),
      imagePullPolicy: fc.constantFrom('IfNotPresent', 'Always'),
      // In place of `resources` mostly; now and then beside it, which Kruise 1.9 refuses.
      resourcesPolicy: only19(fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: resourcesPolicy.map((policy) => ({ policy, both: false })) }, { weight: 1, arbitrary: resourcesPolicy.map((policy) => ({ policy, both: true })) })),
      shareVolumeDevicePolicy: only19(fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: shareVolumeDevicePolicy })),
    },
    {
      requiredKeys: init ? ['name', 'image'] : ['name', 'image', 'imagePullPolicy'],
    },
  ).map((c) => {
    // Optional fields that came out undefined are left out, as a user would.
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(c) as [string, unknown][]) if (v !== undefined) out[k] = v;
    const choice = c.resourcesPolicy as { policy: JsonObject; both: boolean } | undefined;
    if (choice !== undefined) {
      out.resourcesPolicy = Object.fromEntries(Object.entries(choice.policy).filter(([, v]) => v !== undefined));
      if (!choice.both) delete out.resources;
    }
    return out;
  });
}

// ---------------------------------------------------------------------------
// SidecarSets

const labelValue = fc.constantFrom('web', 'api', 'db');
const selector = fc.oneof(
  { weight: 5, arbitrary: fc.record({ matchLabels: fc.record({ app: labelValue }) }) },
  { weight: 2, arbitrary: fc.record({ matchLabels: fc.record({ app: labelValue, tier: fc.constantFrom('frontend', 'backend') }) }) },
  { weight: 2, arbitrary: fc.record({ matchExpressions: fc.tuple(fc.record({ key: fc.constant('app'), operator: fc.constantFrom('In', 'NotIn'), values: fc.uniqueArray(labelValue, { minLength: 1, maxLength: 2 }) })) }) },
  { weight: 1, arbitrary: fc.constant({ matchExpressions: [{ key: 'sidecar.example.com/inject', operator: 'Exists' }] }) },
);

const scope = fc.oneof(
  { weight: 3, arbitrary: fc.constant({}) },
  { weight: 3, arbitrary: fc.record({ namespace: fc.constantFrom('shop', 'team-a', 'default') }) },
  { weight: 2, arbitrary: fc.record({ namespaceSelector: fc.constantFrom({ matchLabels: { env: 'prod' } }, { matchExpressions: [{ key: 'env', operator: 'Exists' }] }) }) },
);

/** Kruise 1.9 accepts both on a v1alpha1 set (its conversion keeps the namespace); 1.8 refused the pair. */
const scopeBoth = fc.record({ namespace: fc.constantFrom('shop', 'team-a'), namespaceSelector: fc.constant({ matchLabels: { env: 'prod' } }) });

const updateStrategy = fc.oneof(
  fc.constant(undefined),
  fc.constant({ type: 'NotUpdate' }),
  fc.record({ type: fc.constant('RollingUpdate'), maxUnavailable: fc.constantFrom(1, 2, '20%'), partition: fc.constantFrom(undefined, 0, 1, '50%') }).map((s) =>
    s.partition === undefined ? { type: s.type, maxUnavailable: s.maxUnavailable } : s,
  ),
);

/** A count written as a numeric string, which Kruise 1.9 refuses (#2111). */
const numericStringStrategy = fc.record({ type: fc.constant('RollingUpdate'), maxUnavailable: fc.constantFrom(1, '5'), partition: fc.constantFrom(undefined, '2') }).map((s) =>
  s.partition === undefined || s.maxUnavailable === '5' ? { type: s.type, maxUnavailable: s.maxUnavailable } : s,
);

const patchPodMetadata = fc.oneof(
  fc.record({ annotations: fc.constant({ 'example.com/sidecar-config': 'v1' }), patchPolicy: fc.constantFrom('Retain', 'Overwrite') }),
  fc.record({ annotations: fc.constant({ 'example.com/merged': '{"log":{"level":"info"}}' }), patchPolicy: fc.constant('MergePatchJson') }),
);

/** Random SidecarSets (v1alpha1) of a release. */
export function sidecarSetArbOf(line: GeneratedLine): fc.Arbitrary<SidecarSet> {
  const nineteen = line === '1.9';
  return fc
  .record(
    {
      name: fc.constantFrom('log-agent', 'mesh', 'dns', 'metrics', 'vault'),
      labels: nineteen
        ? fc.constantFrom(undefined, { team: 'platform' }, { [LABEL_CUSTOM_VERSION]: 'v2' }, { team: 'platform', [LABEL_CUSTOM_VERSION]: 'canary-1' })
        : fc.constantFrom(undefined, { team: 'platform' }),
      selector,
      scope: nineteen ? fc.oneof({ weight: 8, arbitrary: scope }, { weight: 1, arbitrary: scopeBoth }) : scope,
      containers: fc.uniqueArray(sidecarContainer(false, line), { minLength: 1, maxLength: 2, selector: (c) => c.name }),
      initContainers: fc.uniqueArray(sidecarContainer(true, line), { maxLength: 2, selector: (c) => c.name }),
      volumes: fc.tuple(volume('logs'), volume('config'), volume('certs'), volume('cache')),
      unmountedVolume: fc.boolean(),
      imagePullSecrets: fc.constantFrom(undefined, [{ name: 'regcred' }]),
      patchPodMetadata: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.tuple(patchPodMetadata) }),
      updateStrategy: nineteen ? fc.oneof({ weight: 12, arbitrary: updateStrategy }, { weight: 1, arbitrary: numericStringStrategy }) : updateStrategy,
      // Kruise refuses native sidecars under RollingUpdate (this project rolls them in place): most sets say NotUpdate, some do not.
      nativeSidecarsNotUpdate: fc.boolean().chain((b) => (b ? fc.constant(true) : fc.constantFrom(true, true, true, false))),
      paused: fc.constantFrom(undefined, false, true),
    },
    { requiredKeys: ['name', 'selector', 'scope', 'containers', 'volumes', 'nativeSidecarsNotUpdate'] },
  )
  .map((s): SidecarSet => {
    const containerNames = new Set(s.containers.map((c) => c.name));
    const initContainers = (s.initContainers ?? []).filter((c) => !containerNames.has(c.name));
    const mounted = new Set([...s.containers, ...initContainers].flatMap((c) => ((c.volumeMounts as { name: string }[] | undefined) ?? []).map((m) => m.name)));
    const native = initContainers.some((c) => c.restartPolicy === 'Always');
    const strategy = native && s.nativeSidecarsNotUpdate ? { type: 'NotUpdate' } : s.updateStrategy;
    const volumes = s.volumes.filter((v) => mounted.has(v.name as string) || (s.unmountedVolume === true && v.name === 'cache'));
    return {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: s.name, generation: 1, ...(s.labels === undefined ? {} : { labels: s.labels }) },
      spec: {
        selector: s.selector,
        ...s.scope,
        containers: s.containers,
        ...(initContainers.length === 0 ? {} : { initContainers }),
        ...(volumes.length === 0 ? {} : { volumes }),
        ...(s.imagePullSecrets === undefined ? {} : { imagePullSecrets: s.imagePullSecrets }),
        ...(s.patchPodMetadata === undefined ? {} : { patchPodMetadata: s.patchPodMetadata }),
        ...(strategy === undefined ? {} : { updateStrategy: strategy }),
        ...(s.paused === undefined ? {} : { injectionStrategy: { paused: s.paused } }),
      },
    } as unknown as SidecarSet;
  });
}

/** Random SidecarSets of Kruise 1.8's API. */
export const sidecarSetArb: fc.Arbitrary<SidecarSet> = sidecarSetArbOf('1.8');

/** The same set with an edit a user makes (image bump, an added env var, a selector change). */
const editArb = fc.constantFrom('image', 'env', 'selector', 'none');
function edited(set: SidecarSet, edit: string): SidecarSet {
  const copy = structuredClone(set);
  const first = copy.spec?.containers?.[0];
  if (edit === 'image' && first !== undefined) first.image = 'nginx:1.28';
  if (edit === 'env' && first !== undefined) first.env = [...(first.env ?? []), { name: 'ADDED', value: '1' }];
  if (edit === 'selector' && copy.spec !== undefined) copy.spec.selector = { matchLabels: { app: 'edited' } };
  return copy;
}

/**
 * What a cluster holds after these were created in order: defaulted, and
 * kept when valid next to those kept, and when Kruise admits it too: a
 * native sidecar under RollingUpdate, which this project rolls in place and
 * Kruise refuses, is left out, so both sides read the same cluster (the
 * difference itself is compared in validate cases).
 */
function admitted(sets: readonly SidecarSet[]): SidecarSet[] {
  const kept: SidecarSet[] = [];
  for (const set of sets) {
    if (kept.some((k) => k.metadata?.name === set.metadata?.name)) continue;
    const stored = defaultSidecarSet(set);
    if (rollsNativeSidecars(stored)) continue;
    if (validateSidecarSet(stored, { operation: 'CREATE', others: kept, namespaceLabels }).length === 0) kept.push(stored);
  }
  return kept;
}

/** A native sidecar under RollingUpdate: Kruise refuses the set. */
function rollsNativeSidecars(set: SidecarSet): boolean {
  return set.spec?.updateStrategy?.type === 'RollingUpdate' && (set.spec.initContainers ?? []).some((c) => c.restartPolicy === 'Always');
}

const clusterSetsArbOf = (line: GeneratedLine) => fc.array(sidecarSetArbOf(line), { maxLength: 3 }).map(admitted);

/**
 * Which of a case's SidecarSets are written in v1beta1, one bit per set (bit
 * 0 the first): Kruise 1.9 serves both versions and its webhooks decode
 * either, and a cluster it ran stores v1beta1. Kruise 1.8 knows only
 * v1alpha1 (no bit set). A constant draws nothing, so the 1.8 stream is the
 * one it always was.
 */
const betaMaskOf = (line: GeneratedLine): fc.Arbitrary<number> => (line === '1.9' ? fc.integer({ min: 0, max: 0xff }) : fc.constant(0));

/** `set` in the version bit `bit` of `mask` names: v1beta1 as written by hand ({@link writtenInBeta}), else as drawn (v1alpha1). */
function inVersionOf(set: SidecarSet, mask: number, bit: number): SidecarSet {
  return ((mask >> bit) & 1) === 1 ? (writtenInBeta(set)) : set;
}

/** Each set in the version its bit names, from bit `first` on. */
function inVersionsOf(sets: readonly SidecarSet[], mask: number, first: number): SidecarSet[] {
  return sets.map((set, i) => inVersionOf(set, mask, first + i));
}

// ---------------------------------------------------------------------------
// Pods

/** An app container; for 1.9's resourcesPolicy, some with limits and requests (or one of them) to aggregate. */
const appContainerOf = (line: GeneratedLine) =>
  fc.record(
    {
      name: appName,
      image: fc.constantFrom('shop/web:2.4.1', 'shop/api:1.0.0', 'redis:7'),
      env: fc.uniqueArray(fc.record({ name: envName, value: fc.constantFrom('info', 'eu-west-1') }), { maxLength: 2, selector: (e) => e.name }),
      volumeMounts: fc.uniqueArray(volumeMount, { maxLength: 2, selector: (m) => m.name }),
      ports: fc.constantFrom([], [{ containerPort: 8080, name: 'http' }]),
      resources:
        line === '1.9'
          ? fc.constantFrom(
              { limits: { cpu: '200m', memory: '200Mi' }, requests: { cpu: '50m', memory: '100Mi' } },
              { limits: { cpu: '400m', memory: '400Mi' }, requests: { cpu: '100m', memory: '200Mi' } },
              { requests: { cpu: '250m', memory: '64Mi' } },
              { limits: { cpu: '1', memory: '1Gi' } },
            )
          : fc.constant(undefined),
    },
    { requiredKeys: ['name', 'image'] },
  ).map((c) => {
    const out = { ...c };
    if (out.resources === undefined) delete out.resources;
    return out;
  });

const podArbOf = (line: GeneratedLine) => fc
  .record({
    namespace: fc.constantFrom('shop', 'team-a', 'default'),
    app: fc.constantFrom('web', 'api', 'db', undefined),
    tier: fc.constantFrom('frontend', 'backend', undefined),
    injectLabel: fc.constantFrom(undefined, undefined, 'true'),
    annotations: fc.constantFrom(undefined, { 'example.com/owner': 'shop' }, { 'example.com/merged': '{"log":{"format":"json"}}' }),
    containers: fc.uniqueArray(appContainerOf(line), { minLength: 1, maxLength: 3, selector: (c) => c.name }),
    initContainers: fc.constantFrom([], [{ name: 'migrate', image: 'shop/migrate:1' }]),
    unknownField: fc.boolean(),
  })
  .map((p): Pod => {
    const labels: Record<string, string> = {};
    if (p.app !== undefined) labels.app = p.app;
    if (p.tier !== undefined) labels.tier = p.tier;
    if (p.injectLabel !== undefined) labels['sidecar.example.com/inject'] = p.injectLabel;
    const mounted = new Set(p.containers.flatMap((c) => (c.volumeMounts ?? []).map((m) => m.name)));
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${p.app ?? 'job'}-7d9c6b-`,
        namespace: p.namespace,
        labels,
        ...(p.annotations === undefined ? {} : { annotations: p.annotations }),
      },
      spec: {
        containers: p.containers,
        ...(p.initContainers.length === 0 ? {} : { initContainers: p.initContainers }),
        ...(mounted.size === 0 ? {} : { volumes: [...mounted].map((name) => ({ name, emptyDir: {} })) }),
        restartPolicy: 'Always',
        // A field neither side knows (a newer API, or a typo a client sent): both must keep it.
        ...(p.unknownField ? { futureField: { enabled: true } } : {}),
      },
    } as Pod;
  });

/**
 * What a runtime reports as a container's imageID: the fully qualified
 * repository and the digest it pulled (for a pinned image, the pinned one;
 * `stale` gives an older digest, as after an update that did not restart).
 */
export function imageIdOf(image: string, stale = false): string {
  const at = image.indexOf('@');
  const repository = at >= 0 ? image.slice(0, at) : image.replace(/:[^:/]+$/, '');
  const firstPart = repository.split('/')[0] ?? '';
  const qualified = repository.includes('/') ? (/[.:]/.test(firstPart) ? repository : `docker.io/${repository}`) : `docker.io/library/${repository}`;
  const digest = at >= 0 && !stale ? image.slice(at + 1) : `sha256:${(stale ? 'e' : 'c').repeat(64)}`;
  return `${qualified}@${digest}`;
}

/**
 * The pod as injected by these sets; as written when injection refuses it
 * (a 1.9 resourcesPolicy whose regex names none of its containers): such a
 * pod exists only if it was created before the set, without its sidecars.
 */
function injectedOrAsWritten(pod: Pod, sets: readonly SidecarSet[]): Pod {
  // No sets: the pod was injected already (or never is). Injecting it with
  // none would strip the Kruise annotations, as pod-inject does on creation.
  if (sets.length === 0) return pod;
  try {
    return injectPod({ pod, namespace: pod.metadata?.namespace ?? 'default', sidecarSets: sets, namespaceLabels, now: CONFORMANCE_NOW }).pod;
  } catch {
    return pod;
  }
}

/** How a generated pod is running: `terminating` is ready but being deleted. */
export type PodState = 'ready' | 'not-ready' | 'pending' | 'succeeded' | 'failed' | 'terminating' | 'stale-digest';

/** The pod as it runs: injected when created (by the sets of that time), then scheduled and started. */
export function runningPod(pod: Pod, name: string, createdWith: readonly SidecarSet[], state: PodState): Pod {
  const injected = injectedOrAsWritten(pod, createdWith);
  const running = structuredClone(injected);
  if (running.metadata !== undefined) {
    delete running.metadata.generateName;
    running.metadata.name = name;
  }
  const containers = (running.spec?.containers ?? []) as { name: string; image: string }[];
  const ready = state === 'ready' || state === 'stale-digest' || state === 'terminating';
  if (state === 'terminating' && running.metadata !== undefined) {
    // A pod being deleted that is still listed: a finalizer holds it (the
    // fake client, like the API server, refuses a deletionTimestamp without one).
    running.metadata.deletionTimestamp = CONFORMANCE_NOW.toISOString();
    running.metadata.finalizers = ['example.com/drain'];
  }
  running.status = {
    phase: state === 'pending' ? 'Pending' : state === 'succeeded' ? 'Succeeded' : state === 'failed' ? 'Failed' : 'Running',
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    containerStatuses: state === 'pending'
      ? []
      : containers.map((c) => ({
          name: c.name,
          image: c.image,
          imageID: imageIdOf(c.image, state === 'stale-digest'),
          ready,
          restartCount: 0,
        })),
  };
  return running;
}

// ---------------------------------------------------------------------------
// Cases

// An admission request's object and old object are in one version (bit 0): the one the client wrote.
const defaultCaseArbOf = (line: GeneratedLine): fc.Arbitrary<ConformanceCase> => fc
  .record({ set: sidecarSetArbOf(line), update: fc.boolean(), edit: editArb, beta: betaMaskOf(line) })
  .map(({ set, update, edit, beta }) =>
    update
      ? { class: 'default', operation: 'UPDATE', object: inVersionOf(edited(defaultSidecarSet(set), edit), beta, 0), oldObject: inVersionOf(defaultSidecarSet(set), beta, 0) }
      : { class: 'default', operation: 'CREATE', object: inVersionOf(set, beta, 0) },
  );

/**
 * A v1beta1 `customVersion` no label may hold (the CRD takes any string
 * there; as the v1alpha1 label the API server would refuse it): refused
 * here, admitted by Kruise 1.9 (release-differences.ts,
 * customVersionIsALabelValue).
 */
export const BAD_CUSTOM_VERSION = 'release 2/canary';

/** The set with {@link BAD_CUSTOM_VERSION} when it is a v1beta1 set and `bad` says so. */
function withCustomVersion(set: SidecarSet, bad: boolean): SidecarSet {
  if (!bad || set.apiVersion !== 'apps.kruise.io/v1beta1') return set;
  return { ...set, spec: { ...set.spec, customVersion: BAD_CUSTOM_VERSION } };
}

// The object in the version bit 0 names, the cluster's sets each in its own (bits 1 on).
const validateCaseArbOf = (line: GeneratedLine): fc.Arbitrary<ConformanceCase> => fc
  .record({
    set: sidecarSetArbOf(line),
    others: clusterSetsArbOf(line),
    update: fc.boolean(),
    edit: editArb,
    beta: betaMaskOf(line),
    badCustomVersion: line === '1.9' ? fc.constantFrom(...Array<boolean>(15).fill(false), true) : fc.constant(false),
  })
  .map(({ set, others, update, edit, beta, badCustomVersion }) => {
    const cluster = { sidecarSets: inVersionsOf(others.filter((o) => o.metadata?.name !== set.metadata?.name), beta, 1), namespaces: NAMESPACES, pods: [] };
    // The validating webhook sees the object after defaulting, as the API server sends it.
    if (!update) return { class: 'validate', operation: 'CREATE', object: withCustomVersion(inVersionOf(defaultSidecarSet(set), beta, 0), badCustomVersion), cluster };
    const old = defaultSidecarSet(set);
    return {
      class: 'validate',
      operation: 'UPDATE',
      object: withCustomVersion(inVersionOf(defaultSidecarSet(edited(old, edit)), beta, 0), badCustomVersion),
      oldObject: inVersionOf(old, beta, 0),
      cluster,
    };
  });

/**
 * A pod created from a manifest copied off a live pod (`kubectl get -o
 * yaml`, then created again): it already carries sidecars and injection
 * annotations, from the sets as they were then.
 */
function copiedFromLivePod(pod: Pod, sets: readonly SidecarSet[], editImages: boolean): Pod {
  const then = editImages ? sets.map((s) => defaultSidecarSet(edited(s, 'image'))) : sets;
  return injectedOrAsWritten(pod, then);
}

/**
 * How far the reconciler got with a set's revision, as its status says:
 * `registered` (status.latestRevision names the current spec's revision,
 * what a running reconciler leaves, so both sides record the same name),
 * `lagging` (the spec changed since: it still names the previous spec's
 * revision) or `none` (a set just created, no status yet). The last two are
 * where this project deliberately records another controllerRevision than
 * Kruise (compare.ts, revisionNameComputed).
 */
export type RevisionState = 'registered' | 'lagging' | 'none';

export function withRevisionStatus(set: SidecarSet, state: RevisionState): SidecarSet {
  if (state === 'none') return set;
  const spec = state === 'registered' ? set : defaultSidecarSet(edited(set, 'image'));
  return { ...set, status: { ...set.status, latestRevision: currentRevisionName(spec) } };
}

const injectCaseArbOf = (line: GeneratedLine): fc.Arbitrary<ConformanceCase> => fc
  .record({
    sets: clusterSetsArbOf(line),
    pod: podArbOf(line),
    copied: fc.constantFrom('no', 'no', 'no', 'no', 'same-sets', 'older-sets'),
    revisions: fc.constantFrom<RevisionState>('registered', 'registered', 'registered', 'lagging', 'none'),
    beta: betaMaskOf(line),
  })
  .map(({ sets, pod, copied, revisions, beta }) => ({
    class: 'inject',
    namespace: pod.metadata?.namespace ?? 'default',
    pod: copied === 'no' ? pod : copiedFromLivePod(pod, sets, copied === 'older-sets'),
    cluster: { sidecarSets: inVersionsOf(sets.map((set) => withRevisionStatus(set, revisions)), beta, 0), namespaces: NAMESPACES, pods: [] },
  }));

/**
 * The pod moved into a namespace and relabelled so that `set` selects it
 * (its matchLabels copied, each requirement met), or unchanged when no
 * namespace of the cluster fits. Most status cases are about pods the set
 * selects; random labels alone rarely give one.
 */
export function selectedBy(pod: Pod, set: SidecarSet): Pod {
  const spec = (set.spec ?? {}) as JsonObject;
  const selector = (spec.selector ?? {}) as { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
  const labels = new Map(Object.entries({ ...pod.metadata?.labels, ...selector.matchLabels }));
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const value = labels.get(key);
    if (operator === 'In' && (value === undefined || !values.includes(value)) && values[0] !== undefined) labels.set(key, values[0]);
    else if (operator === 'Exists' && value === undefined) labels.set(key, 'true');
    else if ((operator === 'NotIn' && value !== undefined && values.includes(value)) || operator === 'DoesNotExist') labels.delete(key);
  }
  const relabelled = Object.fromEntries(labels);
  const namespace = NAMESPACES.map((ns) => ns.metadata?.name ?? '').find((ns) => {
    try {
      return sidecarSetSelectsPod(set, relabelled, ns, namespaceLabels);
    } catch {
      return false;
    }
  });
  if (namespace === undefined) return pod;
  return { ...pod, metadata: { ...pod.metadata, namespace, labels: relabelled } };
}

const podStateArb = fc.constantFrom<PodState>('ready', 'ready', 'ready', 'not-ready', 'not-ready', 'pending', 'succeeded', 'failed', 'terminating', 'stale-digest');

/**
 * A set's status among several pods: most of them selected by the set
 * (ready or not, of the current or an older hash, created before the set
 * existed, also injected by the other sets, finished, being deleted), some
 * not.
 */
const statusCaseArbOf = (line: GeneratedLine): fc.Arbitrary<ConformanceCase> => fc
  .record({
    sets: clusterSetsArbOf(line).filter((sets) => sets.length > 0),
    pods: fc.array(
      fc.record({
        pod: podArbOf(line),
        selected: fc.constantFrom(true, true, true, true, false),
        createdWith: fc.constantFrom('current', 'current', 'older', 'before-the-set'),
        state: podStateArb,
      }),
      { minLength: 2, maxLength: 6 },
    ),
    which: fc.nat(),
    beta: betaMaskOf(line),
  })
  .map(({ sets, pods, which, beta }) => {
    const set = sets[which % sets.length] as SidecarSet;
    // Some pods were created before the set's last image change: they carry an older hash.
    const olderSets = sets.map((s) => (s === set ? defaultSidecarSet(edited(s, 'image')) : s));
    const withoutSet = sets.filter((s) => s !== set);
    const running = pods.map((p, i) => {
      const createdWith = p.createdWith === 'current' ? sets : p.createdWith === 'older' ? olderSets : withoutSet;
      return runningPod(p.selected ? selectedBy(p.pod, set) : p.pod, `pod-${i}`, createdWith, p.state);
    });
    // The set in the version it is stored in, the same in the case as in the cluster.
    const stored = inVersionsOf(sets, beta, 0);
    return { class: 'status', sidecarSet: stored[which % sets.length] as SidecarSet, cluster: { sidecarSets: stored, namespaces: NAMESPACES, pods: running } };
  });

// ---------------------------------------------------------------------------
// Rollout cases

/**
 * Sidecar images of rollout sets. A short-name digest (`agent@sha256:…`),
 * which the runtime reports fully qualified, is left out: image references
 * are normalised here and not in Kruise (sidecarset.md §7), which changes
 * which pods are consistent and so the whole batch. That difference is shown
 * on Kruise's answer by a hand-written case instead.
 */
const ROLLOUT_IMAGES = [
  'nginx:1.27',
  'nginx:1.28',
  'busybox:1.36',
  'fluent/fluent-bit:3.1',
  'envoyproxy/envoy:v1.31.0',
  'registry.example.com/team/agent@sha256:' + 'a'.repeat(64),
  'docker.io/library/agent@sha256:' + 'b'.repeat(64),
];
/** The idle image of a rollout set's HotUpgrade sidecar (never one of ROLLOUT_IMAGES). */
export const HOT_EMPTY_IMAGE = 'openkruise/hotupgrade-sample:empty';

const weightPriority = { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { tier: 'frontend' } } }, { weight: 10, matchSelector: { matchLabels: { canary: 'true' } } }] };

/** Update strategies as users write them: batches, partitions, a canary selector, priorities and scatter, paused, NotUpdate. */
const rolloutStrategyArb: fc.Arbitrary<JsonObject> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ type: 'NotUpdate' }) },
  {
    weight: 9,
    arbitrary: fc
      .record({
        maxUnavailable: fc.constantFrom(undefined, 1, 1, 2, 3, 0, '20%', '50%', '100%'),
        partition: fc.constantFrom(undefined, undefined, undefined, 0, 1, 2, '30%', '50%', '100%'),
        paused: fc.constantFrom(undefined, undefined, undefined, undefined, true, false),
        selector: fc.constantFrom(undefined, undefined, undefined, { matchLabels: { canary: 'true' } }),
        priorityStrategy: fc.constantFrom(undefined, undefined, undefined, weightPriority, { orderPriority: [{ orderedKey: 'rank' }] }),
        scatterStrategy: fc.constantFrom(undefined, undefined, undefined, [{ key: 'zone', value: 'a' }], [{ key: 'zone', value: 'a' }, { key: 'zone', value: 'b' }]),
      })
      .map((s) => {
        const out: JsonObject = { type: 'RollingUpdate' };
        for (const [k, v] of Object.entries(s) as [string, unknown][]) if (v !== undefined) out[k] = v;
        // Validation refuses a partition beside a selector.
        if (out.selector !== undefined) delete out.partition;
        return out;
      }),
  },
);

/** A set's versions: the current one, and two earlier ones whose images (and, now and then, env) differ. */
interface SetHistory {
  current: SidecarSet;
  /** The version just before the current one. */
  previous: SidecarSet;
  /** The one before that. */
  oldest: SidecarSet;
}

function withImages(set: SidecarSet, images: readonly string[], envChanged: boolean, resourceVersion: number): SidecarSet {
  const copy = structuredClone(set);
  (copy.spec?.containers ?? []).forEach((c, i) => {
    c.image = images[i % images.length] ?? c.image;
    if (envChanged && i === 0) c.env = [...(c.env ?? []), { name: 'BEFORE', value: '1' }];
  });
  copy.metadata = { ...copy.metadata, resourceVersion: String(resourceVersion) };
  return defaultSidecarSet(copy);
}

const setHistoryArbOf = (line: GeneratedLine): fc.Arbitrary<SetHistory> => fc
  .record({
    base: sidecarSetArbOf(line),
    // HotUpgrade on no sidecar, on the first, or on all of them.
    hot: fc.constantFrom('none', 'none', 'none', 'none', 'first', 'all'),
    strategy: rolloutStrategyArb,
    images: fc.tuple(fc.array(fc.constantFrom(...ROLLOUT_IMAGES), { minLength: 2, maxLength: 2 }), fc.array(fc.constantFrom(...ROLLOUT_IMAGES), { minLength: 2, maxLength: 2 }), fc.array(fc.constantFrom(...ROLLOUT_IMAGES), { minLength: 2, maxLength: 2 })),
    // The env of the first sidecar changed since older pods were injected: they cannot be updated in place.
    envChanged: fc.constantFrom(false, false, false, false, true),
    resourceVersion: fc.integer({ min: 200, max: 99_999 }),
  })
  .map(({ base, hot, strategy, images, envChanged, resourceVersion }) => {
    const set = structuredClone(base);
    const spec = set.spec ?? {};
    // About one set in three has HotUpgrade sidecars (the first, or all), ColdUpgrade elsewhere.
    spec.containers = (spec.containers ?? []).map((c, i) => ({
      ...c,
      upgradeStrategy: hot === 'all' || (hot === 'first' && i === 0) ? { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: HOT_EMPTY_IMAGE } : { upgradeType: 'ColdUpgrade' },
    }));
    // Kruise never rolls native sidecars (it refuses them with RollingUpdate; this project rolls them): plain init containers only.
    const init = (spec.initContainers ?? []).filter((c) => c.restartPolicy !== 'Always');
    if (init.length > 0) spec.initContainers = init;
    else delete spec.initContainers;
    spec.updateStrategy = strategy;
    // Pods were injected (injection is not paused): the rollout is what is looked at.
    delete spec.injectionStrategy;
    const [current, previous, oldest] = images;
    return {
      current: withImages(set, current, false, resourceVersion),
      previous: withImages(set, previous, envChanged, resourceVersion - 50),
      oldest: withImages(set, oldest, envChanged, resourceVersion - 90),
    };
  })
  .filter(({ current }) => validateSidecarSet(current, { operation: 'CREATE', others: [], namespaceLabels }).length === 0);

/**
 * What happened to a rollout pod after it was updated in place to a later
 * version by this project's own patch (the one the rollout writes; a pod
 * not so updated still runs the version that injected it): the kubelet
 * `restarted` the changed containers, is still `restarting` them (the old
 * image and image ID still reported) or `failed` (the new image cannot be
 * pulled: no image ID, not ready). A hot sidecar's upgrade leaves the pod
 * mid-swap; `flipped` ends the swap with the flip patch, and the kubelet
 * restarted the old container on the empty image or not yet
 * (`flipped-restarting`).
 */
export type RolloutPodHistory = 'restarted' | 'restarting' | 'failed' | 'flipped' | 'flipped-restarting';

/** The kubelet reports the containers whose spec image changed as running it (or failing to pull it). */
export function kubeletRestarts(pod: Pod, outcome: 'restarted' | 'failed', ready: boolean): void {
  const images = new Map((pod.spec?.containers ?? []).map((c) => [c.name, c.image ?? '']));
  const statuses = pod.status?.containerStatuses ?? [];
  for (const status of statuses) {
    const image = images.get(status.name as string);
    if (image === undefined || image === status.image) continue;
    status.image = image;
    if (outcome === 'failed') {
      status.imageID = '';
      status.ready = false;
      status.restartCount = (status.restartCount as number) + 1;
      status.state = { waiting: { reason: 'ImagePullBackOff' } };
    } else {
      status.imageID = imageIdOf(image);
      status.ready = ready;
      status.restartCount = (status.restartCount as number) + 1;
    }
  }
}

/** The pod's Ready condition: `ready`, `pod-not-ready` (False, its containers as reported) or `not-ready` (no container ready either). */
export function setReady(pod: Pod, ready: 'ready' | 'pod-not-ready' | 'not-ready'): void {
  const conditions = (pod.status?.conditions ?? []) as JsonObject[];
  for (const c of conditions) if (c.type === 'Ready') c.status = ready === 'ready' ? 'True' : 'False';
  for (const s of pod.status?.containerStatuses ?? []) if (ready === 'not-ready') s.ready = false;
}

/** This project's in-place update of `pod` to `set` (the rollout's own patch), as written before the case. */
export function updatedInPlace(pod: Pod, set: SidecarSet): Pod {
  const guarded = { ...pod, metadata: { ...pod.metadata, resourceVersion: '1' } };
  const patch = podUpdatePatch({ pod: guarded, set, latestRevision: currentRevisionName(set), injectedList: set.metadata?.name ?? '', now: CONFORMANCE_NOW });
  return applyPatch(guarded, patch) as Pod;
}

function flippedInPlace(pod: Pod, set: SidecarSet): Pod {
  const flips = dueFlips(pod, set);
  if (flips.length === 0) return pod;
  const guarded = { ...pod, metadata: { ...pod.metadata, resourceVersion: '1' } };
  return applyPatch(guarded, podFlipPatch({ pod: guarded, set, flips, now: CONFORMANCE_NOW })) as Pod;
}

const rolloutPodArbOf = (line: GeneratedLine) => fc.record({
  pod: podArbOf(line),
  selected: fc.constantFrom(true, true, true, true, true, true, false),
  // Which version injected it, and which version it was updated to in place since (none: still the injecting one).
  injectedBy: fc.constantFrom('oldest', 'oldest', 'previous', 'previous', 'current'),
  updatedTo: fc.constantFrom(undefined, undefined, 'previous', 'current', 'current'),
  history: fc.constantFrom<RolloutPodHistory>('restarted', 'restarted', 'restarted', 'restarting', 'restarting', 'failed', 'flipped', 'flipped-restarting'),
  // Ready; Ready=False with the containers as reported (a readiness gate, a probe that just recovered); nothing ready.
  ready: fc.constantFrom('ready', 'ready', 'ready', 'pod-not-ready', 'not-ready'),
  pending: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
  canary: fc.boolean(),
  zone: fc.constantFrom('a', 'b', undefined),
  rank: fc.constantFrom('r-1', 'r-3', 'r-10', 'x', undefined),
  nodeName: fc.constantFrom('node-1', 'node-1', 'node-1', undefined),
  created: fc.integer({ min: 0, max: 3 }),
  readySince: fc.constantFrom(undefined, 0, 1, 2),
  restarts: fc.integer({ min: 0, max: 2 }),
  otherSetCondition: fc.constantFrom(false, false, false, false, false, true),
  // Also injected by another set (its entries beside this set's in the annotations).
  alsoOther: fc.constantFrom(false, false, false, true),
  // Injected by an older Kruise: the hash annotations in their old form, {"<set>":"<hash>"}.
  oldFormHash: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
  // Finished or being deleted: not the set's to roll.
  inactive: fc.constantFrom<PodState | undefined>(...Array<undefined>(14).fill(undefined), 'terminating', 'succeeded'),
});

/**
 * Another set in the cluster, selecting the pods labelled `other: true`:
 * its sidecar beside the rolled set's, its entries in their annotations.
 */
export const OTHER_SET: SidecarSet = defaultSidecarSet({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'other', generation: 1, resourceVersion: '77' },
  spec: {
    selector: { matchLabels: { other: 'true' } },
    containers: [{ name: 'other-agent', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' }],
    updateStrategy: { type: 'NotUpdate' },
  },
});

/** The annotation's entries in the form older Kruise versions wrote, `{"<set>":"<hash>"}`. */
function oldForm(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const entries = JSON.parse(value) as Record<string, { hash: string }>;
  return JSON.stringify(Object.fromEntries(Object.entries(entries).map(([set, entry]) => [set, entry.hash])));
}

type RolloutPodChoice = ReturnType<typeof rolloutPodArbOf> extends fc.Arbitrary<infer T> ? T : never;

/** One rollout pod as the cluster holds it before the reconcile. */
function rolloutPod(p: RolloutPodChoice, i: number, history: SetHistory, others: readonly SidecarSet[]): Pod {
  const set = history.current;
  const base = structuredClone(p.selected ? selectedBy(p.pod, set) : p.pod);
  const labels: Record<string, string> = { ...base.metadata?.labels };
  if (p.canary) labels.canary = 'true';
  if (p.alsoOther) labels.other = 'true';
  if (p.zone !== undefined) labels.zone = p.zone;
  if (p.rank !== undefined) labels.rank = p.rank;
  base.metadata = { ...base.metadata, labels };
  const order = ['oldest', 'previous', 'current'] as const;
  const injectedBy = history[p.injectedBy];
  let pod = runningPod(base, `pod-${i}`, [injectedBy, ...others], p.pending ? 'pending' : 'ready');
  if (p.oldFormHash && pod.metadata?.annotations !== undefined) {
    const annotations = pod.metadata.annotations;
    for (const key of [ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE]) {
      const value = oldForm(annotations[key]);
      if (value !== undefined) annotations[key] = value;
    }
  }
  const updateTo = p.updatedTo !== undefined && order.indexOf(p.updatedTo) > order.indexOf(p.injectedBy) ? history[p.updatedTo] : undefined;
  // Only a pod the set injected is updated in place.
  if (updateTo !== undefined && !p.pending && podHasSetContainers(pod, injectedBy) && isInjectedBy(pod, injectedBy)) {
    pod = updatedInPlace(pod, updateTo);
    if (p.history === 'failed') kubeletRestarts(pod, 'failed', false);
    else if (p.history !== 'restarting') kubeletRestarts(pod, 'restarted', true);
    if (p.history === 'flipped' || p.history === 'flipped-restarting') {
      pod = flippedInPlace(pod, updateTo);
      if (p.history === 'flipped') kubeletRestarts(pod, 'restarted', true);
    }
  }
  const failed = (pod.status?.containerStatuses ?? []).some((s) => s.ready === false);
  if (!p.pending) setReady(pod, failed && p.ready === 'ready' ? 'pod-not-ready' : p.ready);
  // What orders the batch (rollout.md §1.3): scheduling, Ready since when, restarts, age.
  const spec = pod.spec as JsonObject;
  if (p.nodeName !== undefined && !p.pending) spec.nodeName = p.nodeName;
  pod.metadata = { ...pod.metadata, creationTimestamp: new Date(Date.UTC(2026, 10, 1 + p.created)).toISOString().replace('.000', '') };
  delete pod.metadata.resourceVersion;
  const status = pod.status as JsonObject;
  for (const c of (status.conditions ?? []) as JsonObject[]) {
    if (c.type === 'Ready' && p.readySince !== undefined) c.lastTransitionTime = new Date(Date.UTC(2026, 10, 10, p.readySince)).toISOString().replace('.000', '');
  }
  for (const s of (status.containerStatuses ?? []) as JsonObject[]) s.restartCount = (s.restartCount as number) + p.restarts;
  if (p.otherSetCondition) {
    // Another set found this pod not upgradable earlier: the condition stays False whatever this set says.
    (status.conditions as JsonObject[]).push({ type: 'SidecarSetUpgradable', status: 'False', reason: 'UpdateImmutableField', message: '{"other-set":false}', lastTransitionTime: '2026-11-20T00:00:00Z' });
  }
  // A pod that finished or is being deleted, its sidecars as they were.
  return p.inactive === undefined ? pod : runningPod(pod, `pod-${i}`, [], p.inactive);
}

/**
 * One set's reconcile over one to eight pods it injected at some
 * version (most of them selected by it), after its image changed: some still
 * run the version that injected them, some were updated in place since and
 * are restarted, restarting or failed, HotUpgrade ones mid-swap (the new
 * container ready, so a flip is due, or not ready yet) or flipped; in any
 * mix of readiness, scheduling, age and labels the strategy looks at.
 */
const rolloutCaseArbOf = (line: GeneratedLine): fc.Arbitrary<ConformanceCase> => fc
  .record({ history: setHistoryArbOf(line), pods: fc.array(rolloutPodArbOf(line), { minLength: 1, maxLength: 8 }), beta: betaMaskOf(line) })
  .map(({ history, pods, beta }) => {
    const set = withRevisionStatus(history.current, 'registered');
    const others = validateSidecarSet(OTHER_SET, { operation: 'CREATE', others: [set], namespaceLabels }).length === 0 ? [OTHER_SET] : [];
    // The sets as stored (bit 0 the rolled set, bit 1 the other), the pods as injected by them.
    const stored = inVersionsOf([set, ...others], beta, 0);
    return { class: 'rollout', sidecarSet: stored[0] as SidecarSet, cluster: { sidecarSets: stored, namespaces: NAMESPACES, pods: pods.map((p, i) => rolloutPod(p, i, history, others)) } };
  });

/** A v1alpha1 set as written in v1beta1 by hand: the namespace as a selector, the custom version in the spec. */
export function writtenInBeta(set: SidecarSet): JsonObject {
  const copy = structuredClone(set) as JsonObject & { metadata?: JsonObject & { labels?: Record<string, string> }; spec?: JsonObject };
  copy.apiVersion = 'apps.kruise.io/v1beta1';
  const spec = copy.spec ?? {};
  if (typeof spec.namespace === 'string') {
    spec.namespaceSelector = { matchLabels: { 'kubernetes.io/metadata.name': spec.namespace } };
    delete spec.namespace;
  }
  const labels = copy.metadata?.labels;
  const custom = labels?.[LABEL_CUSTOM_VERSION];
  if (labels !== undefined && custom !== undefined) {
    spec.customVersion = custom;
    copy.metadata = { ...copy.metadata, labels: Object.fromEntries(Object.entries(labels).filter(([k]) => k !== LABEL_CUSTOM_VERSION)) };
  }
  return copy;
}

/**
 * A ConversionReview's objects (one to three sets, stored ones with a status
 * and hash annotations, some with an unknown field), all in one version as
 * the API server sends them, and the version asked for; now and then a round
 * trip.
 */
const convertCaseArb: fc.Arbitrary<ConformanceCase> = fc
  .record({
    sets: fc.array(fc.record({ set: sidecarSetArbOf('1.9'), stored: fc.boolean(), unknownField: fc.constantFrom(false, false, false, true) }), { minLength: 1, maxLength: 3 }),
    from: fc.constantFrom('v1alpha1', 'v1beta1'),

    roundTrip: fc.constantFrom(false, false, true),
  })
  .map(({ sets, from, roundTrip }) => {
    const objects = sets.map(({ set, stored, unknownField }, i) => {
      let object: JsonObject = stored ? withRevisionStatus(defaultSidecarSet(set), 'registered') : set;
      object = { ...object, metadata: { ...(object.metadata as JsonObject), name: `${String((object.metadata as JsonObject).name)}-${i}` } };
      if (stored) object.status = { ...(object.status as JsonObject), observedGeneration: 1, matchedPods: 3, updatedPods: 2, readyPods: 3, updatedReadyPods: 2 };
      if (unknownField) object.spec = { ...(object.spec as JsonObject), futureField: { enabled: true } };
      return from === 'v1beta1' ? writtenInBeta(object) : object;
    });
    // The API server asks only for another version (controller-runtime refuses a conversion to the same one).
    const desired = from === 'v1alpha1' ? 'v1beta1' : 'v1alpha1';
    return { class: 'convert', objects, desiredAPIVersion: `apps.kruise.io/${desired}`, roundTrip };
  });

const caseArbs = new Map<GeneratedLine, fc.Arbitrary<ConformanceCase>>();

/** The cases of a release: its five classes, and conversion for 1.9. */
export function caseArbOf(line: GeneratedLine): fc.Arbitrary<ConformanceCase> {
  let arb = caseArbs.get(line);
  if (arb === undefined) {
    const classes = [
      { weight: 2, arbitrary: defaultCaseArbOf(line) },
      { weight: 3, arbitrary: validateCaseArbOf(line) },
      { weight: 4, arbitrary: injectCaseArbOf(line) },
      { weight: 2, arbitrary: statusCaseArbOf(line) },
      { weight: 3, arbitrary: rolloutCaseArbOf(line) },
    ];
    arb = line === '1.9' ? fc.oneof(...classes, { weight: 1, arbitrary: convertCaseArb }) : fc.oneof(...classes);
    caseArbs.set(line, arb);
  }
  return arb;
}

/** `runs` cases of a release from `seed`; the same three always give the same cases. */
export function generateCases(runs: number, seed: number, line: GeneratedLine): ConformanceCase[] {
  if (runs <= 0) return [];
  return fc.sample(caseArbOf(line), { seed, numRuns: runs });
}
