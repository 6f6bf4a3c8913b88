/**
 * Every metric the functions emit, in one place: its CloudWatch name, unit
 * and dimensions (the embedded-metric-format lines on Lambda, the dashboard
 * and alarms of infra/aws), and its Prometheus family (the local server's
 * `/metrics`). Both come from the same facts (review.ts, resync.ts), so the
 * two views always count the same things.
 *
 * Dimensions are kept few, because each distinct combination is a metric
 * CloudWatch bills for: {Function}, {Function, Outcome}, {SidecarSet},
 * {SidecarSet, State} (the rollout states, ROLLOUT_STATES of
 * lib/status-sync/rollout-state.ts) and {SidecarSet, Reason} (the kubelet's
 * reasons, a small set).
 */

/** The CloudWatch namespace when METRICS_NAMESPACE is unset. */
export const DEFAULT_METRICS_NAMESPACE = 'ServerlessSidecarSet';
/** The variable naming the CloudWatch namespace (the CDK stack sets it). */
export const ENV_METRICS_NAMESPACE = 'METRICS_NAMESPACE';

/** CloudWatch's units, those used here. */
export type MetricUnit = 'Count' | 'Milliseconds';

export const DIMENSIONS = {
  function: 'Function',
  outcome: 'Outcome',
  sidecarSet: 'SidecarSet',
  state: 'State',
  reason: 'Reason',
} as const;

/** How one admission request ended, as the `Outcome` dimension names it. */
export const REVIEW_OUTCOMES = ['Patched', 'Allowed', 'Skipped', 'Denied', 'CannotDecide', 'RefusedCaller', 'BadRequest'] as const;
export type ReviewOutcome = (typeof REVIEW_OUTCOMES)[number];

export interface MetricSpec {
  /** The CloudWatch metric name. */
  name: string;
  unit: MetricUnit;
  /** Its CloudWatch dimension set. */
  dimensions: readonly string[];
  /** What it counts, for HELP lines and the README. */
  help: string;
}

const fn = [DIMENSIONS.function] as const;
const set = [DIMENSIONS.sidecarSet] as const;

/** The admission functions' metrics, one set of values per request. */
export const ADMISSION_METRICS = {
  reviews: { name: 'Reviews', unit: 'Count', dimensions: [DIMENSIONS.function, DIMENSIONS.outcome], help: 'Admission requests answered, by function and outcome.' },
  answerLatency: { name: 'AnswerLatency', unit: 'Milliseconds', dimensions: fn, help: 'Time from the request to its answer, for every request from an authenticated caller.' },
  listLatency: { name: 'SidecarSetListLatency', unit: 'Milliseconds', dimensions: fn, help: 'Time a review spent reading the SidecarSets from the API server (pod-inject, sidecarset-validate).' },
  staleListAge: { name: 'StaleListAge', unit: 'Milliseconds', dimensions: fn, help: 'Age of the cached list served because the API server could not be read in time.' },
} as const satisfies Record<string, MetricSpec>;

/** The reconciler's metrics, one set of values per resync (the periodic full list of every set and pod). */
export const RESYNC_METRICS = {
  duration: { name: 'ResyncDuration', unit: 'Milliseconds', dimensions: fn, help: 'Duration of a resync.' },
  apiRequests: { name: 'ApiRequests', unit: 'Count', dimensions: fn, help: 'Requests a resync made to the API server.' },
  statusesWritten: { name: 'StatusesWritten', unit: 'Count', dimensions: fn, help: 'SidecarSet statuses a resync wrote (the others were already right).' },
  podsUpdated: { name: 'PodsUpdated', unit: 'Count', dimensions: fn, help: 'Pods whose sidecars a reconcile (in a resync or requeued) updated in place.' },
  podsFlipped: { name: 'PodsFlipped', unit: 'Count', dimensions: fn, help: 'Pods whose finished hot upgrade a reconcile (in a resync or requeued) flipped (old container back to the empty image).' },
  podsEvicted: {
    name: 'PodsEvicted',
    unit: 'Count',
    dimensions: fn,
    help: 'Pods without their sidecars a resync evicted so that their controller recreates them injected (sets annotated serverless-sidecarset/repair-missing: Evict).',
  },
  podsNotInjected: { name: 'PodsNotInjected', unit: 'Count', dimensions: fn, help: 'Pods a SidecarSet selects that carry none of its sidecars, over every set, as the last resync counted them.' },
  errors: { name: 'ResyncErrors', unit: 'Count', dimensions: fn, help: 'Things a resync could not do (a list, a write, an event).' },
  webhooksRepointed: {
    name: 'WebhooksRepointed',
    unit: 'Count',
    dimensions: fn,
    help: 'Webhooks a resync repointed because their URL carried a secret no function accepts (a stale copy of the configurations re-applied).',
  },
  webhooksRefused: {
    name: 'WebhooksNotDeployed',
    unit: 'Count',
    dimensions: fn,
    help: 'Webhooks a resync found pointing at a URL the deployment did not make (another host or path): no secret was written into them and no rotation started.',
  },
} as const satisfies Record<string, MetricSpec>;

