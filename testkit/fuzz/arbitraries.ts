/**
 * Inputs for the admission fuzzer. Most start from something real (an
 * AdmissionReview as the API server sends it, Pods and SidecarSets that
 * mostly validate and mostly match each other, so that defaulting, the cross
 * checks and injection all run) and then break it in one way: bytes, a cut,
 * a wrong type, a huge or deep value, awkward keys.
 */
import fc from 'fast-check';
import type { LabelSelector, Namespace } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { validateSidecarSet } from '../../lib/sidecarset/validate.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { ADMISSION_FUNCTIONS, type AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { GVK_POD, GVK_SET, reviewAround as review } from '../reviews.ts';
import type { Cluster } from './handlers.ts';

/** How large "huge" gets: small enough for `npm test`, larger for `npm run fuzz`. */
export interface FuzzSize {
  /** Longest generated string, in characters. */
  maxString: number;
  /** Longest generated array, in items. */
  maxItems: number;
}

export const QUICK_SIZE: FuzzSize = { maxString: 100_000, maxItems: 1_000 };
export const FULL_SIZE: FuzzSize = { maxString: 2_000_000, maxItems: 20_000 };

/** One input: which function, the exact bytes of the body, and the cluster it is judged against. */
export interface BodyInput {
  fn: AdmissionFunctionName;
  body: Buffer;
  cluster: Cluster;
  /** What kind of damage this input carries, for the failure report. */
  label: string;
  /** The query string, when not the API server's usual `timeout=10s`. */
  query?: string;
  /**
   * False when the cluster holds SidecarSets no validation admitted: a
   * sidecar without a name, for one, is appended again on every call, so
   * only the first call's answer is checked.
   */
  reinvocable?: boolean;
}

/** Longest part of a body shown when a property fails. */
const SHOWN_BODY = 3_000;

/** An input that prints readably in a fast-check failure report (the body as text, cut short). */
export function bodyInput(fn: AdmissionFunctionName, body: Buffer, cluster: Cluster, label: string, query?: string): BodyInput {
  const input: BodyInput = query === undefined ? { fn, body, cluster, label } : { fn, body, cluster, label, query };
  Object.defineProperty(input, fc.toStringMethod, {
    value: () => {
      const text = body.toString('utf8');
      const shown = text.length > SHOWN_BODY ? `${text.slice(0, SHOWN_BODY)}... (${body.length} bytes)` : text;
      const sets = JSON.stringify(cluster.sidecarSets);
      return `${fn} <- ${label}${query === undefined ? '' : ` ?${query}`}\n  body: ${shown}\n  sidecarSets: ${sets.length > SHOWN_BODY ? `${sets.slice(0, SHOWN_BODY)}...` : sets}`;
    },
  });
  return input;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const functionName = fc.constantFrom(...ADMISSION_FUNCTIONS);

// ---------------------------------------------------------------------------
// Awkward text

/** Keys that are hard for JSON Pointer, prototypes, and UTF-8/UTF-16 handling. */
export const awkwardKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '~', '/', '~0', '~1', '~01', '~10', '/~', '~/', 'a/b', 'a~b', 'a~1b', '', ' ', '-', '0', '01',
    '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf',
    'example.com/a~b', 'kruise.io/sidecarset-hash', 'kruise.io/sidecarset-injected-list',
    '\u2028', '\u2029', '\u0000', '\ud800', '\udfff', '\ud83d\ude00', '𝄞', 'é', 'e\u0301', '<script>', '"', '\\', '%2F',
  ),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('~', '/', '0', '1', 'a', '\ud800', '😀'), maxLength: 8 }),
);

const anyText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: awkwardKey },
);

/** A JSON value of any type, small. */
const anyJson: fc.Arbitrary<Json> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.constantFrom(0, -1, 1, 2 ** 31, -(2 ** 63), 2 ** 53 + 1, 1e308, -1e-308, 0.5, 1e21),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  anyText,
  fc.constant<Json>([]),
  fc.constant<Json>({}),
  fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
  fc.dictionary(awkwardKey, anyText, { maxKeys: 3 }) as fc.Arbitrary<Json>,
);

const uid = fc.oneof(
  { weight: 4, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }) },
  { weight: 1, arbitrary: awkwardKey.filter((k) => k !== '') },
);

// ---------------------------------------------------------------------------
// Pods and SidecarSets that mostly make sense together

const labelKey = fc.constantFrom('app', 'tier', 'example.com/team', 'sidecar.io/inject');
const labelValue = fc.constantFrom('web', 'api', 'db', 'true', '');
const labels = fc.dictionary(labelKey, labelValue, { maxKeys: 3 });
const containerName = fc.constantFrom('app', 'web', 'log', 'proxy', 'dns-f', 'istio-proxy', 'init', 'agent');
const envName = fc.constantFrom('A', 'B', 'POD_IP', 'PATH', 'IS_INJECTED', 'TOKEN');
const volumeName = fc.constantFrom('data', 'logs', 'certs', 'cache');
const image = fc.constantFrom('nginx:1.27', 'busybox', 'app:latest', 'registry.example.com:5000/team/log@sha256:' + 'a'.repeat(64), 'x');
const namespaceName = fc.constantFrom('shop', 'default', 'team-a', 'unlisted');

