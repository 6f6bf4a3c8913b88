/**
 * The fuzz properties, shared by the seeded run in `npm test` and the longer
 * `npm run fuzz`. Each sends its inputs through every handler (the Lambda
 * handler and the HTTPS server) and checks every answer against the oracle;
 * the handlers must also agree with each other byte for byte.
 */
import fc from 'fast-check';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../../lib/webhooks/http-handler.ts';
import { ADMISSION_FUNCTIONS, type AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { appPod, podReview, PREVIOUS_SECRET, SECRET, sidecarSetReview, STRANGER_SECRET } from '../reviews.ts';
import {
  admitted,
  awkwardKeysArb,
  bodyInput,
  brokenClusterArb,
  deepReviewArb,
  hugeReviewArb,
  matchingPodArb,
  mutate,
  mutatedReviewArb,
  nodePaths,
  randomBytesArb,
  realReviewArb,
  resourcesPolicyArb,
  truncatedReviewArb,
  type BodyInput,
  type FuzzSize,
} from './arbitraries.ts';
import { ClusterView, EMPTY_CLUSTER, FUZZ_NOW, type WebhookHandler, type HandlerAnswer, type HandlerRequest } from './handlers.ts';
import { checkAnswer, checkNoLeak, ContractViolation } from './oracle.ts';

export interface FuzzEnv {
  view: ClusterView;
  handlers: readonly WebhookHandler[];
  size: FuzzSize;
}

export interface FuzzProperty {
  name: string;
  /** What it sends, for the report. */
  description: string;
  /** Runs in the seeded `npm test` run; `npm run fuzz` multiplies them. */
  quickRuns: number;
  property: fc.IAsyncProperty<[unknown]>;
}

/** A short description of an input for failure messages (bodies may be megabytes). */
function describeInput(label: string, fn: string, body: Buffer): string {
  const text = body.toString('utf8');
  return `${fn} <- ${label}: ${body.length} bytes, ${JSON.stringify(text.slice(0, 200))}${text.length > 200 ? '...' : ''}`;
}

async function sendEverywhere(env: FuzzEnv, request: HandlerRequest, check: (answer: HandlerAnswer, handler: WebhookHandler) => void, label: string): Promise<void> {
  const answers: { handler: WebhookHandler; answer: HandlerAnswer }[] = [];
  for (const handler of env.handlers) {
    const answer = await handler.send(request);
    try {
      check(answer, handler);
    } catch (error) {
      if (error instanceof ContractViolation) {
        throw new ContractViolation(`${handler.name}: ${error.message}\n  input: ${describeInput(label, request.fn, request.body)}`);
      }
      throw error;
    }
    answers.push({ handler, answer });
  }
  const [first, ...rest] = answers;
  for (const other of rest) {
    if (first && (other.answer.status !== first.answer.status || other.answer.body !== first.answer.body)) {
      throw new ContractViolation(
        `${first.handler.name} and ${other.handler.name} disagree: ${first.answer.status} ${first.answer.body.slice(0, 200)} vs ${other.answer.status} ${other.answer.body.slice(0, 200)}\n  input: ${describeInput(label, request.fn, request.body)}`,
      );
    }
  }
}

function bodyProperty(env: FuzzEnv, arbitrary: fc.Arbitrary<BodyInput>): fc.IAsyncProperty<[unknown]> {
  return fc.asyncProperty(arbitrary, async (input) => {
    env.view.current = input.cluster;
    try {
      const request = input.query === undefined ? { fn: input.fn, body: input.body } : { fn: input.fn, body: input.body, query: input.query };
      await sendEverywhere(env, request, (answer) => {
        checkAnswer(input, answer);
      }, input.label);
    } finally {
      env.view.current = EMPTY_CLUSTER;
    }
  });
}

// ---------------------------------------------------------------------------
// Strangers and malformed requests

const NOT_FOUND_BODY = '{"message":"Not Found"}';
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH'] as const;

/** Paths and headers that carry no valid secret, some of them close to one. */
const strangerCredentials = fc.oneof(
  fc.record({
    path: fc.constantFrom(
      '/',
      '',
      `/${STRANGER_SECRET}`,
      `/${PREVIOUS_SECRET}`,
      `/${SECRET.slice(0, -1)}`,
      `/${SECRET}x`,
      `/x${SECRET}`,
      `/${SECRET}/x`,
      `/x/${SECRET}`,
      `/${SECRET.toUpperCase()}`,
      `/${encodeURIComponent(`${SECRET} `)}`,
      // Percent-encoded, the secret is another string: paths are compared as received.
      `/%${SECRET.charCodeAt(0).toString(16).toUpperCase()}${SECRET.slice(1)}`,
      '/..%2f',
      '/%00',
    ),
    authorization: fc.constantFrom(undefined, `Bearer ${STRANGER_SECRET}`, `Basic ${SECRET}`, `Bearer ${SECRET}x`, `Token ${SECRET}`),
  }),
  fc.record({
    path: fc.string({ maxLength: 40 }).map((s) => `/${encodeURIComponent(s)}`).filter((p) => p !== `/${SECRET}` && p !== '/'),
    authorization: fc.constant(undefined),
  }),
  fc.record({
    path: fc.constant('/'),
    authorization: fc.oneof(
      fc.constantFrom('', 'Bearer', 'Bearer ', `Bearer ${SECRET.slice(1)}`, `Bearer  ${STRANGER_SECRET}`, SECRET, `Bearer ${SECRET} x`),
      fc.string({ unit: fc.constantFrom('B', 'e', 'a', 'r', ' ', 'x', '='), maxLength: 20 }),
    ),
  }),
);

const anyBody = (size: FuzzSize) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(Buffer.from(JSON.stringify(sidecarSetReview('uid-stranger')))) },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: 256 }).map((b) => Buffer.from(b)) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: Math.min(size.maxString, DEFAULT_MAX_BODY_BYTES) }).map((n) => Buffer.alloc(n, '[')) },
  );

