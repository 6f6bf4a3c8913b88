/**
 * Pod injection while the functions' reads of the API server are slow or
 * failing, against the real control plane. The functions read the cluster
 * through a fault proxy (fault-proxy.ts); the API server itself can also be
 * stopped and restarted. Each scenario returns flat figures and throws an
 * Error naming every broken invariant:
 *
 * - every answer arrives inside the webhook timeout (the `?timeout=` sent);
 * - with the API server reachable, every answer is read fresh: nothing is
 *   served from the cache (the priming requests, before each fault and
 *   after recovery, must not be served a stale list);
 * - while the API server cannot be read and the last list read is within
 *   max staleness, the answer is the injection the API-up cluster gives
 *   (the same pod, byte for byte), reported as a stale list served;
 * - past max staleness, with the API unreachable, it is a failed call (HTTP
 *   5xx), so that failurePolicy decides;
 * - never a denial, never an injection from another list than the last one
 *   read (a SidecarSet changed during an outage shows only after recovery);
 * - after recovery, the answer is fresh and shows that change.
 *
 * "Within max staleness" is decided from the request's own times and those
 * of the last request answered from a fresh read (the priming one, or a
 * later one while the fault was not yet total), on the clock the cache uses
 * (performance.now): a fresh answer's list was loaded between that request's
 * send and answer, so an answer received less than max staleness after that
 * send was served a list young enough, and a request sent more than max
 * staleness after that answer could only be served one too old. No
 * wall-clock guesses.
 *
 * Used by pod-inject-faults.test.ts (short, in npm test) and by
 * scripts/reliability.ts (longer).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { stringify } from 'yaml';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { isObject } from '../../lib/kube/json.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { renderWebhookConfigurations, type FailurePolicy } from '../../lib/webhook-config/webhook-configurations.ts';
import type { Clock, Logger } from '../../lib/ports.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { INJECTION_ANNOTATIONS } from '../../lib/sidecarset/pod-annotations.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { ADMISSION_FUNCTIONS, type AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { parseGoDuration } from '../../lib/webhooks/timeout.ts';
import { buildApp } from '../../functions/server/app.ts';
import { crdPath, waitForCrd, waitForFunctionsAccess } from '../../functions/server/local-stack.ts';
import { ensureServingTls } from '../../functions/server/tls.ts';
import { admissionLambda, type FunctionUrlHandler } from '../../functions/shared/admission-lambda.ts';
import { clusterSources } from '../../functions/shared/cluster.ts';
import { admissionRuntime, type Env } from '../../functions/shared/compose.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { functionUrlEvent, podReview, SECRET } from '../reviews.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';
import type { Figures } from '../reliability/figures.ts';

/**
 * The flat figures a scenario reports. Scenario a: `requests`,
 * `answeredInTime`, `maxLatencyMs`, `injectedNotStale` (read fresh),
 * `servedFromCache` (a stale list within max staleness),
 * `failedCalls` (HTTP 500/503), `wrongDenials`, `wrongInjections`,
 * `malformed`, `withinStalenessChecked` / `pastStalenessChecked` (requests
 * whose outcome was certain and checked), `freshRetries` (priming requests
 * that had to be repeated with the API up: a failed call on a busy machine), `recoveries`, the same per fault
 * as `<fault>.<figure>`, and the proxy's counters. Scenario b: `pods`,
 * `podsInjected`, `podsRefused`, `podsNotInjected`, `wrongDenials`,
 * `wrongInjections`, `unexpected`, `maxCreateMs`, the checked counts,
 * `freshRetries` and the `webhookTimeout` the API server last sent.
 */

/** The time injection records in pod annotations, fixed so that answers compare byte for byte. */
export const FIXED_NOW = new Date('2026-11-30T12:00:00.000Z');
const fixedClock: Clock = { now: () => FIXED_NOW };

const SETS_PATH = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
const NAMESPACE = 'shop';
const STALE_MESSAGE = '"message":"served a stale list"';
/** The SidecarSet added and removed during outages. */
const TOGGLED_SET = 'metrics';

/** The outage settings the functions are given (the variables clusterSources reads). */
export interface CacheSettings {
  /** SIDECARSET_CACHE_MAX_STALENESS_MS */
  maxStalenessMs: number;
  /** KUBE_API_TIMEOUT_MS */
  apiTimeoutMs: number;
}

/** Short values, so that a test crosses max staleness in seconds. */
export const SHORT_CACHE: CacheSettings = { maxStalenessMs: 2_000, apiTimeoutMs: 500 };

export interface FaultStackOptions {
  /** A running control plane to use (kept running on stop()); by default one is started and stopped. */
  controlPlane?: ControlPlane;
  cache?: Partial<CacheSettings>;
  /** The registered webhooks' timeoutSeconds. Default 3. */
  webhookTimeoutSeconds?: number;
  /** The pod webhook's failurePolicy at start. Default Fail. */
  podFailurePolicy?: FailurePolicy;
}

/**
 * A control plane with the project installed, whose pod-inject function reads
 * the cluster through a fault proxy. SidecarSet defaulting and validation read
 * it directly, so that SidecarSets can be changed while pod injection's reads
 * fail. Pod injection is served twice, each handler with its own composition and
 * cache: the HTTPS server (which the API server calls) and the Lambda handler.
 */