const envVar = fc.oneof(
  fc.record({ name: envName, value: fc.oneof(fc.constant('true'), fc.string({ maxLength: 8 })) }),
  fc.record({ name: envName, valueFrom: fc.constant({ fieldRef: { fieldPath: 'status.podIP' } }) }),
);
const volumeMount = fc.record(
  {
    name: volumeName,
    mountPath: fc.constantFrom('/data', '/var/log', '/etc/certs', '/cache'),
    subPathExpr: fc.constantFrom('$(A)', '$(POD_IP)/x', 'plain', '$(MISSING)'),
    readOnly: fc.boolean(),
  },
  { requiredKeys: ['name', 'mountPath'] },
);
const containerFields = {
  name: containerName,
  image,
  env: fc.array(envVar, { maxLength: 3 }),
  volumeMounts: fc.array(volumeMount, { maxLength: 2 }),
  ports: fc.array(fc.record({ containerPort: fc.integer({ min: 1, max: 65535 }), name: fc.constantFrom('http', 'metrics') }, { requiredKeys: ['containerPort'] }), { maxLength: 2 }),
  resources: fc.constant({ limits: { cpu: '100m', memory: '64Mi' } }),
  args: fc.array(fc.string({ maxLength: 6 }), { maxLength: 2 }),
};
const appContainer = fc.record(containerFields, { requiredKeys: ['name', 'image'] });

/** Annotation values a pod may already carry, from a Kruise injection or a damaged one. */
const hashAnnotationValue = fc.oneof(
  fc.constant(''),
  fc.constant('{}'),
  fc.constant('{"alpha":"oldhash"}'),
  fc.constant('{"alpha":{"updateTimestamp":"2026-01-01T00:00:00Z","hash":"h","sidecarSetName":"alpha","sidecarList":["log"]}}'),
  fc.constant('{"alpha":"h","beta":{}}'),
  fc.constant('not json'),
  fc.constant('[1]'),
);

const podAnnotations = fc
  .record(
    {
      plain: fc.dictionary(fc.oneof(labelKey, awkwardKey), fc.string({ maxLength: 10 }), { maxKeys: 3 }),
      hash: hashAnnotationValue,
      injected: fc.constantFrom('alpha', 'alpha,beta', ',', ''),
      merge: fc.constantFrom('{"a":1}', '[]', 'nope', '{"b":{"c":null}}'),
    },
    { requiredKeys: ['plain'] },
  )
  .map(({ plain, hash, injected, merge }) => ({
    ...plain,
    ...(hash === undefined ? {} : { 'kruise.io/sidecarset-hash': hash, 'kruise.io/sidecarset-hash-without-image': hash }),
    ...(injected === undefined ? {} : { 'kruise.io/sidecarset-injected-list': injected }),
    ...(merge === undefined ? {} : { 'example.com/merged': merge }),
  }));

/** A Pod as a controller creates it: usually valid, usually labelled so that some set selects it. */
export const podArb = fc
  .record(
    {
      name: fc.constantFrom('web-1', ''),
      generateName: fc.constant('web-7d9c6b-'),
      namespace: namespaceName,
      labels,
      annotations: podAnnotations,
      containers: fc.array(appContainer, { minLength: 1, maxLength: 4 }),
      initContainers: fc.array(appContainer, { maxLength: 2 }),
      volumes: fc.array(fc.record({ name: volumeName, emptyDir: fc.constant({}) }), { maxLength: 3 }),
      imagePullSecrets: fc.array(fc.record({ name: fc.constantFrom('regcred', 'other') }), { maxLength: 2 }),
      deleting: fc.constant('2026-11-30T11:00:00Z'),
    },
    { requiredKeys: ['labels', 'containers'] },
  )
  .map((p) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...(p.name === undefined ? {} : { name: p.name }),
      ...(p.generateName === undefined ? {} : { generateName: p.generateName }),
      ...(p.namespace === undefined ? {} : { namespace: p.namespace }),
      labels: p.labels,
      ...(p.annotations === undefined ? {} : { annotations: p.annotations }),
      ...(p.deleting === undefined ? {} : { deletionTimestamp: p.deleting }),
    },
    spec: {
      containers: p.containers,
      ...(p.initContainers === undefined ? {} : { initContainers: p.initContainers }),
      ...(p.volumes === undefined ? {} : { volumes: p.volumes }),
      ...(p.imagePullSecrets === undefined ? {} : { imagePullSecrets: p.imagePullSecrets }),
      restartPolicy: 'Always',
    },
  }));

