/**
 * The status reconciler's composition, once per cold start (or server
 * start): the cluster's credentials (a kubeconfig, or EKS with the function's
 * IAM role), the live adapters, and what was already reported about
 * uninjected pods. The Lambda handler, the `npm start` loop and the tests
 * all resync and reconcile through this.
 */
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { kubeWebhookUrls } from '../../lib/adapters/kube-webhook-configurations.ts';
import { secretsManagerStore } from '../../lib/adapters/secrets-manager.ts';
import { deployedWebhookUrlsFromEnv, ENV_SECRET_ARN, rotationSettingsFromEnv } from '../../lib/auth/caller-config.ts';
import { rotateWebhookSecret, type RefusedWebhook, type RotationResult, type SecretStore } from '../../lib/auth/rotation.ts';
import { refusedWebhookEvents, repairRecorder } from '../../lib/webhook-config/refused-webhooks.ts';
import { kubeConfigClient } from '../../lib/adapters/kubeconfig.ts';
import { kubeClusterReader, kubeSidecarSetSource, millisecondsFromEnv, SourceOptionsError } from '../../lib/adapters/kube-sources.ts';
import { deprecatedVariableWarning, variableInUse, type RenamedVariable } from '../../lib/adapters/renamed-variable.ts';
import { kubeAdmissionConfigEventSink, kubeEventSink, kubePodEventSink, kubeRecordedStalls } from '../../lib/adapters/kube-events.ts';
import { kubeNamespaceSnapshot } from '../../lib/adapters/kube-namespaces.ts';
import { kubePodPages, kubePodWriter, kubeSetPods } from '../../lib/adapters/kube-pods.ts';
import { kubePodEvictor } from '../../lib/adapters/kube-evictions.ts';
import { kubePodWebhook } from '../../lib/adapters/kube-pod-webhook.ts';
import { DEFAULT_CALL_TIMEOUT_MS, type KubeClient, type RequestRetry } from '../../lib/adapters/kube-request.ts';
import { kubeRevisionStore } from '../../lib/adapters/kube-revisions.ts';
import { kubeStatusWriter } from '../../lib/adapters/kube-sidecarsets.ts';
import { discoveredSidecarSetVersion, type SidecarSetVersions } from '../../lib/adapters/kube-sidecarsets-version.ts';
import { systemClock, type AdmissionConfigEventSink, type Logger } from '../../lib/ports.ts';
import { errorMessage } from '../../lib/errors.ts';
import { canaryEvents } from '../../lib/status-sync/canary-events.ts';
import { notInjectedEvents } from '../../lib/status-sync/not-injected.ts';
import { DEFAULT_HEARTBEAT_MS } from '../../lib/status-sync/resync-log.ts';
import { runResync, STATUS_SYNC, type ResyncResult, type ResyncOptions } from '../../lib/status-sync/resync.ts';
import type { AdmittedQueue } from '../../lib/status-sync/admitted-queue.ts';
import { DEFAULT_CONTROLLER_OPTIONS, runController, type ControllerSummary } from '../../lib/status-sync/run-controller.ts';
import { DEFAULT_STALL_MS, ENV_ROLLOUT_STALL_MS, rolloutStateEvents } from '../../lib/status-sync/rollout-state.ts';
import { observedStates } from '../../lib/status-sync/observed-states.ts';
import { DEFAULT_REPAIR_MAX_EVICTIONS, ENV_REPAIR_MAX_EVICTIONS, ENV_REPAIR_MAX_EVICTIONS_DEPRECATED, repairMemory, type RepairDeps } from '../../lib/status-sync/repair-step.ts';
import { memoisedRevisionFacts } from '../../lib/status-sync/revision-register.ts';
import { resyncFactOf, setReconcileFactOf } from '../../lib/metrics/facts.ts';
import type { RolloutDeps } from '../../lib/status-sync/set-reconcile.ts';
import { revisionNamespaceFromEnv } from '../../lib/adapters/revision-namespace.ts';
import { renewStatusSyncLease, type LeaseRenewal } from '../../lib/adapters/kube-lease.ts';
import { ENV_STATUS_SYNC_INTERVAL_MS, leaseDurationSeconds } from '../../lib/status-sync/lease.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { hostname } from 'node:os';
import { clusterKubeConfig } from '../shared/cluster.ts';
import { lambdaMetrics, type Env, type Overrides } from '../shared/compose.ts';

