/**
 * What an operator watches: a CloudWatch dashboard over the metrics the
 * functions write as EMF lines (lib/metrics/catalogue.ts) and Lambda's own,
 * and the alarms on those metrics. A SidecarSet's figures cannot be listed
 * at synth time (sets come and go in the cluster), so the per-set widgets
 * are metric math SEARCH expressions over the SidecarSet dimension: every
 * set that reported in the graph's time range gets its own line.
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Dashboard, GraphWidget, MathExpression, Metric, TextWidget, TreatMissingData, type IMetric, type IWidget } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { ADMISSION_METRICS, DIMENSIONS, RESYNC_METRICS, ROLLOUT_STATE_METRIC, SET_METRICS, type MetricSpec } from '../../lib/metrics/catalogue.ts';
import { RECONCILER_FUNCTION } from '../../lib/metrics/emf-recorder.ts';
import type { AdmissionFunctionName } from '../../lib/webhooks/registry.ts';

/** Graph points: a minute, the reconciler's default rate. */
const PERIOD = Duration.minutes(1);
const WIDTH = 12;
const HEIGHT = 6;

/** A SEARCH over every value of `dimensions` for one metric (quoted: a namespace may hold '/'). */
export function searchExpression(namespace: string, spec: Pick<MetricSpec, 'name' | 'dimensions'>, statistic: string, extra = ''): string {
  const schema = [JSON.stringify(namespace), ...spec.dimensions].join(',');
  return `SEARCH('{${schema}} MetricName="${spec.name}"${extra}', '${statistic}', ${PERIOD.toSeconds()})`;
}

function search(namespace: string, spec: Pick<MetricSpec, 'name' | 'dimensions'>, statistic: string, label: string, extra = ''): MathExpression {
  return new MathExpression({ expression: searchExpression(namespace, spec, statistic, extra), usingMetrics: {}, label, period: PERIOD });
}

/**
 * One of the functions' own metrics. No unit is given: an alarm or graph
 * with a unit sees only data points written with exactly that unit.
 */
export function functionMetric(namespace: string, spec: Pick<MetricSpec, 'name'>, dimensions: Record<string, string>, statistic: string, label?: string): Metric {
  return new Metric({ namespace, metricName: spec.name, dimensionsMap: dimensions, statistic, period: PERIOD, ...(label !== undefined ? { label } : {}) });
}

export interface DashboardProps {
  namespace: string;
  dashboardName: string;
  admission: Readonly<Record<AdmissionFunctionName, IFunction>>;
  statusSync: IFunction;
}