const transferEnv = fc.oneof(
  fc.record({ sourceContainerName: containerName, envName }),
  fc.record({ sourceContainerName: containerName, envNames: fc.uniqueArray(envName, { minLength: 1, maxLength: 3 }) }),
  fc.record({
    sourceContainerNameFrom: fc.record({
      fieldRef: fc.record({ fieldPath: fc.constantFrom("metadata.labels['app']", "metadata.annotations['example.com/x']") }),
    }),
    envNames: fc.uniqueArray(envName, { minLength: 1, maxLength: 2 }),
  }),
);

/** A sidecar container; init sidecars are sometimes native sidecars (restartPolicy Always). */
function sidecarContainer(init: boolean) {
  return fc.record(
    {
      name: containerName,
      image,
      env: fc.uniqueArray(envVar, { maxLength: 3, selector: (e) => e.name }),
      volumeMounts: fc.uniqueArray(volumeMount, { maxLength: 2, selector: (m) => m.mountPath }),
      ports: fc.uniqueArray(
        fc.record({ containerPort: fc.integer({ min: 1, max: 65535 }), name: fc.constantFrom('http', 'metrics') }),
        { maxLength: 2, selector: (port) => port.name },
      ),
      resources: containerFields.resources,
      podInjectPolicy: fc.constantFrom('BeforeAppContainer', 'AfterAppContainer'),
      shareVolumePolicy: fc.record({ type: fc.constantFrom('enabled', 'disabled') }),
      // HotUpgrade needs the image of its idle copy (validation requires it).
      upgradeStrategy: fc.constantFrom(
        { upgradeType: 'ColdUpgrade' },
        { upgradeType: 'ColdUpgrade' },
        { upgradeType: 'ColdUpgrade' },
        { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
      ),
      transferEnv: fc.array(transferEnv, { maxLength: 2 }),
      ...(init ? { restartPolicy: fc.constant('Always') } : {}),
    },
    { requiredKeys: ['name', 'image'] },
  );
}

const selector = fc.oneof(
  { weight: 4, arbitrary: fc.record({ matchLabels: fc.dictionary(labelKey, labelValue, { minKeys: 1, maxKeys: 2 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      matchExpressions: fc.array(
        fc.oneof(
          fc.record({ key: labelKey, operator: fc.constantFrom('In', 'NotIn'), values: fc.uniqueArray(labelValue, { minLength: 1, maxLength: 2 }) }),
          fc.record({ key: labelKey, operator: fc.constantFrom('Exists', 'DoesNotExist') }),
        ),
        { minLength: 1, maxLength: 2 },
      ),
    }),
  },
  // Invalid (validation refuses it), so only reviews carry it, never the cluster.
  { weight: 1, arbitrary: fc.constant({}) },
);

const patchPodMetadata = fc.record({
  annotations: fc.dictionary(
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('example.com/merged', 'example.com/x', 'example.com/y', 'sidecar.io/config') },
      { weight: 1, arbitrary: awkwardKey },
    ),
    fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('{"b":2}', '{"b":{"c":1}}', 'null', '[]')),
    { minKeys: 1, maxKeys: 2 },
  ),
  patchPolicy: fc.constantFrom('Retain', 'Overwrite', 'MergePatchJson', ''),
});

/** A SidecarSet as a user writes it: mostly valid, with names and labels drawn from the pods' pools. */
export const userSidecarSetArb = fc
  .record(
    {
      name: fc.constantFrom('alpha', 'beta', 'gamma', 'log-agent', 'dns'),
      selector,
      scope: fc.oneof(
        fc.record({ namespace: namespaceName }),
        fc.record({ namespaceSelector: fc.constantFrom<LabelSelector>({ matchLabels: { env: 'prod' } }, { matchExpressions: [{ key: 'env', operator: 'Exists' }] }) }),
      ),
      containers: fc.uniqueArray(sidecarContainer(false), { minLength: 1, maxLength: 3, selector: (c) => c.name }),
      initContainers: fc.uniqueArray(sidecarContainer(true), { maxLength: 2, selector: (c) => c.name }),
      extraVolumes: fc.uniqueArray(volumeName, { maxLength: 2 }),
      imagePullSecrets: fc.uniqueArray(fc.record({ name: fc.constantFrom('regcred', 'sidecar-cred') }), { maxLength: 2, selector: (r) => r.name }),
      patchPodMetadata: fc.array(patchPodMetadata, { maxLength: 1 }),
      paused: fc.boolean(),
      latestRevision: fc.constantFrom('alpha-7f9c', ''),
    },
    { requiredKeys: ['name', 'selector', 'containers'] },
  )
  .map((s): SidecarSet => {
    const names = new Set(s.containers.map((c) => c.name));
    // Names are unique across containers and init containers.
    const initContainers = s.initContainers?.filter((c) => !names.has(c.name));
    const mounted = [...s.containers, ...(initContainers ?? [])].flatMap((c) => (c.volumeMounts ?? []).map((m) => m.name));
    const volumes = [...new Set([...mounted, ...(s.extraVolumes ?? [])])].map((name) => ({ name, emptyDir: {} }));
    const nativeSidecar = initContainers?.some((c) => c.restartPolicy === 'Always') === true;
    return {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: s.name, generation: 1 },
      spec: {
        selector: s.selector,
        ...s.scope,
        containers: s.containers,
        ...(initContainers === undefined ? {} : { initContainers }),
        ...(volumes.length === 0 ? {} : { volumes }),
        ...(s.imagePullSecrets === undefined ? {} : { imagePullSecrets: s.imagePullSecrets }),
        ...(s.patchPodMetadata === undefined ? {} : { patchPodMetadata: s.patchPodMetadata }),
        ...(s.paused === undefined ? {} : { injectionStrategy: { paused: s.paused } }),
        // Native sidecars cannot be updated in place, so such a set must not roll.
        ...(nativeSidecar ? { updateStrategy: { type: 'NotUpdate' } } : {}),
      },
      ...(s.latestRevision === undefined ? {} : { status: { latestRevision: s.latestRevision } }),
    };
  });