export interface StatusSyncOverrides extends Overrides {
  /** Where the webhook secret is kept when not in Secrets Manager (the local server's file). */
  secretStore?: SecretStore;
}

/** How often `npm start` runs a resync; 0 turns the loop off. */
export { ENV_STATUS_SYNC_INTERVAL_MS };
export const DEFAULT_STATUS_SYNC_INTERVAL_MS = 30_000;
export const ENV_STATUS_SYNC_HEARTBEAT_MS = 'STATUS_SYNC_HEARTBEAT_MS';

/** The longest wait between two reconciles of a set whose rollout is in flight (its requeue-after). */
export const ENV_REQUEUE_AFTER_MS = 'REQUEUE_AFTER_MS';
/** REQUEUE_AFTER_MS's name until this release, still read (docs/UPGRADING.md). */
export const ENV_ROLLOUT_PACE_MS = 'ROLLOUT_PACE_MS';
/** The variables renamed to Kubernetes' words, each still read under its old name for one release. */
export const RENAMED_VARIABLES = {
  requeueAfter: { name: ENV_REQUEUE_AFTER_MS, deprecated: ENV_ROLLOUT_PACE_MS },
  repairMaxEvictions: { name: ENV_REPAIR_MAX_EVICTIONS, deprecated: ENV_REPAIR_MAX_EVICTIONS_DEPRECATED },
} as const satisfies Record<string, RenamedVariable>;
/** Told when a setting is read from its deprecated name. */
export type DeprecatedVariableUse = (renamed: RenamedVariable) => void;
/**
 * Sets the controller reconciles at once (each by one worker at a time), as
 * Kruise's `--sidecarset-workers` (default 3): sets rolled together do not
 * wait for one another's reconciles.
 */
export const ENV_SIDECARSET_WORKERS = 'SIDECARSET_WORKERS';
export const DEFAULT_SIDECARSET_WORKERS = 3;
/** More workers than this would only queue on the API server's connection limit. */
const MAX_SIDECARSET_WORKERS = 64;
/** How long updated pods may stay unavailable before the rollout is reported stalled and left to the schedule (docs/ROLLOUT.md). */
export { ENV_ROLLOUT_STALL_MS };

export interface StatusSyncRuntime {
  /**
   * One resync against the cluster; never throws (failures are in the
   * result). `deployedWebhookUrls`, when given (the scheduled event's, on
   * AWS), are the URL prefixes the deployment made, in place of
   * DEPLOYED_WEBHOOK_URLS: the only URLs the rotation writes a secret into.
   */
  resync: (signal?: AbortSignal, deployedWebhookUrls?: readonly string[], handOff?: ResyncOptions['handOff']) => Promise<ResyncResult>;
  /**
   * Reconciles sets with rollout work in flight (and admitted changes from
   * `queue`) with their own reconciles until none is in flight or `signal` ends;
   * never throws.
   */
  runController: (names: readonly string[], signal?: AbortSignal, queue?: AdmittedQueue, budget?: AbortSignal) => Promise<ControllerSummary>;
  logger: Logger;
  /** The API server, for logs. */
  server: string;
  /** Requests sent again so far (a count that only grows; the Lambda reports each invocation's share). */
  retries: () => number;
  /** API requests sent so far, watches and retries included (a count that only grows: the pod-trigger bench's requests per change). */
  requests: () => number;
}

/**
 * Composes the reconciler for the cluster the environment names.
 * @throws ConfigurationError, KubeconfigError or EksAuthError naming what is missing or wrong.
 */