const contentType = fc.constantFrom(undefined, 'application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json-patch+json');

interface StrangerInput {
  fn: AdmissionFunctionName;
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: Buffer;
}

function strangerProperty(env: FuzzEnv): fc.IAsyncProperty<[unknown]> {
  const arbitrary: fc.Arbitrary<StrangerInput> = fc
    .record({ fn: fc.constantFrom(...ADMISSION_FUNCTIONS), method: fc.constantFrom(...METHODS), credentials: strangerCredentials, contentType, body: anyBody(env.size) })
    .map(({ credentials, ...rest }) => ({ ...rest, path: credentials.path, authorization: credentials.authorization }));
  return fc.asyncProperty(arbitrary, async (input) => {
    const headers: Record<string, string> = {};
    if (input.authorization !== undefined) headers.authorization = input.authorization;
    if (input.contentType !== undefined) headers['content-type'] = input.contentType;
    await sendEverywhere(
      env,
      { fn: input.fn, method: input.method, path: input.path, headers, body: input.method === 'GET' ? Buffer.alloc(0) : input.body, dropContentType: input.contentType === undefined },
      (answer) => {
        if (answer.status !== 404 || answer.body !== NOT_FOUND_BODY) {
          throw new ContractViolation(`a stranger gets exactly 404 ${NOT_FOUND_BODY}; got ${answer.status} ${answer.body.slice(0, 200)} (${input.method} ${JSON.stringify(input.path)}, authorization ${JSON.stringify(input.authorization)})`);
        }
      },
      `stranger ${input.method} ${JSON.stringify(input.path)}`,
    );
  });
}

interface BadRequestInput {
  fn: AdmissionFunctionName;
  method: string;
  contentType: string | undefined;
  oversize: boolean;
  bearer: boolean;
}

/** The status the handler documents for a caller with the secret, in the order it checks. */
function expectedStatus(input: BadRequestInput): number | undefined {
  if (input.method !== 'POST') return 405;
  const type = input.contentType?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') return 415;
  if (input.oversize) return 413;
  return undefined;
}