const namespaces: readonly Namespace[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: { env: 'prod' } } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { env: 'dev' } } },
];

const namespaceLabelMap = new Map(namespaces.map((ns) => [ns.metadata?.name ?? '', { ...ns.metadata?.labels }]));

/**
 * The sets a cluster would hold after these were created in order: each
 * defaulted, then kept only when its name is new and the validating
 * webhook's rules admit it next to those already kept (so sets never
 * conflict, as in a real cluster).
 */
export function admitted(sets: readonly SidecarSet[]): SidecarSet[] {
  const kept: SidecarSet[] = [];
  for (const set of sets) {
    // A second set of the same name is refused by the API server itself (AlreadyExists).
    if (kept.some((k) => k.metadata?.name === set.metadata?.name)) continue;
    const stored = defaultSidecarSet(set);
    const errors = validateSidecarSet(stored, { operation: 'CREATE', others: kept, namespaceLabels: namespaceLabelMap });
    if (errors.length === 0) kept.push(stored);
  }
  return kept;
}

/** The cluster: up to four admitted sets and three namespaces. */
export const clusterArb: fc.Arbitrary<Cluster> = fc
  .array(userSidecarSetArb, { maxLength: 4 })
  .map((sets) => ({ sidecarSets: admitted(sets), namespaces }));

// ---------------------------------------------------------------------------
// AdmissionReviews

/** A Pod CREATE review (sometimes another operation or a subresource), the namespace on the request. */
export const podReviewArb = fc
  .record({ uid, pod: podArb, namespace: fc.option(namespaceName, { nil: undefined }), operation: fc.constantFrom('CREATE', 'CREATE', 'CREATE', 'UPDATE'), subResource: fc.constantFrom('', '', 'status') })
  .map(({ uid: u, pod, namespace, operation, subResource }) => {
    const r = review(u, GVK_POD, 'pods', operation, pod, operation === 'UPDATE' ? pod : null, namespace);
    return subResource === '' ? r : { ...r, request: { ...r.request, subResource } };
  });

/** A SidecarSet CREATE or UPDATE review, of a set as the user wrote it or already defaulted. */
export const sidecarSetReviewArb = fc
  .record({ uid, set: userSidecarSetArb, defaulted: fc.boolean(), operation: fc.constantFrom('CREATE', 'UPDATE'), old: userSidecarSetArb })
  .map(({ uid: u, set, defaulted, operation, old }) => {
    const object = defaulted ? defaultSidecarSet(set) : set;
    return review(u, GVK_SET, 'sidecarsets', operation, object, operation === 'UPDATE' ? defaultSidecarSet(old) : null, undefined);
  });

/** Any review, with a function that usually is the one it was made for. */
export const reviewInputArb: fc.Arbitrary<{ fn: AdmissionFunctionName; review: Record<string, unknown>; cluster: Cluster }> = fc.oneof(
  fc.record({ fn: fc.constant('pod-inject' as const), review: podReviewArb, cluster: clusterArb }),
  fc.record({ fn: fc.constantFrom('sidecarset-default' as const, 'sidecarset-validate' as const), review: sidecarSetReviewArb, cluster: clusterArb }),
  fc.record({ fn: functionName, review: fc.oneof(podReviewArb, sidecarSetReviewArb), cluster: clusterArb }),
);

