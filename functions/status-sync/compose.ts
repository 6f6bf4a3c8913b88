/**
 * The status reconciler's composition, once per cold start (or server
 * start): the cluster's credentials (a kubeconfig, or EKS with the function's
 * IAM role), the live adapters, and what was already reported about
 * uninjected pods. The Lambda handler, the `npm start` loop and the tests
 * all run passes through this.
 */
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { makeKubeClients } from '../../lib/adapters/kubeconfig.ts';
import { kubeSidecarSetSource, millisecondsFromEnv, SourceOptionsError } from '../../lib/adapters/kube-sources.ts';
import { DEFAULT_CALL_TIMEOUT_MS, kubeEventSink, kubeNamespaceSnapshot, kubePodPages, kubeStatusWriter } from '../../lib/adapters/kube-status-sync.ts';
import type { Logger } from '../../lib/ports.ts';
import { notInjectedNotices } from '../../lib/status-sync/not-injected.ts';
import { runStatusPass, STATUS_SYNC, type PassResult } from '../../lib/status-sync/pass.ts';
import { clusterKubeConfig } from '../shared/cluster.ts';
import type { Env, Overrides } from '../shared/compose.ts';

/** How often `npm start` runs a pass; 0 turns the loop off. */
export const ENV_STATUS_SYNC_INTERVAL_MS = 'STATUS_SYNC_INTERVAL_MS';
export const DEFAULT_STATUS_SYNC_INTERVAL_MS = 30_000;

export interface StatusSyncRuntime {
  /** One pass against the cluster; never throws (failures are in the result). */
  runPass: (signal?: AbortSignal) => Promise<PassResult>;
  logger: Logger;
  /** The API server, for logs. */
  server: string;
}

/**
 * Composes the reconciler for the cluster the environment names.
 * @throws ConfigurationError, KubeconfigError or EksAuthError naming what is missing or wrong.
 */
export async function composeStatusSync(env: Env, overrides: Overrides = {}): Promise<StatusSyncRuntime> {
  const logger = overrides.logger ?? jsonLogger({ function: STATUS_SYNC });
  const kc = await clusterKubeConfig(env, overrides);
  const clients = makeKubeClients(kc);
  const options = { callTimeoutMs: DEFAULT_CALL_TIMEOUT_MS };
  // Never served from a cache: a status must be written against the set as stored now.
  const sidecarSets = kubeSidecarSetSource(clients, { ttlMs: 0, maxStalenessMs: 0, apiTimeoutMs: DEFAULT_CALL_TIMEOUT_MS });
  const pods = kubePodPages(kc, options);
  const statuses = kubeStatusWriter(clients, options);
  const events = kubeEventSink(clients, options);
  const notices = notInjectedNotices();
  return {
    logger,
    server: clients.server,
    // Namespace labels are read afresh for every pass.
    runPass: (signal) => runStatusPass({ sidecarSets, pods, namespaces: kubeNamespaceSnapshot(clients, options), statuses, events, notices }, signal === undefined ? {} : { signal }),
  };
}

/** Logs a pass as one JSON line: at error level when anything failed, so a log filter can alarm on it. */
export function logPass(logger: Logger, result: PassResult, fields: Record<string, unknown> = {}): void {
  const line = { ...fields, ...result };
  if (result.errors.length > 0) logger.error('status pass', line);
  else logger.info('status pass', line);
}

/**
 * The `npm start` loop's interval from STATUS_SYNC_INTERVAL_MS (default 30 s; 0 turns it off).
 * @throws SourceOptionsError when the value is not 0 or whole milliseconds of at least 1000.
 */
export function statusSyncIntervalFromEnv(env: Env): number {
  const value = millisecondsFromEnv(env, ENV_STATUS_SYNC_INTERVAL_MS, DEFAULT_STATUS_SYNC_INTERVAL_MS, 0);
  // Anything faster would list every pod of the cluster many times a second.
  if (value !== 0 && value < 1000) throw new SourceOptionsError(ENV_STATUS_SYNC_INTERVAL_MS, `must be 0 (off) or at least 1000 milliseconds; got "${value}"`);
  return value;
}