export interface FaultStack {
  cp: ControlPlane;
  proxy: FaultProxy;
  cache: CacheSettings;
  /** The Lambda handler of pod-inject, composed as functions/pod-inject/handler.ts does, from an environment. */
  lambda: FunctionUrlHandler;
  /** https://127.0.0.1:<port> of the webhook server. */
  serverUrl: string;
  caPem: string;
  secret: string;
  /** How many times a stale list has been served, by either handler. */
  staleServed(): number;
  /** The last log lines, for error messages. */
  recentLogs(): string[];
  /** The `?timeout=` of the API server's last call to pod-inject: tells which webhook configuration it uses. */
  lastPodInjectTimeout(): string | undefined;
  /** Re-registers the pod webhook with this failurePolicy, and waits until the API server uses it. */
  setPodFailurePolicy(policy: FailurePolicy): Promise<void>;
  stop(): Promise<void>;
}

/** The SidecarSets every scenario starts from, as a user applies them. */
function sidecarSet(name: string, container: string, image: string, extra: Partial<SidecarSet['spec'] & object> = {}): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: container, image }], ...extra },
  };
}

const BASE_SETS: readonly SidecarSet[] = [
  sidecarSet('log-agent', 'log-agent', 'fluent-bit:3.1', {
    volumes: [{ name: 'log-config', configMap: { name: 'log-agent' } }],
  }),
  // A namespaceSelector makes injection read the namespace too, through the same proxy.
  sidecarSet('mesh', 'mesh-proxy', 'envoy:1.31', { namespaceSelector: { matchLabels: { team: NAMESPACE } } }),
  // Selects other pods: a list that lost or gained it would still inject the same.
  sidecarSet('db-agent', 'db-agent', 'db-agent:1.0', { selector: { matchLabels: { app: 'db' } } }),
];
const TOGGLED: SidecarSet = sidecarSet(TOGGLED_SET, 'metrics-agent', 'prom-agent:2.0');

/** The pod of every review and every creation: what a ReplicaSet controller sends. */
function webPod(name?: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...(name === undefined ? { generateName: 'web-' } : { name }), namespace: NAMESPACE, labels: { app: 'web' } },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function expectStatus(cp: ControlPlane, method: string, path: string, body: unknown, ok: readonly number[]): Promise<string> {
  const res = await cp.request('admin', method, path, body);
  if (!ok.includes(res.status)) throw new Error(`${method} ${path}: expected ${ok.join(' or ')}, got ${res.status} ${res.body.slice(0, 500)}`);
  return res.body;
}

function webhookManifests(stack: { serverUrl: string; secret: string; caPem: string }, policy: FailurePolicy, timeoutSeconds: number): string {
  const targets = Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, { url: `${stack.serverUrl}/${fn}/${stack.secret}` }])) as Record<
    AdmissionFunctionName,
    { url: string }
  >;
  const manifests = renderWebhookConfigurations({ targets, caPem: stack.caPem, podFailurePolicy: policy, timeoutSeconds });
  return manifests.map((m) => stringify(m)).join('---\n');
}

/** The functions' kubeconfig with its server moved to the proxy: TLS still ends at the API server. */
function kubeconfigThrough(cp: ControlPlane, proxy: FaultProxy): string {
  const direct = cp.kubeconfig('functions');
  if (!direct.includes(cp.url)) throw new Error(`the functions kubeconfig does not name ${cp.url}`);
  return direct.replaceAll(cp.url, `https://127.0.0.1:${proxy.port}`);
}