function jsonBody(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

// ---------------------------------------------------------------------------
// Mutations: wrong types, deleted keys, added keys, anywhere in a review

type PathStep = string | number;

/** Every node's path in a JSON value, the root first. */
export function nodePaths(value: unknown): PathStep[][] {
  const out: PathStep[][] = [];
  const stack: { node: unknown; path: PathStep[] }[] = [{ node: value, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    out.push(path);
    if (Array.isArray(node)) node.forEach((item: unknown, i) => stack.push({ node: item, path: [...path, i] }));
    else if (node !== null && typeof node === 'object') for (const [k, v] of Object.entries(node)) stack.push({ node: v, path: [...path, k] });
  }
  return out;
}

function parentAndKey(root: unknown, path: readonly PathStep[]): { parent: Record<string, unknown> | unknown[]; key: PathStep } | undefined {
  if (path.length === 0) return undefined;
  let node = root as Record<string, unknown>;
  for (const step of path.slice(0, -1)) node = node[step] as Record<string, unknown>;
  return { parent: node, key: path[path.length - 1]! };
}

function define(parent: Record<string, unknown> | unknown[], key: PathStep, value: unknown): void {
  // Defined, not assigned: a `__proto__` key is an ordinary member in JSON.
  Object.defineProperty(parent, key, { value, enumerable: true, writable: true, configurable: true });
}

export type Mutation =
  | { kind: 'replace'; pick: number; value: Json }
  | { kind: 'delete'; pick: number }
  | { kind: 'add'; pick: number; key: string; value: Json };

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('replace' as const), pick: fc.nat(), value: anyJson }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('add' as const), pick: fc.nat(), key: awkwardKey, value: anyJson }) },
);

/** Applies mutations to a copy; paths are picked modulo the current node count. */
export function mutate(value: unknown, mutations: readonly Mutation[]): unknown {
  let root = structuredClone(value);
  for (const m of mutations) {
    const paths = nodePaths(root);
    const path = paths[m.pick % paths.length]!;
    const at = parentAndKey(root, path);
    if (m.kind === 'replace') {
      if (at === undefined) root = structuredClone(m.value);
      else define(at.parent, at.key, structuredClone(m.value));
    } else if (m.kind === 'delete') {
      if (at === undefined) continue;
      if (Array.isArray(at.parent)) at.parent.splice(Number(at.key), 1);
      else Reflect.deleteProperty(at.parent, at.key);
    } else {
      const target = at === undefined ? root : (at.parent as Record<string, unknown>)[at.key];
      if (target !== null && typeof target === 'object' && !Array.isArray(target)) define(target as Record<string, unknown>, m.key, structuredClone(m.value));
    }
  }
  return root;
}

/** A real review with one to four nodes replaced by another type, deleted, or given an extra key. */
export const mutatedReviewArb: fc.Arbitrary<BodyInput> = fc
  .record({ input: reviewInputArb, mutations: fc.array(mutationArb, { minLength: 1, maxLength: 4 }) })
  .map(({ input, mutations }) => bodyInput(input.fn, jsonBody(mutate(input.review, mutations)), input.cluster, `mutated ${JSON.stringify(mutations).slice(0, 300)}`));

/** `?timeout=` as the API server sends it, and as it should never arrive. */
const queryArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('timeout=10s', 'timeout=30s', 'timeout=1m0s', 'timeout=2.5s') },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.constantFrom('', 'timeout=', 'timeout=0s', 'timeout=-5s', 'timeout=abc', 'timeout=1e3s', 'timeout=10s&timeout=5s', `timeout=${'9'.repeat(400)}h`, 'timeout=%F0%9F%98%80'),
      fc.string({ maxLength: 20 }).map((t) => `timeout=${encodeURIComponent(t)}`),
    ),
  },
);

/** A real review, untouched but for its query: the path every real request takes. */
export const realReviewArb: fc.Arbitrary<BodyInput> = fc
  .record({ input: reviewInputArb, query: queryArb })
  .map(({ input, query }) => bodyInput(input.fn, jsonBody(input.review), input.cluster, 'real review', query));

// ---------------------------------------------------------------------------
// Bytes and cuts

export const randomBytesArb: fc.Arbitrary<BodyInput> = fc
  .record({
    fn: functionName,
    bytes: fc.oneof(
      fc.uint8Array({ maxLength: 512 }),
      // Mostly-JSON bytes reach deeper into the parser than noise does.
      fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', ':', ',', '\\', 'u', '0', 'a', ' ', 'null', 'true', '-', 'e', '.'), maxLength: 200 }).map((s) => Buffer.from(s)),
    ),
  })
  .map(({ fn, bytes }) => bodyInput(fn, Buffer.from(bytes), { sidecarSets: [], namespaces: [] }, 'random bytes'));

/** A real review cut short at any byte, sometimes inside a multi-byte character. */
export const truncatedReviewArb: fc.Arbitrary<BodyInput> = fc
  .record({ input: reviewInputArb, cut: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }) })
  .map(({ input, cut }) => {
    const full = jsonBody(input.review);
    return bodyInput(input.fn, full.subarray(0, Math.floor(full.length * cut)), input.cluster, `truncated at ${cut}`);
  });

// ---------------------------------------------------------------------------
// Editing a copy of a review

type JsonRecord = Record<string, unknown>;