export function sidecarSetDashboard(scope: Construct, id: string, props: DashboardProps): Dashboard {
  const { namespace } = props;
  const admission = Object.keys(props.admission) as AdmissionFunctionName[];
  const fnDims = (fn: string) => ({ [DIMENSIONS.function]: fn });
  const reconciler = fnDims(RECONCILER_FUNCTION);
  const lambdaStats = { period: PERIOD, statistic: 'Sum' };
  const widgets: IWidget[][] = [
    [
      new TextWidget({
        markdown:
          '## SidecarSet webhooks and reconciler\nAnswers, latency and failures of the three webhooks; the reconciler\'s resyncs; each SidecarSet\'s rollout. What each metric means and what to do when an alarm fires: the project\'s docs/METRICS.md.',
        width: 24,
        height: 2,
      }),
    ],
    [
      new GraphWidget({
        title: 'Answers per function and outcome (per minute)',
        left: [search(namespace, ADMISSION_METRICS.reviews, 'Sum', '')],
        width: WIDTH,
        height: HEIGHT,
      }),
      new GraphWidget({
        title: 'Answer latency, p50 and p99 (ms)',
        left: admission.flatMap((fn) => [
          functionMetric(namespace, ADMISSION_METRICS.answerLatency, fnDims(fn), 'p50', `${fn} p50`),
          functionMetric(namespace, ADMISSION_METRICS.answerLatency, fnDims(fn), 'p99', `${fn} p99`),
        ]),
        width: WIDTH,
        height: HEIGHT,
      }),
    ],
    [
      new GraphWidget({
        title: 'Failures: cannot decide (failurePolicy applied), Lambda errors and throttles',
        left: [
          ...admission.map((fn) => functionMetric(namespace, ADMISSION_METRICS.reviews, { ...fnDims(fn), [DIMENSIONS.outcome]: 'CannotDecide' }, 'Sum', `${fn} cannot decide`)),
          ...admission.flatMap((fn) => [
            props.admission[fn].metricErrors({ ...lambdaStats, label: `${fn} errors` }),
            props.admission[fn].metricThrottles({ ...lambdaStats, label: `${fn} throttles` }),
          ]),
          props.statusSync.metricErrors({ ...lambdaStats, label: `${RECONCILER_FUNCTION} errors` }),
          props.statusSync.metricThrottles({ ...lambdaStats, label: `${RECONCILER_FUNCTION} throttles` }),
        ],
        width: WIDTH,
        height: HEIGHT,
      }),
      new GraphWidget({
        title: 'SidecarSet list latency p99 and stale list age (ms)',
        left: admission.filter((fn) => fn !== 'sidecarset-default').map((fn) => functionMetric(namespace, ADMISSION_METRICS.listLatency, fnDims(fn), 'p99', `${fn} list p99`)),
        right: admission.filter((fn) => fn !== 'sidecarset-default').map((fn) => functionMetric(namespace, ADMISSION_METRICS.staleListAge, fnDims(fn), 'Maximum', `${fn} stale age`)),
        width: WIDTH,
        height: HEIGHT,
      }),
    ],
    [
      new GraphWidget({
        title: 'Rollout progress per SidecarSet: matched, updated, updated and ready pods',
        left: [
          search(namespace, SET_METRICS.matchedPods, 'Maximum', 'matched'),
          search(namespace, SET_METRICS.updatedPods, 'Maximum', 'updated'),
          search(namespace, SET_METRICS.updatedReadyPods, 'Maximum', 'updated and ready'),
        ],
        width: WIDTH,
        height: HEIGHT,
      }),
      new GraphWidget({
        title: 'Rollout state per SidecarSet (1 = in that state)',
        left: [search(namespace, ROLLOUT_STATE_METRIC, 'Maximum', '')],
        width: WIDTH,
        height: HEIGHT,
      }),
    ],
    [
      new GraphWidget({
        title: 'Pods not injected (all sets, and per SidecarSet)',
        left: [functionMetric(namespace, RESYNC_METRICS.podsNotInjected, reconciler, 'Maximum', 'all sets'), search(namespace, SET_METRICS.notInjectedPods, 'Maximum', 'per set')],
        width: WIDTH,
        height: HEIGHT,
      }),
      new GraphWidget({
        title: 'Reconciler resyncs: duration (ms), API requests, statuses written, errors',
        left: [functionMetric(namespace, RESYNC_METRICS.duration, reconciler, 'p50', 'duration p50'), functionMetric(namespace, RESYNC_METRICS.duration, reconciler, 'Maximum', 'duration max')],
        right: [
          functionMetric(namespace, RESYNC_METRICS.apiRequests, reconciler, 'Average', 'API requests per resync'),
          functionMetric(namespace, RESYNC_METRICS.statusesWritten, reconciler, 'Sum', 'statuses written'),
          functionMetric(namespace, RESYNC_METRICS.podsUpdated, reconciler, 'Sum', 'pods updated'),
          functionMetric(namespace, RESYNC_METRICS.errors, reconciler, 'Sum', 'resync errors'),
        ],
        width: WIDTH,
        height: HEIGHT,
      }),
    ],
  ];
  return new Dashboard(scope, id, { dashboardName: props.dashboardName, widgets });
}

/** Alarms look at five-minute windows: a single failed call is worth a look. */
export const ALARM_PERIOD = Duration.minutes(5);

export interface MetricAlarmSpec {
  id: string;
  metric: IMetric;
  description: string;
}

