/**
 * One warm Lambda handler invoked many times in one process, as a busy
 * function's execution environment is: every answer must be right, and the
 * memory still reachable after a full collection, the process listeners and
 * the open handles must not grow (a cache, a listener or an AbortSignal kept
 * per call would show here long before it exhausted a real function).
 */
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { DEFAULT_METRICS_NAMESPACE } from '../../lib/metrics/catalogue.ts';
import { emfRecorder } from '../../lib/metrics/emf-recorder.ts';
import type { AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { admissionLambda } from '../../functions/shared/admission-lambda.ts';
import { clusterSources } from '../../functions/shared/cluster.ts';
import { benchReview } from '../bench/admission-inputs.ts';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { functionUrlEvent, SECRET } from '../reviews.ts';
import { assertFlat, flatness, round, sampleMemory, type FlatLimits, type MemorySample } from './memory.ts';
import type { Figures } from '../reliability/figures.ts';

export interface LambdaSoakOptions {
  /** A control plane holding the benchmarks' cluster (testkit/bench/cluster.ts seedAdmissionCluster). */
  cp: ControlPlane;
  fn: AdmissionFunctionName;
  invocations: number;
  /** Memory samples after warm-up, evenly spaced; default 10. */
  samples?: number;
  limits?: Partial<FlatLimits>;
}


interface Expected {
  allowed: boolean;
  /** Length of the base64 patch: timestamps in annotations change, their length does not. */
  patchLength: number;
}

/** The answer's verdict, or a reason it is wrong. */
function check(uid: string, result: { statusCode?: number; body?: string }): Expected | string {
  if (result.statusCode !== 200) return `HTTP ${String(result.statusCode)}: ${String(result.body).slice(0, 300)}`;
  const review = JSON.parse(result.body ?? '') as { response?: { uid?: string; allowed?: boolean; patch?: string } };
  if (review.response?.uid !== uid) return `the answer carries uid ${String(review.response?.uid)}, not ${uid}`;
  return { allowed: review.response.allowed === true, patchLength: review.response.patch?.length ?? 0 };
}

/**
 * Invokes the handler `invocations` times in sequence (a Lambda environment
 * serves one call at a time) with the API server's real calls behind it.
 * @throws Error naming the first wrong answer, or what grew.
 */
export async function lambdaSoak(options: LambdaSoakOptions): Promise<Figures> {
  const { cp, fn, invocations } = options;
  const sampleCount = options.samples ?? 10;
  const limits: FlatLimits = { maxHeapGrowthMiB: 4, maxRssGrowthMiB: 32, ...options.limits };
  const handler = await admissionLambda(fn, {
    env: { WEBHOOK_SECRET: SECRET, KUBECONFIG_CONTENT: cp.kubeconfig('functions') },
    // Every call logs one line and one metrics line, formatted as on Lambda; writing 100,000 of them to a test's output would measure the terminal.
    overrides: { logger: jsonLogger({ function: fn }, () => undefined), metrics: emfRecorder({ namespace: DEFAULT_METRICS_NAMESPACE, write: () => undefined }) },
    cluster: clusterSources,
  });

  const warmUp = Math.max(1, Math.round(invocations / (sampleCount + 1)));
  const every = Math.max(1, Math.floor((invocations - warmUp) / sampleCount));
  const samples: MemorySample[] = [];
  let expected: Expected | undefined;
  const started = performance.now();
  let slowestMs = 0;
  for (let i = 0; i < invocations; i++) {
    const uid = `soak-${i}`;
    const t0 = performance.now();
    const result = await handler(functionUrlEvent({ body: benchReview(fn, uid), requestId: `req-${i}` }));
    slowestMs = Math.max(slowestMs, performance.now() - t0);
    const verdict = check(uid, result);
    if (typeof verdict === 'string') throw new Error(`${fn} invocation ${i + 1} of ${invocations} was answered wrongly: ${verdict}`);
    expected ??= verdict;
    if (verdict.allowed !== expected.allowed || verdict.patchLength !== expected.patchLength) {
      throw new Error(`${fn} invocation ${i + 1} answered ${JSON.stringify(verdict)} where the first answered ${JSON.stringify(expected)}`);
    }
    if (i + 1 >= warmUp && (i + 1 - warmUp) % every === 0) samples.push(sampleMemory(i + 1));
  }
  const elapsedMs = performance.now() - started;
  const growth = flatness(samples);
  assertFlat(`${fn} after ${invocations} invocations`, growth, limits);
  const first = samples[0];
  const last = samples.at(-1);
  return {
    function: fn,
    invocations,
    wrongAnswers: 0,
    allowed: String(expected?.allowed),
    patchBase64Bytes: expected?.patchLength ?? 0,
    invocationsPerSecond: Math.round(invocations / (elapsedMs / 1000)),
    slowestInvocationMs: round(slowestMs),
    heapAfterWarmUpMiB: round(first?.heapUsedMiB ?? 0, 2),
    heapAtEndMiB: round(last?.heapUsedMiB ?? 0, 2),
    heapGrowthMiB: round(growth.heapGrowthMiB, 2),
    heapSlopeBytesPerInvocation: round(growth.heapSlopeBytes, 2),
    rssAfterWarmUpMiB: round(first?.rssMiB ?? 0),
    rssAtEndMiB: round(last?.rssMiB ?? 0),
    activeHandlesAfterWarmUp: first?.activeResources ?? 0,
    activeHandlesAtEnd: last?.activeResources ?? 0,
    processListenersAtEnd: last?.processListeners ?? 0,
  };
}
