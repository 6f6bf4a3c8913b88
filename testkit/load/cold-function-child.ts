/**
 * One cold start of a function in a process of its own, so that its memory
 * figures are its own: the pod-inject Lambda handler composed as on AWS
 * answering one review (`COLD_FUNCTION=pod-inject`, the review's body in
 * `COLD_REVIEW`), or the status reconciler composed as on AWS running one
 * resync (`COLD_FUNCTION=status-sync`). Reads the cluster through
 * KUBECONFIG_CONTENT. Started with fork(); it sends one message: what the
 * function answered, how long that took from the call, the process's peak
 * RSS, and its heap after a full collection (what a warm instance keeps).
 */
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { admissionLambda } from '../../functions/shared/admission-lambda.ts';
import { clusterSources } from '../../functions/shared/cluster.ts';
import { composeStatusSync } from '../../functions/status-sync/compose.ts';
import { functionUrlEvent, SECRET } from '../reviews.ts';
import { sampleMemory } from './memory.ts';

/** What the child reports. */
export interface ColdFunctionReport {
  /** pod-inject: the Lambda result; status-sync: the resync's result. */
  answer: unknown;
  /** From the call (after composition) to its answer. */
  elapsedMs: number;
  /** The process's peak resident set over its whole life. */
  maxRssMiB: number;
  /** Reachable heap after the call and a full collection. */
  heapAfterGcMiB: number;
}

const silent = jsonLogger({}, () => undefined);

async function run(): Promise<ColdFunctionReport> {
  const env = { KUBECONFIG_CONTENT: process.env.KUBECONFIG_CONTENT ?? '', WEBHOOK_SECRET: SECRET, KUBE_API_TIMEOUT_MS: process.env.KUBE_API_TIMEOUT_MS };
  const what = process.env.COLD_FUNCTION;
  let answer: unknown;
  let elapsedMs: number;
  if (what === 'pod-inject') {
    const lambda = await admissionLambda('pod-inject', { env, overrides: { logger: silent }, cluster: clusterSources });
    const started = performance.now();
    answer = await lambda(functionUrlEvent({ body: process.env.COLD_REVIEW ?? '', secret: SECRET }));
    elapsedMs = performance.now() - started;
  } else if (what === 'status-sync') {
    const statusSync = await composeStatusSync(env, { logger: silent });
    const started = performance.now();
    answer = await statusSync.resync();
    elapsedMs = performance.now() - started;
  } else {
    throw new Error(`COLD_FUNCTION must be pod-inject or status-sync, got ${JSON.stringify(what)}`);
  }
  const sample = sampleMemory(0);
  return { answer, elapsedMs: Math.round(elapsedMs), maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024), heapAfterGcMiB: Math.round(sample.heapUsedMiB) };
}

let message: unknown;
try {
  message = { report: await run() };
} catch (error) {
  message = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
}
// The functions' kept-alive connections would hold the process open: it has said all it has to say.
process.send?.(message, () => process.exit(0));