export async function composeStatusSync(env: Env, overrides: StatusSyncOverrides = {}): Promise<StatusSyncRuntime> {
  const logger = overrides.logger ?? jsonLogger({ function: STATUS_SYNC });
  const metrics = lambdaMetrics(env, overrides, logger).statusSync();
  const kc = await clusterKubeConfig(env, overrides);
  const { client, retries } = reconcilerClient(kc, logger);
  const versions = discoveredSidecarSetVersion(client);
  const ports = resyncPorts(client, versions);
  const rotate = secretRotation(env, overrides, client);
  const recordRefused = refusalRecorder(kubeAdmissionConfigEventSink(client), logger);
  // A stall an earlier invocation recorded is found among the stored Events, not recorded once per cold start.
  const states = observedStates(rolloutStateEvents(kubeRecordedStalls(client)));
  const stallMs = millisecondsFromEnv(env, ENV_ROLLOUT_STALL_MS, DEFAULT_STALL_MS, 1_000);
  const revisionNamespace = revisionNamespaceFromEnv(env);
  const heartbeat = leaseHeartbeat(client, leaseRenewalOf(env, revisionNamespace, overrides), logger);
  const rollout = rolloutDepsOf(client, versions, revisionNamespace, { clock: overrides.clock ?? systemClock, states, stallMs });
  // Once per cold start, so a deprecated name is warned about once per process.
  const deprecated: DeprecatedVariableUse = (renamed) => {
    const warning = deprecatedVariableWarning(renamed);
    logger.warn(warning.message, warning.fields);
  };
  const intervalMs = requeueAfterFromEnv(env, deprecated);
  const workers = sidecarSetWorkersFromEnv(env);
  // Only sets annotated for it have pods evicted; the limit holds over all of them.
  const repair: RepairDeps = { evictions: kubePodEvictor(client), podWebhook: kubePodWebhook(client), setPods: rollout.setPods, podEvents: rollout.podEvents, maxPerResync: repairMaxEvictionsFromEnv(env, deprecated), memory: repairMemory() };
  const wiring: Wiring = { client, logger, metrics, ports, rollout, repair, rotate, recordRefused, states, heartbeat, notInjected: {} };
  return {
    logger,
    server: client.server,
    retries,
    requests: () => client.requests(),
    resync: resyncOf(wiring),
    runController: runControllerOf(wiring, { intervalMs, stallMs, workers }),
  };
}

/** What composeStatusSync wires once per cold start, shared by the resync and the controller. */
interface Wiring {
  client: KubeClient;
  logger: Logger;
  metrics: ReturnType<ReturnType<typeof lambdaMetrics>['statusSync']>;
  ports: ReturnType<typeof resyncPorts>;
  rollout: RolloutDeps;
  repair: RepairDeps;
  rotate: ReturnType<typeof secretRotation>;
  recordRefused: ReturnType<typeof refusalRecorder>;
  states: ReturnType<typeof observedStates>;
  heartbeat: ReturnType<typeof leaseHeartbeat>;
  /** The last resync's not-injected counts, for the requeued reconciles' set figures. */
  notInjected: Readonly<Record<string, number>>;
}

/** The runtime's resync: the statuses and rollouts, then the rotation, the refusals, the metrics and the Lease. */
function resyncOf(w: Wiring): StatusSyncRuntime['resync'] {
  return async (signal, deployedWebhookUrls, handOff) => {
    const requestsBefore = w.client.requests();
    // Namespace labels are read afresh for every resync.
    const resynced = await runResync({ ...w.ports, namespaces: kubeNamespaceSnapshot(w.client), rollout: w.rollout, repair: w.repair }, { ...(signal === undefined ? {} : { signal }), ...(handOff === undefined ? {} : { handOff }) });
    const rotated = w.rotate === undefined ? resynced : withRotation(resynced, await w.rotate(signal, deployedWebhookUrls));
    const result = await w.recordRefused(rotated, signal);
    logRepaired(w.logger, result);
    // Every caller (the Lambda, the npm start loop) resyncs through here, so every resync is measured once.
    w.metrics.resync(resyncFactOf(result, w.client.requests() - requestsBefore, w.states.current()));
    await w.heartbeat(signal);
    w.notInjected = result.notInjected;
    return result;
  };
}