/** HELP text of a deprecated name: Kubernetes' metrics stability framework marks a deprecated metric's help the same way. */
export function deprecatedHelp(replacement: string, help: string): string {
  return `(Deprecated: use ${replacement}) ${help}`;
}

/** The same spec under its old name, for the one release it is still written beside the new one. */
function deprecated(oldName: string, spec: MetricSpec): MetricSpec {
  return { ...spec, name: oldName, help: deprecatedHelp(spec.name, spec.help) };
}

/**
 * The resync's metrics under their names until this release, written with
 * the same values beside the new names until the next minor release (docs/UPGRADING.md).
 */
export const DEPRECATED_RESYNC_METRICS = {
  duration: deprecated('PassDuration', RESYNC_METRICS.duration),
  errors: deprecated('PassErrors', RESYNC_METRICS.errors),
} as const satisfies Partial<Record<keyof typeof RESYNC_METRICS, MetricSpec>>;

/** One SidecarSet's figures, per resync and per requeued reconcile of the set. */
export const SET_METRICS = {
  matchedPods: { name: 'MatchedPods', unit: 'Count', dimensions: set, help: 'Pods the SidecarSet selects (status.matchedPods).' },
  updatedPods: { name: 'UpdatedPods', unit: 'Count', dimensions: set, help: "Matched pods running the set's current sidecars (status.updatedPods)." },
  readyPods: { name: 'ReadyPods', unit: 'Count', dimensions: set, help: 'Matched pods that are ready (status.readyPods).' },
  updatedReadyPods: { name: 'UpdatedReadyPods', unit: 'Count', dimensions: set, help: 'Updated pods that are ready (status.updatedReadyPods).' },
  notInjectedPods: { name: 'NotInjectedPods', unit: 'Count', dimensions: set, help: "Matched pods that carry none of the set's sidecars." },
} as const satisfies Record<string, MetricSpec>;

/** 1 for the rollout state a set is in, with the state as a dimension. */
export const ROLLOUT_STATE_METRIC = {
  name: 'RolloutState',
  unit: 'Count',
  dimensions: [DIMENSIONS.sidecarSet, DIMENSIONS.state],
  help: 'The rollout state of each SidecarSet: 1 for the state it is in.',
} as const satisfies MetricSpec;

/**
 * Updated pods not available, by why (the kubelet's waiting reason of their
 * sidecars, such as ImagePullBackOff or CrashLoopBackOff; Restarting while
 * the update is in flight; NotReady for a reason of the pod's own).
 */
export const UNAVAILABLE_PODS_METRIC = {
  name: 'UnavailablePods',
  unit: 'Count',
  dimensions: [DIMENSIONS.sidecarSet, DIMENSIONS.reason],
  help: "Updated pods that are not ready, by the kubelet's reason for their sidecars (ImagePullBackOff, CrashLoopBackOff, ...; Restarting while the update is in flight).",
} as const satisfies MetricSpec;

/** The CloudWatch metric names, for the checks that every name is documented and has a value. */
export const ALL_METRICS: readonly MetricSpec[] = [
  ...Object.values(ADMISSION_METRICS),
  ...Object.values(RESYNC_METRICS),
  ...Object.values(DEPRECATED_RESYNC_METRICS),
  ...Object.values(SET_METRICS),
  ROLLOUT_STATE_METRIC,
  UNAVAILABLE_PODS_METRIC,
];

/** The namespace METRICS_NAMESPACE names, or the default; CloudWatch allows 1 to 255 characters and no leading colon. */
export function metricsNamespaceFromEnv(env: Readonly<Record<string, string | undefined>>): string {
  const value = env[ENV_METRICS_NAMESPACE]?.trim() ?? '';
  if (value === '') return DEFAULT_METRICS_NAMESPACE;
  if (value.length > 255 || value.startsWith(':') || !/^[\x21-\x7e ]+$/.test(value)) {
    throw new RangeError(`${ENV_METRICS_NAMESPACE} must be 1 to 255 printable ASCII characters not starting with ':'; got "${value}"`);
  }
  return value;
}