/** Starts a {@link FaultStack}: CRD, RBAC, namespace, the base SidecarSets, webhooks registered. */
export async function startFaultStack(options: FaultStackOptions = {}): Promise<FaultStack> {
  const cache: CacheSettings = { ...SHORT_CACHE, ...options.cache };
  const webhookTimeoutSeconds = options.webhookTimeoutSeconds ?? 3;
  const ownControlPlane = options.controlPlane === undefined;
  const cp = options.controlPlane ?? (await startControlPlane());
  const tlsDir = await mkdtemp(join(tmpdir(), 'sidecarset-faults-tls-'));
  const cleanups: (() => Promise<void>)[] = [
    () => rm(tlsDir, { recursive: true, force: true }),
    ...(ownControlPlane ? [() => cp.stop()] : []),
  ];
  const cleanUp = async () => {
    for (const step of cleanups.reverse()) await step();
  };
  try {
    await cp.apply(await readFile(crdPath, 'utf8'));
    await waitForCrd(cp, 'sidecarsets.apps.kruise.io');
    await waitForFunctionsAccess(cp);
    const apiPort = Number(new URL(cp.url).port);
    const proxy = await startFaultProxy({ targetPort: apiPort });
    cleanups.push(() => proxy.close());

    let stale = 0;
    const recent: string[] = [];
    const sink = (line: string) => {
      if (line.includes(STALE_MESSAGE)) stale += 1;
      recent.push(line);
      if (recent.length > 50) recent.shift();
    };
    const logger: Logger = jsonLogger({ function: 'faults' }, sink);
    const cacheEnv: Env = {
      SIDECARSET_CACHE_MAX_STALENESS_MS: String(cache.maxStalenessMs),
      KUBE_API_TIMEOUT_MS: String(cache.apiTimeoutMs),
    };
    const proxiedEnv: Env = { KUBECONFIG_CONTENT: kubeconfigThrough(cp, proxy), WEBHOOK_SECRET: SECRET, ...cacheEnv };
    // Defaulting and validation read the cluster directly: a SidecarSet change
    // during an outage of pod injection's reads must go through.
    const direct = await clusterSources({ KUBECONFIG_CONTENT: cp.kubeconfig('functions') }, logger);
    const proxied = await clusterSources(proxiedEnv, logger);
    const lambda = await admissionLambda('pod-inject', { env: proxiedEnv, overrides: { logger, clock: fixedClock }, cluster: clusterSources });

    const tls = await ensureServingTls(tlsDir);
    const secrets = { current: SECRET };
    const runtimes = {
      'sidecarset-default': admissionRuntime('sidecarset-default', secrets, undefined, logger),
      'sidecarset-validate': admissionRuntime('sidecarset-validate', secrets, direct, logger),
      'pod-inject': admissionRuntime('pod-inject', secrets, proxied, logger, fixedClock),
    };
    const app = buildApp({ runtimes, https: { cert: tls.certPem, key: tls.keyPem }, readiness: () => Promise.resolve({ ready: true, message: '' }) });
    let podInjectTimeout: string | undefined;
    app.addHook('onRequest', (request, _reply, done) => {
      if (request.url.startsWith('/pod-inject/')) podInjectTimeout = new URL(request.url, 'https://127.0.0.1').searchParams.get('timeout') ?? undefined;
      done();
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    cleanups.push(() => app.close());
    const address = app.server.address();
    if (address === null || typeof address !== 'object') throw new Error('the webhook server has no address');
    const serverUrl = `https://127.0.0.1:${address.port}`;
    const where = { serverUrl, secret: SECRET, caPem: tls.caPem };

    let policy = options.podFailurePolicy ?? 'Fail';
    await cp.apply(webhookManifests(where, policy, webhookTimeoutSeconds));
    await expectStatus(cp, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE, labels: { team: NAMESPACE } } }, [201, 409]);
    for (const set of BASE_SETS) await createSidecarSet(cp, set);

    const stack: FaultStack = {
      cp,
      proxy,
      cache,
      lambda,
      ...where,
      staleServed: () => stale,
      recentLogs: () => [...recent],
      lastPodInjectTimeout: () => podInjectTimeout,
      async setPodFailurePolicy(next) {
        if (next === policy) return;
        // The timeout differs between the two registrations, and the API
        // server sends it with every call: the call shows which one it uses.
        const seconds = next === 'Fail' ? webhookTimeoutSeconds : webhookTimeoutSeconds + 1;
        await cp.apply(webhookManifests(where, next, seconds));
        const deadline = performance.now() + 30_000;
        while (podInjectTimeout !== `${seconds}s`) {
          if (performance.now() > deadline) throw new Error(`the API server still calls pod-inject with timeout=${podInjectTimeout ?? 'none'} 30 s after failurePolicy ${next} was registered with ${seconds}s`);
          await cp.request('admin', 'POST', `/api/v1/namespaces/${NAMESPACE}/pods?dryRun=All`, webPod());
          await sleep(100);
        }
        policy = next;
      },
      stop: cleanUp,
    };
    return stack;
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

/** Creates a SidecarSet through the webhooks (defaults and hashes added), tolerating one that exists. */
async function createSidecarSet(cp: ControlPlane, set: SidecarSet): Promise<void> {
  await expectStatus(cp, 'POST', SETS_PATH, set, [201, 409]);
}

/** Adds the toggled SidecarSet when absent, removes it when present; returns whether it is there now. */
async function toggleSidecarSet(cp: ControlPlane): Promise<boolean> {
  const present = (await cp.request('admin', 'GET', `${SETS_PATH}/${TOGGLED_SET}`)).status === 200;
  if (present) await expectStatus(cp, 'DELETE', `${SETS_PATH}/${TOGGLED_SET}`, undefined, [200]);
  else await createSidecarSet(cp, TOGGLED);
  return !present;
}

/** The pod as the cluster, read now as the admin, injects it: the reference every answer is held to. */
async function referencePod(cp: ControlPlane, pod: Pod): Promise<Pod> {
  const list = JSON.parse(await expectStatus(cp, 'GET', SETS_PATH, undefined, [200])) as { items: SidecarSet[] };
  const namespace = JSON.parse(await expectStatus(cp, 'GET', `/api/v1/namespaces/${NAMESPACE}`, undefined, [200])) as {
    metadata?: { labels?: Record<string, string> };
  };
  const namespaceLabels = new Map([[NAMESPACE, namespace.metadata?.labels ?? {}]]);
  // A JSON copy, not structuredClone: under jest that makes objects of another realm (another Object.prototype), which isDeepStrictEqual tells apart.
  return injectPod({ pod: JSON.parse(JSON.stringify(pod)) as Pod, namespace: NAMESPACE, sidecarSets: list.items, namespaceLabels, now: FIXED_NOW }).pod;
}

/** What an injection is judged by when the stored pod carries the API server's defaults: names, images, annotations. */
function injectionView(pod: Pod): Record<string, unknown> {
  const annotations = pod.metadata?.annotations ?? {};
  return {
    containers: (pod.spec?.containers ?? []).map((c) => `${c.name}=${c.image ?? ''}`),
    initContainers: (pod.spec?.initContainers ?? []).map((c) => c.name),
    volumes: (pod.spec?.volumes ?? []).map((v) => v.name),
    annotations: Object.fromEntries(INJECTION_ANNOTATIONS.map((key) => [key, annotations[key]])),
  };
}

function sidecarNames(pod: Pod): string {
  return (pod.spec?.containers ?? []).map((c) => c.name).join(',');
}

/** The fault kinds; `slow` delays every chunk past the per-call cap (KUBE_API_TIMEOUT_MS). */
export type ApiFault = 'slow' | 'reset' | 'blackhole' | 'proxy-stopped' | 'apiserver-stopped';
export const API_FAULTS: readonly ApiFault[] = ['slow', 'reset', 'blackhole', 'proxy-stopped', 'apiserver-stopped'];

interface ActiveFault {
  /** When every read has certainly been failing since (performance.now), once known. */
  failingSince(): number | undefined;
  /** Whether SidecarSets can be changed while it lasts. */
  apiUp: boolean;
  lift(): Promise<void>;
}

/** Extra delay past the per-call cap, so that a slow read always hits the cap. */
const SLOW_MARGIN_MS = 500;

function startFault(stack: FaultStack, fault: ApiFault): ActiveFault {
  const since = performance.now();
  const proxyFault = (lift: () => Promise<void> | void): ActiveFault => ({ failingSince: () => since, apiUp: true, lift: async () => lift() });
  switch (fault) {
    case 'slow':
      stack.proxy.slow({ perChunkMs: stack.cache.apiTimeoutMs + SLOW_MARGIN_MS });
      return proxyFault(() => {
        stack.proxy.passThrough();
      });
    case 'reset':
      stack.proxy.reset();
      return proxyFault(() => {
        stack.proxy.passThrough();
      });
    case 'blackhole':
      stack.proxy.blackhole();
      return proxyFault(() => {
        stack.proxy.passThrough();
      });
    case 'proxy-stopped': {
      // Connections are refused from the moment the listener closes, which stop() starts at once.
      const stopped = stack.proxy.stop();
      return proxyFault(async () => {
        await stopped;
        await stack.proxy.start();
      });
    }
    case 'apiserver-stopped': {
      // The API server drains for a while after SIGTERM: reads fail for sure only once it has exited.
      let exitedAt: number | undefined;
      const stopping: Promise<unknown> = stack.cp.stopApiServer().then(
        () => {
          exitedAt = performance.now();
        },
        // Kept as a value until lift() awaits it, so that it is never an unhandled rejection.
        (error: unknown) => error ?? new Error('stopping the API server failed'),
      );
      return {
        failingSince: () => exitedAt,
        apiUp: false,
        lift: async () => {
          const failed = await stopping;
          if (failed !== undefined) throw new Error('cannot stop the API server', { cause: failed });
          await stack.cp.startApiServer();
        },
      };
    }
  }
}

/** The two handlers of pod-inject: the HTTPS server (fastify) and the Lambda handler. */
export type WebhookHandler = 'https' | 'lambda';

interface Answer {
  /** HTTP status; 0 when no answer came at all. */
  status: number;
  body: string;
  sentAt: number;
  answeredAt: number;
  timeoutMs: number;
  /** Stale lists served while this request ran (the handlers are asked one request at a time). */
  stale: number;
}

function post(url: string, body: string, ca: string, agent: Agent, limitMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = httpsRequest(url, { method: 'POST', agent, ca, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: text });
      });
      res.on('error', (error) => {
        resolve({ status: 0, body: `response failed: ${error.message}` });
      });
    });
    req.setTimeout(limitMs, () => req.destroy(new Error(`no answer within ${limitMs} ms`)));
    req.on('error', (error) => {
      resolve({ status: 0, body: `request failed: ${error.message}` });
    });
    req.end(body);
  });
}