/** The runtime's controller over the sets in flight, each requeued reconcile measured as the resync is. */
function runControllerOf(w: Wiring, options: { intervalMs: number; stallMs: number; workers: number }): StatusSyncRuntime['runController'] {
  return (names, signal, queue, budget) =>
    runController(
      names,
      {
        statuses: w.ports.statuses,
        events: w.ports.events,
        namespaces: kubeNamespaceSnapshot(w.client),
        rollout: w.rollout,
        // From the same result its Events came from.
        onReconcile: (result) => {
          const fact = setReconcileFactOf(result, w.states.current().get(result.sidecarSet), w.notInjected[result.sidecarSet] ?? 0);
          if (fact !== undefined) w.metrics.setReconcile(fact);
        },
      },
      { ...options, ...(budget === undefined ? {} : { budget }) },
      signal,
      queue,
    );
}

/**
 * One client for every request of the reconciler, so that the resync's count of
 * requests (retries and watches too) is one number. One slow or dropped
 * request costs a retry, not the resync (kube-request.ts says which are
 * retried); each is logged.
 */
function reconcilerClient(kc: KubeConfig, logger: Logger): { client: KubeClient; retries: () => number } {
  let retries = 0;
  const client = kubeConfigClient(kc, {
    attemptTimeoutMs: DEFAULT_CALL_TIMEOUT_MS,
    onRetry: (retry: RequestRetry) => {
      retries++;
      logger.warn('API request retried', { ...retry });
    },
  });
  return { client, retries: () => retries };
}

/**
 * The resync's ports on the cluster. Never a stale list: a status must be
 * written against the set as stored now. The sets are read, and their status
 * written, in the version the cluster stores (never through the conversion webhook).
 */
function resyncPorts(client: KubeClient, versions: SidecarSetVersions) {
  return {
    sidecarSets: kubeSidecarSetSource(kubeClusterReader(client, versions), { maxStalenessMs: 0, apiTimeoutMs: DEFAULT_CALL_TIMEOUT_MS }),
    pods: kubePodPages(client),
    statuses: kubeStatusWriter(client, versions),
    events: kubeEventSink(client, { versions }),
    notices: notInjectedEvents(),
    canaries: canaryEvents(),
  };
}

/** The rollout's ports on the cluster, with the clock and stall rule every reconcile shares. */
function rolloutDepsOf(client: KubeClient, versions: SidecarSetVersions, revisionNamespace: string, shared: Pick<RolloutDeps, 'clock' | 'states' | 'stallMs'>): RolloutDeps {
  return {
    // Owned by the set in the version it is stored (and read) in, as Kruise writes it.
    revisions: kubeRevisionStore(client, revisionNamespace, { versions }),
    setPods: kubeSetPods(client),
    pods: kubePodWriter(client),
    podEvents: kubePodEventSink(client),
    ...shared,
    // A warm process works out an unchanged set's revision data once, not on every reconcile.
    revisionFacts: memoisedRevisionFacts().factsOf,
  };
}

/**
 * The heartbeat Lease's renewal (lib/status-sync/lease.ts): held by the
 * Lambda function, or the host of `npm start`; valid for a few of the
 * resyncs' intervals (STATUS_SYNC_INTERVAL_MS: the schedule's rate on AWS).
 */
function leaseRenewalOf(env: Env, namespace: string, overrides: StatusSyncOverrides): LeaseRenewal {
  const fn = env.AWS_LAMBDA_FUNCTION_NAME;
  const holder = fn !== undefined && fn !== '' ? fn : `${STATUS_SYNC}@${hostname()}`;
  const intervalMs = statusSyncIntervalFromEnv(env) || DEFAULT_STATUS_SYNC_INTERVAL_MS;
  const clock = overrides.clock ?? systemClock;
  return { namespace, holder, durationSeconds: leaseDurationSeconds(intervalMs), nowMs: () => clock.now().getTime() };
}

/**
 * Renews the Lease after a resync. A failure is logged with the count of
 * failures in a row and never fails the resync: the Lease only tells doctor.
 */