function badRequestProperty(env: FuzzEnv): fc.IAsyncProperty<[unknown]> {
  const arbitrary: fc.Arbitrary<BadRequestInput> = fc
    .record({
      fn: fc.constantFrom(...ADMISSION_FUNCTIONS),
      method: fc.constantFrom(...METHODS),
      contentType: fc.oneof(contentType, fc.constantFrom('Application/JSON; charset=utf-8', 'application/jsonx', 'multipart/form-data; boundary=x', ' application/json ;q=1')),
      oversize: fc.boolean(),
      bearer: fc.boolean(),
    })
    .filter((input) => expectedStatus(input) !== undefined);
  const review = Buffer.from(JSON.stringify(sidecarSetReview('uid-bad-request')));
  // Just over the limit, and JSON, so that only the size can be wrong.
  const oversized = Buffer.concat([Buffer.from('{"pad":"'), Buffer.alloc(DEFAULT_MAX_BODY_BYTES, 'p'), Buffer.from('"}')]);
  return fc.asyncProperty(arbitrary, async (input) => {
    const status = expectedStatus(input);
    const headers: Record<string, string> = input.bearer ? { authorization: `Bearer ${SECRET}` } : {};
    if (input.contentType !== undefined) headers['content-type'] = input.contentType;
    const body = input.method === 'GET' ? Buffer.alloc(0) : input.oversize ? oversized : review;
    await sendEverywhere(
      env,
      { fn: input.fn, method: input.method, path: input.bearer ? '/' : `/${SECRET}`, headers, body, dropContentType: input.contentType === undefined },
      (answer) => {
        if (answer.status !== status) throw new ContractViolation(`expected ${status}; got ${answer.status} ${answer.body.slice(0, 200)} for ${JSON.stringify(input)}`);
        if (status === 405 && answer.allow !== 'POST') throw new ContractViolation(`a 405 carries Allow: POST; got ${String(answer.allow)}`);
        if (input.method !== 'HEAD') {
          const parsed = JSON.parse(answer.body) as Record<string, unknown>;
          if (Object.keys(parsed).join() !== 'message' || typeof parsed.message !== 'string') throw new ContractViolation(`expected {"message"}; got ${answer.body.slice(0, 200)}`);
        }
        checkNoLeak(body.toString('utf8'), answer);
      },
      `bad request ${JSON.stringify(input)}`,
    );
  });
}

/** Every property, in the order they run. */
export function fuzzProperties(env: FuzzEnv): FuzzProperty[] {
  return [
    { name: 'random-bytes', description: 'random bytes and JSON-ish noise as the body', quickRuns: 60, property: bodyProperty(env, randomBytesArb) },
    { name: 'truncated-json', description: 'real reviews cut at any byte', quickRuns: 60, property: bodyProperty(env, truncatedReviewArb) },
    { name: 'real-reviews', description: 'real Pod and SidecarSet reviews against random clusters', quickRuns: 80, property: bodyProperty(env, realReviewArb) },
    { name: 'wrong-types', description: 'real reviews with nodes replaced by other JSON types, deleted, or given extra keys', quickRuns: 250, property: bodyProperty(env, mutatedReviewArb) },
    { name: 'awkward-keys', description: 'unicode, ~, / and __proto__ keys where they reach patch paths', quickRuns: 80, property: bodyProperty(env, awkwardKeysArb) },
    { name: 'matching-pods', description: 'random Pods against random SidecarSets made to select them', quickRuns: 150, property: bodyProperty(env, matchingPodArb) },
    { name: 'damaged-sets', description: 'pods and SidecarSets reviewed against stored SidecarSets damaged anywhere', quickRuns: 100, property: bodyProperty(env, brokenClusterArb) },
    { name: 'deep-nesting', description: 'values nested up to 12,000 levels anywhere in a review', quickRuns: 40, property: bodyProperty(env, deepReviewArb) },
    { name: 'huge-values', description: `huge strings (up to ${env.size.maxString} characters), arrays (up to ${env.size.maxItems} items) and maps`, quickRuns: 12, property: bodyProperty(env, hugeReviewArb(env.size)) },
    { name: 'resource-exprs', description: 'SidecarSets and pods with random resourcesPolicy expressions and target patterns (OpenKruise 1.9)', quickRuns: 60, property: bodyProperty(env, resourcesPolicyArb) },
    { name: 'strangers', description: 'any method, content type and body without a valid secret', quickRuns: 60, property: strangerProperty(env) },
    { name: 'bad-requests', description: 'callers with the secret, a wrong method, content type or size', quickRuns: 30, property: badRequestProperty(env) },
  ];
}

// ---------------------------------------------------------------------------
// Every field, every type: the deterministic sweep behind "wrong types"