/** The alarms on the functions' own metrics, beside Lambda's errors and throttles. */
export function metricAlarmSpecs(namespace: string): MetricAlarmSpec[] {
  return [
    {
      id: 'PodInjectCannotDecideAlarm',
      metric: new Metric({
        namespace,
        metricName: ADMISSION_METRICS.reviews.name,
        dimensionsMap: { [DIMENSIONS.function]: 'pod-inject', [DIMENSIONS.outcome]: 'CannotDecide' },
        statistic: 'Sum',
        period: ALARM_PERIOD,
      }),
      description:
        "pod-inject could not decide (it answered 500/503: the API server could not be read in time, a pinned revision is missing, an answer too large): the API server applied the pod webhook's failurePolicy, so pods were refused (Fail) or created without their sidecars (Ignore)",
    },
    {
      id: 'PodsNotInjectedAlarm',
      metric: new Metric({ namespace, metricName: RESYNC_METRICS.podsNotInjected.name, dimensionsMap: { [DIMENSIONS.function]: RECONCILER_FUNCTION }, statistic: 'Maximum', period: ALARM_PERIOD }),
      description: 'the reconciler found pods a SidecarSet selects that carry none of its sidecars (created while the pod webhook was down or bypassed): recreate them to inject them',
    },
    {
      id: 'RolloutStalledAlarm',
      // Over every SidecarSet at once: the per-set RolloutState metric the dashboard graphs, read by a Metrics
      // Insights query (an alarm cannot SEARCH), so the alarm, the graph, the Events and `npm run status` say one state.
      metric: new MathExpression({ expression: stalledRolloutsQuery(namespace), usingMetrics: {}, label: 'SidecarSets stalled', period: ALARM_PERIOD }),
      description:
        "a SidecarSet's rollout is stalled: its updated pods stayed unavailable past the stall threshold (rolloutStallSeconds, 60 s by default), so it updates no further pod. Its RolloutStalled Event (kubectl describe sidecarset) and `npm run status` name the kubelet's reason (ImagePullBackOff, CrashLoopBackOff) and the pods: fix the sidecar image or roll back the set's spec",
    },
    {
      id: 'WebhooksRepointedAlarm',
      metric: new Metric({ namespace, metricName: RESYNC_METRICS.webhooksRepointed.name, dimensionsMap: { [DIMENSIONS.function]: RECONCILER_FUNCTION }, statistic: 'Sum', period: ALARM_PERIOD }),
      description:
        'the reconciler repointed webhooks whose URL carried a secret no function accepts (a copy of the configurations saved before a rotation was applied again, or a last segment written by someone holding the reconciler credential): pod creations and SidecarSet writes failed until then; the WebhookSecretRepaired Event on the configuration names them; find out who changed them',
    },
    {
      id: 'WebhooksNotDeployedAlarm',
      metric: new Metric({ namespace, metricName: RESYNC_METRICS.webhooksRefused.name, dimensionsMap: { [DIMENSIONS.function]: RECONCILER_FUNCTION }, statistic: 'Sum', period: ALARM_PERIOD }),
      description:
        "a webhook configuration (or the SidecarSet CRD's conversion) points at a URL this stack did not deploy: the API server sends pods or SidecarSets there; the reconciler gives it no secret and rotates nothing until the manifests are rendered and applied afresh (WebhookNotDeployed Events in default say which)",
    },
  ];
}

/** A Metrics Insights query: the most SidecarSets of the namespace in the Stalled state at one time (1 when any is). */
export function stalledRolloutsQuery(namespace: string): string {
  const schema = [JSON.stringify(namespace), ...ROLLOUT_STATE_METRIC.dimensions].join(', ');
  return `SELECT MAX(${ROLLOUT_STATE_METRIC.name}) FROM SCHEMA(${schema}) WHERE ${DIMENSIONS.state} = 'Stalled'`;
}

/** @param path what the description names first (the stack's path), as the Lambda alarms name their function. */
export function metricAlarm(scope: Construct, spec: MetricAlarmSpec, path: string): Alarm {
  return new Alarm(scope, spec.id, {
    alarmDescription: `${path} ${spec.id.replace(/Alarm$/, '')}: ${spec.description}`,
    metric: spec.metric,
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    // No review or no resync in the window is not a failure (the errors alarms cover a reconciler that stops).
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}