function leaseHeartbeat(client: KubeClient, renewal: LeaseRenewal, logger: Logger): (signal?: AbortSignal) => Promise<void> {
  let failures = 0;
  return async (signal) => {
    try {
      await renewStatusSyncLease(client, renewal, signal);
      failures = 0;
    } catch (error) {
      failures++;
      logger.warn('the heartbeat Lease was not renewed', { namespace: renewal.namespace, failuresInARow: failures, error: errorMessage(error) });
    }
  };
}

/**
 * The webhook secret's rotation, one step per resync, when the secret is stored
 * (Secrets Manager, or the local server's file) and rotation is not off.
 * @throws CallerSecretError naming a bad rotation setting.
 */
function secretRotation(env: Env, overrides: StatusSyncOverrides, client: KubeClient): ((signal?: AbortSignal, deployed?: readonly string[]) => Promise<RotationResult>) | undefined {
  const arn = env[ENV_SECRET_ARN];
  const store = overrides.secretStore ?? (arn !== undefined && arn !== '' ? secretsManagerStore(arn) : undefined);
  const settings = rotationSettingsFromEnv(env);
  if (store === undefined || settings.periodMs === 0) return undefined;
  const fromEnv = deployedWebhookUrlsFromEnv(env);
  const webhooks = kubeWebhookUrls(client);
  const clock = overrides.clock ?? systemClock;
  const now = () => clock.now();
  return (signal, deployed) => rotateWebhookSecret({ store, webhooks, now, deployed: deployed ?? fromEnv, recordRepaired: repairRecorder(kubeAdmissionConfigEventSink(client)) }, settings, signal);
}

/**
 * Tells webhooks the rotation refused (pointing at URLs the deployment did
 * not make) with a Warning Event on their configuration, once per process
 * for the same refusals (the WebhooksNotDeployed metric counts every resync),
 * and a warning line every resync. A failed Event is one of the resync's errors.
 */
function refusalRecorder(sink: AdmissionConfigEventSink, logger: Logger): (result: ResyncResult, signal?: AbortSignal) => Promise<ResyncResult> {
  let recorded = '';
  return async (result, signal) => {
    const refused: readonly RefusedWebhook[] = result.secretRotation?.refused ?? [];
    if (refused.length === 0) {
      recorded = '';
      return result;
    }
    logger.warn('webhooks point at URLs the deployment did not make: no secret written into them, no rotation started', { webhooks: refused });
    const key = JSON.stringify(refused);
    if (key === recorded) return result;
    const errors = [...result.errors];
    for (const event of refusedWebhookEvents(refused)) {
      try {
        await sink.record(event, signal);
      } catch (error) {
        errors.push({ operation: `tell ${event.object.kind} ${event.object.name} points elsewhere`, message: errorMessage(error) });
      }
    }
    if (errors.length === result.errors.length) recorded = key;
    return { ...result, errors };
  };
}

/** Pods and SidecarSet writes were failing until the rotation repaired the webhooks: worth a line of its own, however often the resync log writes. */
function logRepaired(logger: Logger, result: ResyncResult): void {
  const repaired = result.secretRotation?.repaired;
  if (repaired !== undefined) logger.warn('repointed webhooks that carried a secret no function accepts (a stale copy of the configurations was applied)', { webhooks: repaired });
}

/** The resync result with the rotation's step; a failed step is one of its errors, so the resync logs at error level. */
function withRotation(result: ResyncResult, rotation: RotationResult): ResyncResult {
  const errors = rotation.step === 'failed' ? [...result.errors, { operation: 'rotate the webhook secret', message: rotation.detail ?? 'failed' }] : result.errors;
  return { ...result, errors, secretRotation: rotation };
}

/** Whether the controller did anything worth a log line. */
export function controllerDidAnything(summary: ControllerSummary): boolean {
  return summary.reconciles > 0 || summary.errors.length > 0;
}

/** The message of the line {@link logControllerSummary} writes ('rollout follow-up' until this release). */
export const CONTROLLER_MESSAGE = 'controller';
/** The message of the line {@link logResync} writes ('status pass' until this release). */
export const RESYNC_MESSAGE = 'resync';