/** How long the client waits past the webhook timeout before calling an answer missing. */
const CLIENT_GRACE_MS = 5_000;

async function ask(stack: FaultStack, agent: Agent, handler: WebhookHandler, uid: string, timeout: string): Promise<Answer> {
  const body = JSON.stringify(podReview(uid, webPod()));
  const timeoutMs = parseGoDuration(timeout);
  const staleBefore = stack.staleServed();
  const sentAt = performance.now();
  let result: { status: number; body: string };
  if (handler === 'https') {
    result = await post(`${stack.serverUrl}/pod-inject/${stack.secret}?timeout=${timeout}`, body, stack.caPem, agent, timeoutMs + CLIENT_GRACE_MS);
  } else {
    const answer = await stack.lambda(functionUrlEvent({ body, query: `timeout=${timeout}`, secret: stack.secret }));
    result = { status: answer.statusCode ?? 0, body: answer.body ?? '' };
  }
  const answeredAt = performance.now();
  return { ...result, sentAt, answeredAt, timeoutMs, stale: stack.staleServed() - staleBefore };
}

type Verdict =
  | { kind: 'injected' }
  | { kind: 'failed-call'; message: string }
  | { kind: 'denied' | 'wrong-injection' | 'malformed'; detail: string };

/** Judges one handler answer against the pod the reference list injects. */
function judge(answer: Answer, expected: Pod): Verdict {
  // The handler's failed call (docs/CLI.md: "HTTP 500/503, so that the webhook's failurePolicy applies"): a JSON message.
  if (answer.status === 500 || answer.status === 503) {
    let message: unknown;
    try {
      message = (JSON.parse(answer.body) as { message?: unknown }).message;
    } catch {
      // Checked below.
    }
    if (typeof message === 'string') return { kind: 'failed-call', message };
    return { kind: 'malformed', detail: `HTTP ${answer.status} without the handler's message: ${answer.body.slice(0, 300)}` };
  }
  if (answer.status !== 200) return { kind: 'malformed', detail: `HTTP ${answer.status}: ${answer.body.slice(0, 300)}` };
  let response: unknown;
  try {
    response = (JSON.parse(answer.body) as { response?: unknown }).response;
  } catch {
    return { kind: 'malformed', detail: `HTTP 200 with a body that is not JSON: ${answer.body.slice(0, 300)}` };
  }
  if (!isObject(response)) return { kind: 'malformed', detail: `no response in ${answer.body.slice(0, 300)}` };
  if (response.allowed !== true) return { kind: 'denied', detail: JSON.stringify(response).slice(0, 300) };
  const pod = typeof response.patch === 'string' ? (applyPatch(webPod(), decodePatch(response.patch)) as Pod) : webPod();
  if (isDeepStrictEqual(pod, expected)) return { kind: 'injected' };
  return { kind: 'wrong-injection', detail: `sidecars [${sidecarNames(pod)}], expected [${sidecarNames(expected)}]` };
}