function isRecord(value: unknown): value is JsonRecord {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The object at `holder[key]`, created there when absent or of another type. */
function child(holder: JsonRecord, key: string): JsonRecord {
  const value = holder[key];
  if (isRecord(value)) return value;
  const created: JsonRecord = {};
  holder[key] = created;
  return created;
}

/** A copy of a review and the parts of it the generators below edit. */
function editable(review: unknown) {
  const copy = structuredClone(review) as JsonRecord;
  const request = child(copy, 'request');
  const object = child(request, 'object');
  const metadata = child(object, 'metadata');
  const spec = child(object, 'spec');
  const containers = spec.containers;
  const firstContainer = Array.isArray(containers) && isRecord(containers[0]) ? containers[0] : undefined;
  return { copy, request, object, metadata, spec, firstContainer };
}

// ---------------------------------------------------------------------------
// Huge values

const HUGE_PLACES = ['uid', 'annotation', 'name', 'image', 'label-value', 'quantity', 'spaced-quantity', 'many-containers', 'many-env', 'many-keys', 'many-sets', 'kind', 'namespace'] as const;

/** A real review with one value made huge: a long string, a long array or an object with many keys. */
export function hugeReviewArb(size: FuzzSize): fc.Arbitrary<BodyInput> {
  return fc
    .record({
      input: reviewInputArb,
      place: fc.constantFrom(...HUGE_PLACES),
      length: fc.integer({ min: 1_000, max: size.maxString }),
      items: fc.integer({ min: 100, max: size.maxItems }),
      char: fc.constantFrom('a', 'é', '😀', '~', '/', '"', '\\'),
    })
    .map(({ input, place, length, items, char }) => {
      const { copy, request, metadata, spec, firstContainer } = editable(input.review);
      const text = char.repeat(Math.max(1, Math.floor(length / char.length)));
      let cluster = input.cluster;
      switch (place) {
        case 'uid':
          request.uid = text;
          break;
        case 'kind':
          request.kind = { group: text, version: 'v1', kind: text };
          break;
        case 'namespace':
          request.namespace = text;
          break;
        case 'annotation':
          child(metadata, 'annotations')['example.com/large'] = text;
          break;
        case 'name':
          metadata.name = text;
          break;
        case 'image':
          if (firstContainer) firstContainer.image = text;
          break;
        case 'label-value':
          child(metadata, 'labels').app = text;
          break;
        // Quantities are parsed (for the hash and the checks) with BigInt arithmetic.
        case 'quantity':
          if (firstContainer) firstContainer.resources = { limits: { cpu: '9'.repeat(length), memory: `1${'0'.repeat(length)}` } };
          break;
        case 'spaced-quantity':
          if (firstContainer) firstContainer.resources = { requests: { cpu: `1${' '.repeat(length)}m` } };
          break;
        case 'many-containers':
          spec.containers = Array.from({ length: items }, (_, i) => ({ name: `c${i}`, image: 'x:1' }));
          break;
        case 'many-env':
          if (firstContainer) firstContainer.env = Array.from({ length: items }, (_, i) => ({ name: `E${i}`, value: char }));
          break;
        case 'many-keys':
          metadata.annotations = Object.fromEntries(Array.from({ length: items }, (_, i) => [`k${i}${char}`, char]));
          break;
        case 'many-sets': {
          const [first] = cluster.sidecarSets;
          if (first !== undefined) {
            cluster = { ...cluster, sidecarSets: Array.from({ length: Math.min(items, 500) }, (_, i) => ({ ...first, metadata: { ...first.metadata, name: `set-${i}` } })) };
          }
          break;
        }
      }
      return bodyInput(input.fn, jsonBody(copy), cluster, `huge ${place} (${length} chars, ${items} items, ${JSON.stringify(char)})`);
    });
}

// ---------------------------------------------------------------------------
// Deep nesting, written as text so that building the input never recurses

const DEEP_MARK = '__fuzz_deep__';
const DEEP_PLACES = ['root', 'request', 'object-unknown', 'spec-unknown', 'container-unknown', 'container-args', 'metadata-name', 'label', 'old-object', 'options'] as const;

function nested(depth: number, shape: 'array' | 'object' | 'mixed', leaf: string): string {
  const open: string[] = [];
  const close: string[] = [];
  for (let i = 0; i < depth; i++) {
    const array = shape === 'array' || (shape === 'mixed' && i % 2 === 0);
    open.push(array ? '[' : '{"~/":');
    close.push(array ? ']' : '}');
  }
  return `${open.join('')}${leaf}${close.reverse().join('')}`;
}

/** A real review with a value nested `depth` levels deep somewhere (up to 12,000: past Go's 10,000 limit). */
export const deepReviewArb: fc.Arbitrary<BodyInput> = fc
  .record({
    input: reviewInputArb,
    place: fc.constantFrom(...DEEP_PLACES),
    depth: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 64, max: 2_000 }), fc.integer({ min: 2_000, max: 12_000 })),
    shape: fc.constantFrom('array' as const, 'object' as const, 'mixed' as const),
  })
  .map(({ input, place, depth, shape }) => {
    const label = `deep ${place} ${depth} ${shape}`;
    if (place === 'root') return bodyInput(input.fn, Buffer.from(nested(depth, shape, JSON.stringify(input.review))), input.cluster, label);
    const { copy, request, object, metadata, spec, firstContainer } = editable(input.review);
    switch (place) {
      case 'request':
        request.future = DEEP_MARK;
        break;
      case 'object-unknown':
        object.x = DEEP_MARK;
        break;
      case 'spec-unknown':
        spec.x = DEEP_MARK;
        break;
      case 'container-unknown':
        if (firstContainer) firstContainer.x = DEEP_MARK;
        break;
      case 'container-args':
        if (firstContainer) firstContainer.args = DEEP_MARK;
        break;
      case 'metadata-name':
        metadata.name = DEEP_MARK;
        break;
      case 'label':
        metadata.labels = { app: DEEP_MARK };
        break;
      case 'old-object':
        request.oldObject = DEEP_MARK;
        break;
      case 'options':
        request.options = DEEP_MARK;
        break;
    }
    const text = JSON.stringify(copy).replace(JSON.stringify(DEEP_MARK), nested(depth, shape, '"leaf"'));
    return bodyInput(input.fn, Buffer.from(text), input.cluster, label);
  });