/** A pod that reaches every injection path: env, mounts with subPathExpr, init containers, volumes, secrets, annotations. */
function richPod(): Record<string, unknown> {
  return {
    ...appPod(),
    metadata: {
      generateName: 'web-',
      namespace: 'shop',
      labels: { app: 'web' },
      annotations: { 'kruise.io/sidecarset-hash': '{"old":"h"}', 'kruise.io/sidecarset-injected-list': 'old', 'example.com/x': '{"a":1}' },
    },
    spec: {
      containers: [{ name: 'app', image: 'nginx', env: [{ name: 'A', value: '1' }], volumeMounts: [{ name: 'data', mountPath: '/data', subPathExpr: '$(A)' }] }],
      initContainers: [{ name: 'prepare', image: 'busybox' }],
      volumes: [{ name: 'data', emptyDir: {} }],
      imagePullSecrets: [{ name: 'regcred' }],
    },
  };
}

/** A SidecarSet that uses every injection feature. */
function richSidecarSet(): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'log-agent' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [
        {
          name: 'log',
          image: 'log:1',
          shareVolumePolicy: { type: 'enabled' },
          transferEnv: [{ sourceContainerName: 'app', envName: 'A' }],
          volumeMounts: [{ name: 'logs', mountPath: '/logs' }],
        },
      ],
      initContainers: [{ name: 'init-log', image: 'init:1', restartPolicy: 'Always' }],
      updateStrategy: { type: 'NotUpdate' },
      volumes: [{ name: 'logs', emptyDir: {} }],
      imagePullSecrets: [{ name: 'log-cred' }],
      patchPodMetadata: [{ annotations: { 'example.com/x': '{"b":2}' }, patchPolicy: 'MergePatchJson' }],
    },
  };
}

/** One value of each JSON type (two for numbers), to put in place of every node. */
const REPLACEMENTS: readonly unknown[] = [null, false, 0, -1.5, 'x~1/', [], {}];

/**
 * Each base review with each of its nodes in turn replaced by each of
 * {@link REPLACEMENTS} or deleted: every field gets every wrong type. The
 * envelope (everything outside `object` and `oldObject`) is decoded by the
 * same code for every function, so it is swept once.
 */
export function everyFieldEveryType(): BodyInput[] {
  const sidecarSets = admitted([richSidecarSet()]);
  // Without it the sweep would exercise no injection at all.
  if (sidecarSets.length !== 1) throw new Error('the rich SidecarSet no longer validates; fix the fixture');
  const cluster = { sidecarSets, namespaces: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }] };
  const injected = injectPod({ pod: richPod(), namespace: 'shop', sidecarSets, namespaceLabels: new Map([['shop', {}]]), now: FUZZ_NOW }).pod;
  const update = sidecarSetReview('uid-update', sidecarSets[0]) as { request: Record<string, unknown> };
  update.request.operation = 'UPDATE';
  update.request.oldObject = sidecarSets[0];
  const bases: { fn: AdmissionFunctionName; review: unknown; envelope: boolean }[] = [
    { fn: 'pod-inject', review: podReview('uid-pod', richPod()), envelope: true },
    { fn: 'pod-inject', review: podReview('uid-reinvoked', injected), envelope: false },
    { fn: 'sidecarset-default', review: sidecarSetReview('uid-user-set', richSidecarSet()), envelope: false },
    { fn: 'sidecarset-validate', review: sidecarSetReview('uid-stored-set', sidecarSets[0]), envelope: false },
    { fn: 'sidecarset-validate', review: update, envelope: false },
  ];
  const inputs: BodyInput[] = [];
  for (const base of bases) {
    nodePaths(base.review).forEach((path, pick) => {
      const inObject = path[0] === 'request' && (path[1] === 'object' || path[1] === 'oldObject');
      if (!inObject && !base.envelope) return;
      const mutations = [...REPLACEMENTS.map((value) => ({ kind: 'replace' as const, pick, value: value as never })), { kind: 'delete' as const, pick }];
      for (const m of mutations) {
        const body = Buffer.from(JSON.stringify(mutate(base.review, [m])));
        inputs.push(bodyInput(base.fn, body, cluster, `${JSON.stringify(path)} ${m.kind === 'delete' ? 'deleted' : `= ${JSON.stringify(m.value)}`}`));
      }
    });
  }
  return inputs;
}

/** Sends each input through every handler and checks it; returns how many were sent. */
export async function sweep(env: FuzzEnv, inputs: readonly BodyInput[]): Promise<number> {
  for (const input of inputs) {
    env.view.current = input.cluster;
    await sendEverywhere(env, { fn: input.fn, body: input.body }, (answer) => {
      checkAnswer(input, answer);
    }, input.label);
  }
  env.view.current = EMPTY_CLUSTER;
  return inputs.length;
}