/** Collects broken invariants; thrown together at the end so that one run shows all of them. */
class Violations {
  readonly list: string[] = [];
  add(message: string): void {
    this.list.push(message);
  }
  throwIfAny(scenario: string, figures: Figures): void {
    if (this.list.length === 0) return;
    const shown = this.list.slice(0, 15).map((v) => `  - ${v}`);
    const more = this.list.length > shown.length ? [`  ... and ${this.list.length - shown.length} more`] : [];
    throw new Error(`${scenario}: ${this.list.length} invariant(s) broken:\n${[...shown, ...more].join('\n')}\nfigures: ${JSON.stringify(figures)}`);
  }
}

function bump(figures: Figures, key: string, by = 1): void {
  const current = figures[key];
  figures[key] = (typeof current === 'number' ? current : 0) + by;
}

function maxInto(figures: Figures, key: string, value: number): void {
  const current = figures[key];
  figures[key] = Math.max(typeof current === 'number' ? current : 0, Math.round(value));
}

/** Long enough for every load begun before now (during a fault) to have ended. */
function debounceMs(cache: CacheSettings): number {
  return cache.apiTimeoutMs + 100;
}

const PRIME_ATTEMPTS = 5;
/** How long a fault round may run past its plan (an API server slow to exit) before it is called broken. */
const GIVE_UP_MS = 60_000;

/**
 * Asks, with the API up, until an answer is a fresh injection of `expected`:
 * the cache then holds a list loaded between that request's send and answer.
 * A stale list served is a broken invariant (the API server is reachable);
 * a failed call on a slow machine is tried again, and counted.
 */
async function prime(stack: FaultStack, agent: Agent, handler: WebhookHandler, uid: string, timeout: string, expected: Pod, figures: Figures, what: string): Promise<Answer> {
  let last = '';
  for (let attempt = 1; attempt <= PRIME_ATTEMPTS; attempt += 1) {
    await sleep(debounceMs(stack.cache));
    const answer = await ask(stack, agent, handler, `${uid}-${attempt}`, timeout);
    const verdict = judge(answer, expected);
    if (answer.stale > 0) throw new Error(`${what}: with the API up, ${handler} was served a stale list (${verdict.kind})`);
    if (verdict.kind === 'injected') return answer;
    if (verdict.kind === 'denied' || verdict.kind === 'wrong-injection') {
      throw new Error(`${what}: with the API up, ${handler} answered ${verdict.kind}: ${verdict.detail}`);
    }
    bump(figures, 'freshRetries');
    last = `${verdict.kind}: ${JSON.stringify(verdict)}`;
  }
  throw new Error(`${what}: no fresh injection from ${handler} in ${PRIME_ATTEMPTS} tries with the API up; last: ${last}\nlogs:\n${stack.recentLogs().slice(-5).join('\n')}`);
}

export interface InjectionFaultOptions {
  /** A running stack to use; by default one is started (with `cache`) and stopped. */
  stack?: FaultStack;
  cache?: Partial<CacheSettings>;
  /** The faults, in order; default every one of {@link API_FAULTS}. */
  faults?: readonly ApiFault[];
  /** The handlers, taken in turn by successive fault rounds. Default both. */
  handlers?: readonly WebhookHandler[];
  /** How many times the list of faults is run. Default 1. */
  rounds?: number;
  /** The `?timeout=` values, taken in turn; one shorter than the per-call cap tests the caller's own deadline. Default 3s and 1200ms. */
  timeouts?: readonly string[];
  /** Pause between requests during a fault. Default 100 ms. */
  requestIntervalMs?: number;
  /** How long requests continue past max staleness. Default 1000 ms. */
  pastStalenessMs?: number;
}

/**
 * Scenario a: AdmissionReviews sent straight to pod-inject (HTTPS server and
 * Lambda handler, in turn) while its reads are slow, reset, blackholed,
 * refused (proxy stopped) or the API server is stopped. During each proxy
 * fault the toggled SidecarSet is added or removed, which must show in no
 * answer before recovery and in the first one after.
 */