// ---------------------------------------------------------------------------
// Awkward keys where they reach a patch

const KEY_PLACES = ['annotations', 'labels', 'object', 'spec', 'container', 'set-patch-metadata'] as const;

/** Unicode, `~`, `/`, `__proto__` and friends as keys in places that end up in patch paths. */
export const awkwardKeysArb: fc.Arbitrary<BodyInput> = fc
  .record({
    input: reviewInputArb,
    place: fc.constantFrom(...KEY_PLACES),
    keys: fc.array(awkwardKey, { minLength: 1, maxLength: 4 }),
    value: fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('{"a":1}', '~1', '/')),
  })
  .map(({ input, place, keys, value }) => {
    const { copy, object, metadata, spec, firstContainer } = editable(input.review);
    let cluster = input.cluster;
    const entries = (): Record<string, string> => {
      const out: Record<string, string> = {};
      for (const k of keys) define(out, k, value);
      return out;
    };
    const addTo = (target: JsonRecord) => {
      for (const [k, v] of Object.entries(entries())) define(target, k, v);
    };
    switch (place) {
      case 'annotations':
        addTo(child(metadata, 'annotations'));
        break;
      case 'labels':
        addTo(child(metadata, 'labels'));
        break;
      case 'object':
        addTo(object);
        break;
      case 'spec':
        addTo(spec);
        break;
      case 'container':
        if (firstContainer) addTo(firstContainer);
        break;
      case 'set-patch-metadata':
        cluster = {
          ...cluster,
          sidecarSets: cluster.sidecarSets.map((s) => ({
            ...s,
            spec: { ...s.spec, patchPodMetadata: [{ annotations: entries(), patchPolicy: 'Overwrite' }] },
          })),
        };
        break;
    }
    return bodyInput(input.fn, jsonBody(copy), cluster, `keys in ${place}: ${JSON.stringify(keys)}`);
  });

// ---------------------------------------------------------------------------
// Pods against the sets that select them

/** A Pod CREATE review and a cluster whose sets are made to select it. */
export const matchingPodArb: fc.Arbitrary<BodyInput> = fc
  .record({ uid, pod: podArb, sets: fc.array(userSidecarSetArb, { minLength: 1, maxLength: 4 }), namespace: fc.constantFrom('shop', 'default', 'team-a'), keepSelectors: fc.boolean() })
  .map(({ uid: u, pod: generated, sets, namespace, keepSelectors }) => {
    // Not being deleted, and selected: the path that injects. Generated
    // values are shared with shrinking, so they are copied, never edited.
    const metadata: Record<string, unknown> = { ...generated.metadata };
    Reflect.deleteProperty(metadata, 'deletionTimestamp');
    const pod = { ...generated, metadata };
    const selecting = sets.map((s) => {
      if (keepSelectors) return s;
      const spec: Record<string, unknown> = { ...s.spec, selector: { matchLabels: { ...generated.metadata.labels, 'example.com/fuzz': 'match' } } };
      if (spec.namespace !== undefined) spec.namespace = namespace;
      return { ...s, spec };
    });
    const podLabels = keepSelectors ? generated.metadata.labels : { ...generated.metadata.labels, 'example.com/fuzz': 'match' };
    const selected = { ...pod, metadata: { ...metadata, labels: podLabels } };
    return bodyInput('pod-inject', jsonBody(review(u, GVK_POD, 'pods', 'CREATE', selected, null, namespace)), { sidecarSets: admitted(selecting), namespaces }, 'pod with matching sets');
  });

/**
 * Stored SidecarSets damaged anywhere (wrong types, deleted or extra keys):
 * what an older webhook, Kruise's own, or a hand edit with the webhooks down
 * may have left in the cluster. A matching pod, or a valid set to validate
 * against them, must still get a documented answer.
 */