/** Logs what the controller did for requeued sets as one JSON line (error level when anything failed). */
export function logControllerSummary(logger: Logger, summary: ControllerSummary, fields: Record<string, unknown> = {}): void {
  const line = { ...fields, ...summary };
  if (summary.errors.length > 0) logger.error(CONTROLLER_MESSAGE, line);
  else logger.info(CONTROLLER_MESSAGE, line);
}

/** Logs a resync as one JSON line: at error level when anything failed, so a log filter can alarm on it. */
export function logResync(logger: Logger, result: ResyncResult, fields: Record<string, unknown> = {}): void {
  // Each set's counts are metrics (and the sets' statuses); one line per resync stays short however many sets there are.
  const logged: Partial<ResyncResult> = { ...result };
  delete logged.sets;
  const line = { ...fields, ...logged };
  if (result.errors.length > 0) logger.error(RESYNC_MESSAGE, line);
  else logger.info(RESYNC_MESSAGE, line);
}

/** A whole number from `variable` (digits only: "5 pods" is a guess at the format, not 5), `fallback` when unset. */
function wholeNumberFromEnv(env: Env, variable: string, fallback: number, valid: (value: number) => boolean, what: string): number {
  const raw = env[variable]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || !valid(value)) throw new SourceOptionsError(variable, `must be ${what}; got "${raw}"`);
  return value;
}

/** The variable holding `renamed`'s setting, `deprecated` told when it is the old name. */
function renamedVariableOf(env: Env, renamed: RenamedVariable, deprecated: DeprecatedVariableUse | undefined): string {
  const inUse = variableInUse(env, renamed);
  if (inUse.deprecated) deprecated?.(renamed);
  return inUse.variable;
}

/**
 * How many uninjected pods a resync may try to evict, over every set that asks
 * for repair, from REPAIR_MAX_EVICTIONS_PER_RESYNC (default 5; 0 evicts none),
 * or its deprecated name REPAIR_MAX_EVICTIONS_PER_PASS.
 * @throws SourceOptionsError when the value is not a whole number, or both names are set to different values.
 */
export function repairMaxEvictionsFromEnv(env: Env, deprecated?: DeprecatedVariableUse): number {
  const variable = renamedVariableOf(env, RENAMED_VARIABLES.repairMaxEvictions, deprecated);
  return wholeNumberFromEnv(env, variable, DEFAULT_REPAIR_MAX_EVICTIONS, () => true, 'a whole number of pods (0 evicts none)');
}

/**
 * The controller's requeue-after, the longest wait between two reconciles of a
 * set in flight, from REQUEUE_AFTER_MS (default 5 s, at least 100 ms), or its
 * deprecated name ROLLOUT_PACE_MS.
 * @throws SourceOptionsError when the value is not whole milliseconds of at least 100, or both names are set to different values.
 */
export function requeueAfterFromEnv(env: Env, deprecated?: DeprecatedVariableUse): number {
  const variable = renamedVariableOf(env, RENAMED_VARIABLES.requeueAfter, deprecated);
  return millisecondsFromEnv(env, variable, DEFAULT_CONTROLLER_OPTIONS.intervalMs, 100);
}

/**
 * The controller's workers from SIDECARSET_WORKERS (default 3, 1 to 64).
 * @throws SourceOptionsError when the value is not a whole number in that range.
 */
export function sidecarSetWorkersFromEnv(env: Env): number {
  return wholeNumberFromEnv(env, ENV_SIDECARSET_WORKERS, DEFAULT_SIDECARSET_WORKERS, (n) => n >= 1 && n <= MAX_SIDECARSET_WORKERS, `a whole number of workers from 1 to ${MAX_SIDECARSET_WORKERS}`);
}

/**
 * The `npm start` loop's longest silence from STATUS_SYNC_HEARTBEAT_MS
 * (default 5 minutes; 0 logs every resync).
 * @throws SourceOptionsError when the value is not whole milliseconds.
 */
export function statusSyncHeartbeatFromEnv(env: Env): number {
  return millisecondsFromEnv(env, ENV_STATUS_SYNC_HEARTBEAT_MS, DEFAULT_HEARTBEAT_MS, 0);
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