export async function injectionUnderApiFaults(options: InjectionFaultOptions = {}): Promise<Figures> {
  const stack = options.stack ?? (await startFaultStack({ ...(options.cache ? { cache: options.cache } : {}) }));
  const faults = options.faults ?? API_FAULTS;
  const handlers = options.handlers ?? ['https', 'lambda'];
  const rounds = options.rounds ?? 1;
  const timeouts = options.timeouts ?? ['3s', '1200ms'];
  const interval = options.requestIntervalMs ?? 100;
  const pastStalenessMs = options.pastStalenessMs ?? 1_000;
  const longestTimeout = timeouts.reduce((a, b) => (parseGoDuration(a) >= parseGoDuration(b) ? a : b));
  const { maxStalenessMs, apiTimeoutMs } = stack.cache;
  if (maxStalenessMs <= apiTimeoutMs) throw new RangeError('maxStalenessMs must exceed apiTimeoutMs, or no stale answer can be expected');

  const figures: Figures = {
    requests: 0,
    answeredInTime: 0,
    maxLatencyMs: 0,
    injectedNotStale: 0,
    servedFromCache: 0,
    failedCalls: 0,
    wrongDenials: 0,
    wrongInjections: 0,
    malformed: 0,
    withinStalenessChecked: 0,
    pastStalenessChecked: 0,
    freshRetries: 0,
    recoveries: 0,
  };
  const violations = new Violations();
  const agent = new Agent({ keepAlive: true });
  const proxyBefore = stack.proxy.counters();
  let uidCounter = 0;
  const uid = (label: string) => `${label}-${(uidCounter += 1)}`;

  try {
    let expected = await referencePod(stack.cp, webPod());
    let step = 0;
    for (let round = 1; round <= rounds; round += 1) {
      for (const fault of faults) {
        const handler = handlers[step % handlers.length] ?? 'https';
        step += 1;
        const label = `round ${round}, ${fault} via ${handler}`;
        const primed = await prime(stack, agent, handler, uid(`prime-${fault}`), longestTimeout, expected, figures, label);
        // The last answer read fresh: the stale list served later is at least as young as its send.
        let lastFresh = primed;
        const primedList = sidecarNames(expected);

        const active = startFault(stack, fault);
        // A change while the reads fail: no answer may show it until they work
        // again. Made alongside the requests, so that the first ones still
        // come while the cached list is young.
        let changed: Pod | undefined;
        const changing: Promise<unknown> = active.apiUp
          ? toggleSidecarSet(stack.cp).then(
              async () => {
                changed = await referencePod(stack.cp, webPod());
              },
              // Kept as a value until awaited below, so that it is never an unhandled rejection.
              (error: unknown) => error,
            )
          : Promise.resolve();

        let withinChecked = 0;
        let pastChecked = 0;
        let sent = 0;
        const endAfter = () => {
          const since = active.failingSince();
          return since === undefined ? Number.POSITIVE_INFINITY : Math.max(lastFresh.answeredAt + maxStalenessMs, since) + pastStalenessMs;
        };
        const giveUpAt = performance.now() + maxStalenessMs + pastStalenessMs + GIVE_UP_MS;
        while (performance.now() < endAfter() || pastChecked === 0) {
          if (performance.now() > giveUpAt) {
            violations.add(`${label}: no request surely past max staleness was answered within ${GIVE_UP_MS} ms more; the fault never took hold`);
            break;
          }
          const timeout = timeouts[sent % timeouts.length] ?? longestTimeout;
          sent += 1;
          const answer = await ask(stack, agent, handler, uid(fault), timeout);
          const latency = answer.answeredAt - answer.sentAt;
          bump(figures, 'requests');
          bump(figures, `${fault}.requests`);
          maxInto(figures, 'maxLatencyMs', latency);
          const where = `${label}, request ${sent} (timeout ${timeout}, ${Math.round(answer.sentAt - primed.sentAt)} ms after the list was primed)`;
          if (answer.status !== 0 && latency < answer.timeoutMs) bump(figures, 'answeredInTime');
          else violations.add(`${where}: no answer within the webhook timeout (${Math.round(latency)} ms, HTTP ${answer.status}: ${answer.body.slice(0, 200)})`);

          const verdict = judge(answer, expected);
          const failingSince = active.failingSince();
          // The list was loaded between lastFresh.sentAt and lastFresh.answeredAt (see the module comment).
          const surelyWithin = answer.answeredAt - lastFresh.sentAt < maxStalenessMs;
          const surelyPast = failingSince !== undefined && answer.sentAt > failingSince && answer.sentAt - lastFresh.answeredAt > maxStalenessMs;
          switch (verdict.kind) {
            case 'injected':
              if (answer.stale > 0) {
                bump(figures, 'servedFromCache');
                bump(figures, `${fault}.servedFromCache`);
              } else {
                bump(figures, 'injectedNotStale');
                // A read that still got through (the API server draining before it exits).
                lastFresh = answer;
              }
              if (surelyPast) violations.add(`${where}: injected from a list older than max staleness (${maxStalenessMs} ms) instead of failing the call`);
              break;
            case 'failed-call':
              bump(figures, 'failedCalls');
              bump(figures, `${fault}.failedCalls`);
              if (surelyWithin) violations.add(`${where}: failed the call while the cached list was within max staleness: ${verdict.message}`);
              break;
            case 'denied':
              bump(figures, 'wrongDenials');
              violations.add(`${where}: denied the pod: ${verdict.detail}`);
              break;
            case 'wrong-injection': {
              bump(figures, 'wrongInjections');
              const fromOutage = changed !== undefined && judge(answer, changed).kind === 'injected';
              violations.add(
                `${where}: ${fromOutage ? 'injected from the list changed during the outage' : 'injected from a wrong list'}: ${verdict.detail} (primed list: [${primedList}])`,
              );
              break;
            }
            case 'malformed':
              bump(figures, 'malformed');
              violations.add(`${where}: neither an AdmissionReview nor a failed call: ${verdict.detail}`);
              break;
          }
          if (surelyWithin) withinChecked += 1;
          if (surelyPast) pastChecked += 1;
          await sleep(interval);
        }
        bump(figures, 'withinStalenessChecked', withinChecked);
        bump(figures, 'pastStalenessChecked', pastChecked);
        if (withinChecked === 0) violations.add(`${label}: no request was answered surely within max staleness; the round proved nothing`);

        const changeFailed = await changing;
        await active.lift();
        if (changeFailed !== undefined) throw new Error(`${label}: cannot change the SidecarSets during the fault`, { cause: changeFailed });
        // With the API server stopped nothing could change; change it now, so that freshness after recovery shows.
        if (!active.apiUp) {
          await toggleSidecarSet(stack.cp);
          changed = await referencePod(stack.cp, webPod());
        }
        expected = changed ?? expected;
        // The API server is reachable again: the answer is read fresh and shows the change.
        await prime(stack, agent, handler, uid(`recovered-${fault}`), longestTimeout, expected, figures, `${label}, after recovery`);
        bump(figures, 'recoveries');
      }
    }
  } finally {
    agent.destroy();
    if (options.stack === undefined) await stack.stop();
  }
  const proxyAfter = stack.proxy.counters();
  figures.proxyConnections = proxyAfter.connections - proxyBefore.connections;
  figures.proxyResets = proxyAfter.resets - proxyBefore.resets;
  figures.proxyTargetFailures = proxyAfter.targetFailures - proxyBefore.targetFailures;
  violations.throwIfAny('pod injection under API faults', figures);
  return figures;
}