export const brokenClusterArb: fc.Arbitrary<BodyInput> = fc
  .record({
    target: fc.oneof(matchingPodArb, sidecarSetReviewArb.map((r) => bodyInput('sidecarset-validate', jsonBody(r), { sidecarSets: [], namespaces }, 'set'))),
    sets: fc.array(userSidecarSetArb, { minLength: 1, maxLength: 3 }),
    damage: fc.array(fc.array(mutationArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
  })
  .map(({ target, sets, damage }) => {
    // Injection's own sets (made to select the pod) when there are some, else these.
    const intact = target.cluster.sidecarSets.length > 0 ? target.cluster.sidecarSets : admitted(sets);
    const broken = intact.map((set, i) => {
      const damaged = mutate(set, damage[i % damage.length] ?? []);
      // A list item is always an object (both sources check); only its insides are damaged.
      return isRecord(damaged) ? damaged : set;
    });
    const input = bodyInput(target.fn, target.body, { ...target.cluster, sidecarSets: broken }, `${target.label} against damaged sets ${JSON.stringify(damage).slice(0, 300)}`);
    input.reinvocable = false;
    return input;
  });

/**
 * Resource expressions a set author may write (OpenKruise 1.9
 * `resourcesPolicy`): the calculator's tokens mixed with junk bytes, any
 * text, deep parentheses and expressions past the length bound.
 */
export const resourceExprArb: fc.Arbitrary<string> = fc.oneof(
  fc
    .array(fc.constantFrom('cpu', 'memory', 'CPU', 'max(', 'min(', 'foo(', '(', ')', ',', '+', '-', '*', '/', '50%', '100m', '200Mi', '1.5Gi', '0', '1.5', '1e3', '1e400', '.', 'e', '%', '@', 'é', '\u0000', ' ', '\n', 'x'), { maxLength: 60 })
    .map((tokens) => tokens.join('')),
  fc.string({ maxLength: 40 }),
  fc.nat({ max: 3_000 }).map((n) => `${'('.repeat(n)}1${')'.repeat(n)}`),
  fc.nat({ max: 3_000 }).map((n) => `${'max(1,'.repeat(n)}1${')'.repeat(n)}`),
  fc.nat({ max: 1_500 }).map((n) => `1${'+1'.repeat(n)}`),
  fc.nat({ max: 3_000 }).map((n) => `${'-'.repeat(n)}cpu`),
);

/** Target-name patterns: Go RE2, broken ones, catastrophic ones for a backtracking engine, oversized ones. */
const targetRegexArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('.*', '^app$', '', '(a+)+$', '(x+x+)+y', '(', '[z-a]', 'a{1001}', '(a{999}|b{999}|c{999})', '\\pL+', '(?i)APP', 'x'.repeat(300)),
  fc.string({ maxLength: 30 }),
);

/**
 * A SidecarSet whose sidecar has a random resourcesPolicy, validated as a
 * review, or stored unvalidated and injected into a pod it selects, whose
 * containers have random names (some long, some catastrophic for a
 * backtracking regex) and resources.
 */
export const resourcesPolicyArb: fc.Arbitrary<BodyInput> = fc
  .record({
    uid,
    asSet: fc.boolean(),
    mode: fc.constantFrom('sum', 'max', 'avg', undefined),
    regex: fc.option(targetRegexArb, { nil: undefined }),
    exprs: fc.record({ cpu: resourceExprArb, memory: resourceExprArb }, { requiredKeys: [] }),
    requests: fc.record({ cpu: resourceExprArb, memory: resourceExprArb }, { requiredKeys: [] }),
    names: fc.array(fc.oneof(fc.constantFrom('app', 'web', 'db'), fc.nat({ max: 20_000 }).map((n) => `${'x'.repeat(n)}!`)), { minLength: 1, maxLength: 4 }),
    cpu: fc.constantFrom(undefined, '100m', '2', '1.5Gi', '9223372036854775807', 'x'),
  })
  .map(({ uid: u, asSet, mode, regex, exprs, requests, names, cpu }) => {
    const resourcesPolicy: Record<string, unknown> = { resourcesExpr: { limits: exprs, requests } };
    if (mode !== undefined) resourcesPolicy.targetContainersMode = mode;
    if (regex !== undefined) resourcesPolicy.targetContainersNameRegex = regex;
    const set: SidecarSet = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'sized' },
      spec: { selector: { matchLabels: { app: 'sized' } }, containers: [{ name: 'sized-agent', image: 'agent:1', resourcesPolicy }] },
    };
    if (asSet) return bodyInput('sidecarset-validate', jsonBody(review(u, GVK_SET, 'sidecarsets', 'CREATE', set, null, undefined)), { sidecarSets: [], namespaces }, 'set with a resourcesPolicy');
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'shop', labels: { app: 'sized' } },
      spec: { containers: names.map((name) => ({ name, image: 'app:1', ...(cpu === undefined ? {} : { resources: { limits: { cpu }, requests: { cpu } } }) })) },
    };
    const input = bodyInput('pod-inject', jsonBody(review(u, GVK_POD, 'pods', 'CREATE', pod, null, 'shop')), { sidecarSets: [defaultSidecarSet(set)], namespaces }, 'pod against a stored resourcesPolicy');
    input.reinvocable = false;
    return input;
  });