export interface PodCreationFaultOptions {
  stack?: FaultStack;
  cache?: Partial<CacheSettings>;
  /** The faults under each policy; default Fail: reset, blackhole; Ignore: slow, proxy-stopped. */
  faults?: Readonly<Partial<Record<FailurePolicy, readonly ProxyFault[]>>>;
  /** How many times the faults are run. Default 1. */
  rounds?: number;
  /** Pause between pod creations during a fault. Default 100 ms. */
  createIntervalMs?: number;
  /** How long creations continue past max staleness. Default 1000 ms. */
  pastStalenessMs?: number;
}

/** Numbers the runs of scenario b in this process, so that a second run on the same stack names its pods afresh. */
let podCreationRuns = 0;

/** The faults scenario b can run: pods cannot be created while the API server itself is stopped. */
export type ProxyFault = Exclude<ApiFault, 'apiserver-stopped'>;

type Outcome = 'injected' | 'refused' | 'not-injected' | 'denied' | 'wrong-injection' | 'unexpected';

/** Judges one pod creation: the stored pod against the reference, or the API server's error. */
function judgeCreation(status: number, body: string, expected: Pod): { outcome: Outcome; detail: string } {
  if (status === 201) {
    const pod = JSON.parse(body) as Pod;
    const view = injectionView(pod);
    if (isDeepStrictEqual(view, injectionView(expected))) return { outcome: 'injected', detail: '' };
    if (isDeepStrictEqual(view, injectionView(webPod()))) return { outcome: 'not-injected', detail: '' };
    return { outcome: 'wrong-injection', detail: `stored ${JSON.stringify(view)}, expected ${JSON.stringify(injectionView(expected))}` };
  }
  let message = body.slice(0, 400);
  try {
    message = (JSON.parse(body) as { message?: string }).message ?? message;
  } catch {
    // Not a Status: the raw body is the message.
  }
  if (message.includes('denied the request')) return { outcome: 'denied', detail: `${status}: ${message}` };
  if (message.includes('failed calling webhook "pod-inject.sidecarset.kruise.io"')) return { outcome: 'refused', detail: message };
  return { outcome: 'unexpected', detail: `${status}: ${message}` };
}

/**
 * Scenario b: pods created as the admin through the real API server, which
 * calls pod-inject on the HTTPS server, while pod-inject's reads are faulted.
 * With failurePolicy Fail a pod is created with exactly the right sidecars or
 * refused with the API server's "failed calling webhook"; with Ignore it is
 * created with the right sidecars or with none. Never a denial by the
 * webhook, never other sidecars. Within max staleness pods are injected;
 * past it they are refused (Fail) or created bare (Ignore).
 */
export async function podCreationUnderApiFaults(options: PodCreationFaultOptions = {}): Promise<Figures> {
  const stack = options.stack ?? (await startFaultStack({ ...(options.cache ? { cache: options.cache } : {}) }));
  const plan: readonly (readonly [FailurePolicy, ProxyFault])[] = (['Fail', 'Ignore'] as const).flatMap((policy) =>
    (options.faults?.[policy] ?? (policy === 'Fail' ? (['reset', 'blackhole'] as const) : (['slow', 'proxy-stopped'] as const))).map(
      (fault) => [policy, fault] as const,
    ),
  );
  const rounds = options.rounds ?? 1;
  const interval = options.createIntervalMs ?? 100;
  const pastStalenessMs = options.pastStalenessMs ?? 1_000;
  const { maxStalenessMs } = stack.cache;
  const figures: Figures = {
    pods: 0,
    podsInjected: 0,
    podsRefused: 0,
    podsNotInjected: 0,
    wrongDenials: 0,
    wrongInjections: 0,
    unexpected: 0,
    maxCreateMs: 0,
    withinStalenessChecked: 0,
    pastStalenessChecked: 0,
    freshRetries: 0,
  };
  const violations = new Violations();
  let podCounter = 0;
  const run = (podCreationRuns += 1);
  const podsPath = `/api/v1/namespaces/${NAMESPACE}/pods`;

  /** A dry-run creation: the API server's call to pod-inject, nothing stored. */
  const dryRun = async (): Promise<{ status: number; body: string; sentAt: number; answeredAt: number; stale: number }> => {
    const staleBefore = stack.staleServed();
    const sentAt = performance.now();
    const res = await stack.cp.request('admin', 'POST', `${podsPath}?dryRun=All`, webPod(`dry-${run}-${(podCounter += 1)}`));
    return { ...res, sentAt, answeredAt: performance.now(), stale: stack.staleServed() - staleBefore };
  };
  /** Creations, with the API up, until one is injected; a stale list served is a broken invariant. The cache then holds a list loaded during it. */
  const primeCreation = async (expected: Pod, what: string) => {
    let last = '';
    for (let attempt = 1; attempt <= PRIME_ATTEMPTS; attempt += 1) {
      await sleep(debounceMs(stack.cache));
      const res = await dryRun();
      const { outcome, detail } = judgeCreation(res.status, res.body, expected);
      if (res.stale > 0) throw new Error(`${what}: with the API up, a pod creation was served a stale list (${outcome})`);
      if (outcome === 'injected') return res;
      if (outcome === 'denied' || outcome === 'wrong-injection') throw new Error(`${what}: with the API up, a pod was ${outcome}: ${detail}`);
      bump(figures, 'freshRetries');
      last = `${outcome} ${detail}`;
    }
    throw new Error(`${what}: no fresh injection in ${PRIME_ATTEMPTS} creations with the API up; last: ${last}`);
  };

  try {
    const expected = await referencePod(stack.cp, webPod());
    for (let round = 1; round <= rounds; round += 1) {
      for (const [policy, fault] of plan) {
        await stack.setPodFailurePolicy(policy);
        const label = `round ${round}, failurePolicy ${policy}, ${fault}`;
        const primed = await primeCreation(expected, label);
        const active = startFault(stack, fault);
        let withinChecked = 0;
        let pastChecked = 0;
        let created = 0;
        const end = primed.answeredAt + maxStalenessMs + pastStalenessMs;
        const giveUpAt = end + GIVE_UP_MS;
        while (performance.now() < end || pastChecked === 0) {
          if (performance.now() > giveUpAt) {
            violations.add(`${label}: no pod creation surely past max staleness within ${GIVE_UP_MS} ms more; the fault never took hold`);
            break;
          }
          const name = `run${run}-${policy.toLowerCase()}-${fault}-${round}-${(created += 1)}`;
          const sentAt = performance.now();
          const res = await stack.cp.request('admin', 'POST', podsPath, webPod(name));
          const answeredAt = performance.now();
          bump(figures, 'pods');
          maxInto(figures, 'maxCreateMs', answeredAt - sentAt);
          const { outcome, detail } = judgeCreation(res.status, res.body, expected);
          const failingSince = active.failingSince();
          const surelyWithin = answeredAt - primed.sentAt < maxStalenessMs;
          const surelyPast = failingSince !== undefined && sentAt > failingSince && sentAt - primed.answeredAt > maxStalenessMs;
          const where = `${label}, pod ${name} (${Math.round(sentAt - primed.sentAt)} ms after the list was primed)`;
          switch (outcome) {
            case 'injected':
              bump(figures, 'podsInjected');
              if (surelyPast) violations.add(`${where}: injected from a list older than max staleness (${maxStalenessMs} ms)`);
              break;
            case 'refused':
              bump(figures, 'podsRefused');
              if (policy === 'Ignore') violations.add(`${where}: refused although failurePolicy is Ignore: ${detail}`);
              if (surelyWithin) violations.add(`${where}: refused while the cached list was within max staleness: ${detail}`);
              break;
            case 'not-injected':
              bump(figures, 'podsNotInjected');
              if (policy === 'Fail') violations.add(`${where}: created without its sidecars although failurePolicy is Fail`);
              if (surelyWithin) violations.add(`${where}: created without its sidecars while the cached list was within max staleness`);
              break;
            case 'denied':
              bump(figures, 'wrongDenials');
              violations.add(`${where}: denied by the webhook: ${detail}`);
              break;
            case 'wrong-injection':
              bump(figures, 'wrongInjections');
              violations.add(`${where}: created with the wrong sidecars: ${detail}`);
              break;
            case 'unexpected':
              bump(figures, 'unexpected');
              violations.add(`${where}: an error that is neither a denial nor a failed webhook call: ${detail}`);
              break;
          }
          if (surelyWithin) withinChecked += 1;
          if (surelyPast) pastChecked += 1;
          await sleep(interval);
        }
        bump(figures, 'withinStalenessChecked', withinChecked);
        bump(figures, 'pastStalenessChecked', pastChecked);
        if (withinChecked === 0) violations.add(`${label}: no pod was created surely within max staleness; the round proved nothing`);
        await active.lift();
        await primeCreation(expected, `${label}, after recovery`);
      }
    }
  } finally {
    if (options.stack === undefined) await stack.stop();
  }
  figures.webhookTimeout = stack.lastPodInjectTimeout() ?? '';
  violations.throwIfAny('pod creation under API faults', figures);
  return figures;
}
