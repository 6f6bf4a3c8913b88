/**
 * The SidecarSet functions on AWS: three admission webhooks behind public
 * Function URLs (they authenticate callers themselves, wire.md), the status
 * reconciler on an EventBridge schedule, the two secrets they read, and the
 * logs, dashboard and alarms to run them. Environment-agnostic: nothing is looked up in
 * an account, so synth works offline.
 */
import { Annotations, CfnOutput, Duration, SecretValue, Stack, type StackProps } from 'aws-cdk-lib';
import { EndpointType, LambdaIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { CfnSecurityGroup, CfnVPCEndpoint, InterfaceVpcEndpoint } from 'aws-cdk-lib/aws-ec2';
import { CfnAccessEntry } from 'aws-cdk-lib/aws-eks';
import { Alarm, ComparisonOperator, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { EventField, Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { AnyPrincipal, Effect, Policy, PolicyDocument, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFn, FunctionUrlAuthType, Runtime } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { ENV_STATUS_SYNC_QUEUE_URL } from '../../lib/adapters/sqs-set-queue.ts';
import type { Construct } from 'constructs';
import { ENV_STATUS_SYNC_INTERVAL_MS } from '../../lib/status-sync/lease.ts';
import { checkBundles, type BundleDirectories } from './bundles.ts';
import { heapNodeOptions } from './heap.ts';
import { acknowledgeNagFindings } from './nag-acknowledgements.ts';
import { ALARM_PERIOD, metricAlarm, metricAlarmSpecs, sidecarSetDashboard } from './dashboard.ts';
import type { FunctionSettings, StackConfig, WebhookIngress } from './config.ts';
import { FUNCTION_DESCRIPTORS, type FunctionName } from '../../lib/webhooks/descriptors.ts';
import { FUNCTION_SPECS, functionAccess, kubernetesIdentity, STACK_FUNCTIONS, type FunctionSpec, type StackFunctionName, type StackInputs } from './functions.ts';

/**
 * Length of the generated webhook secret. Letters and digits only (see
 * webhookSecret), so 64 characters carry about 381 random bits, well over the
 * 32 bytes wire.md asks for, and the value is valid base64url of at least
 * MIN_SECRET_LENGTH characters as lib/auth/caller-auth.ts checks.
 */
export const WEBHOOK_SECRET_LENGTH = 64;

/**
 * The kubeconfig secret's first value. CloudFormation writes SecretString
 * only when this text changes, so the kubeconfig a user puts in the secret
 * survives later deploys: never change this text. A function reading it
 * fails its cold start with "it is not a kubeconfig", naming the secret.
 */
export const KUBECONFIG_PLACEHOLDER =
  'PLACEHOLDER. Replace this value with the kubeconfig (YAML) the SidecarSet functions use to reach the cluster, ' +
  'e.g. aws secretsmanager put-secret-value --secret-id <this secret> --secret-string file://kubeconfig.yaml';

/** Output keys other tools read (the manifests renderer matches the function name in the key). */
export const OUTPUT_KEYS = {
  functionUrl: (spec: FunctionSpec) => `${spec.id}FunctionUrl`,
  roleArn: (spec: FunctionSpec) => `${spec.id}RoleArn`,
  webhookSecretArn: 'WebhookSecretArn',
  kubeconfigSecretArn: 'KubeconfigSecretArn',
  statusSyncKubeconfigSecretArn: 'StatusSyncKubeconfigSecretArn',
} as const;


export interface SidecarSetStackProps extends StackProps {
  config: StackConfig;
  /** The directory holding each function's bundle (`index.mjs`). */
  bundles: BundleDirectories;
}

export class SidecarSetStack extends Stack {
  readonly functions: Readonly<Record<StackFunctionName, LambdaFn>>;

  constructor(scope: Construct, id: string, props: SidecarSetStackProps) {
    super(scope, id, props);
    const { config, bundles } = props;
    checkBundles(bundles);
    // Reported as the CDK CLI reports any warning: the deploy goes on, the output says what to change.
    for (const warning of config.warnings) Annotations.of(this).addWarningV2(`serverless-sidecarset:context.${warning.key}`, warning.message);

    const webhookSecret = this.webhookSecret(config.webhookSecretArn);
    // On EKS the functions need no stored credential, so no kubeconfig secret exists.
    const cluster: StackInputs['cluster'] =
      config.cluster.kind === 'eks'
        ? config.cluster
        : {
            kind: 'kubeconfig-secret',
            secretArn: this.kubeconfigSecret('KubeconfigSecret', config.cluster.secretArn, 'the SidecarSet webhooks (read-only identity sidecarset-webhooks)').secretArn,
            statusSyncSecretArn: this.kubeconfigSecret('StatusSyncKubeconfigSecret', config.cluster.statusSyncSecretArn, 'status-sync (writer identity sidecarset-status-sync)').secretArn,
          };
    const inputs: StackInputs = {
      webhookSecretArn: webhookSecret.secretArn,
      cluster,
      kubeSettings: config.kubeSettings,
      allowedCallerCidrs: config.allowedCallerCidrs,
      webhookSecretRotationHours: config.webhookSecretRotationHours,
      revisionNamespace: config.revisionNamespace,
      metricsNamespace: config.metricsNamespace,
      rolloutStallSeconds: config.statusSync.rolloutStallSeconds,
      repairMaxEvictionsPerResync: config.statusSync.repairMaxEvictionsPerResync,
    };
    const alarmTopic = config.alarmTopicArn === undefined ? undefined : Topic.fromTopicArn(this, 'AlarmTopic', config.alarmTopicArn);

    const functions = {} as Record<StackFunctionName, LambdaFn>;
    // The URLs (before the secret) this stack deploys: the only ones its reconciler writes the secret into.
    const deployedUrls: string[] = [];
    const privateApi = config.ingress.kind === 'private' ? this.privateWebhookApi(config.ingress, config.stackName) : undefined;
    for (const name of STACK_FUNCTIONS) {
      const spec = FUNCTION_SPECS[name];
      const settings = spec.trigger === 'schedule' ? config.statusSync : config.admission;
      const { fn, role } = this.lambdaFunction(spec, settings, bundles[name], config.logRetentionDays, inputs);
      functions[name] = fn;
      // The heartbeat Lease's duration follows the schedule's rate (lib/status-sync/lease.ts).
      if (spec.trigger === 'schedule') fn.addEnvironment(ENV_STATUS_SYNC_INTERVAL_MS, String(config.statusSync.rateMinutes * 60_000));
      this.alarms(spec, fn, alarmTopic);
      if (spec.trigger === 'function-url' && privateApi !== undefined) {
        // The same secret path behind the private API: /<function>/<secret> reaches the function as /<secret>.
        privateApi.api.root.addResource(name).addResource('{proxy+}').addMethod('POST', new LambdaIntegration(fn, { proxy: true }));
        deployedUrls.push(`${privateApi.baseUrl}/${name}/`);
        new CfnOutput(this, OUTPUT_KEYS.functionUrl(spec), {
          value: `${privateApi.baseUrl}/${name}/`,
          description: `${spec.description}, through the private API's VPC endpoint alias: point the webhook at <this URL><webhook secret>`,
        });
      } else if (spec.trigger === 'function-url') {
        // NONE: the API server cannot sign requests (SigV4), so the functions check the caller secret themselves.
        const url = fn.addFunctionUrl({ authType: FunctionUrlAuthType.NONE });
        deployedUrls.push(url.url);
        new CfnOutput(this, OUTPUT_KEYS.functionUrl(spec), {
          value: url.url,
          description: `${spec.description}: point the webhook at <this URL><webhook secret>`,
        });
      }
      if (spec.readsCluster) {
        const identity = kubernetesIdentity(spec);
        new CfnOutput(this, OUTPUT_KEYS.roleArn(spec), {
          value: role.roleArn,
          description: `IAM role of ${name}: Kubernetes user ${identity.username} in group ${identity.group} (infra/k8s/rbac.yaml)`,
        });
        // On EKS the stack maps the role itself, so each function gets its own identity and no more.
        if (cluster.kind === 'eks') {
          new CfnAccessEntry(this, `${spec.id}AccessEntry`, {
            clusterName: cluster.clusterName,
            principalArn: role.roleArn,
            type: 'STANDARD',
            username: identity.username,
            kubernetesGroups: [identity.group],
          });
        }
      }
    }
    this.functions = functions;
    // After the loop: the schedule's event carries every function's URL (status-sync's own environment cannot: the validating webhook, which names status-sync, is one of them).
    this.schedule(functions['status-sync'], config.statusSync.rateMinutes, deployedUrls);
    // Each function whose descriptor says it starts a reconcile sends set names to status-sync's queue, and may do nothing else to it.
    const queue = this.statusSyncQueue(functions['status-sync'], config.statusSync, alarmTopic);
    for (const descriptor of FUNCTION_DESCRIPTORS) {
      if (descriptor.triggersReconcile) this.rolloutTrigger(functions[descriptor.name], queue);
    }
    this.selfRequeueGrant(functions['status-sync']);
    this.monitoring(config, functions, alarmTopic);

    new CfnOutput(this, OUTPUT_KEYS.webhookSecretArn, {
      value: webhookSecret.secretArn,
      description: 'Caller secret of the webhooks: {"current": ..., "previous": ...}',
    });
    if (cluster.kind === 'kubeconfig-secret') {
      new CfnOutput(this, OUTPUT_KEYS.kubeconfigSecretArn, {
        value: cluster.secretArn,
        description: 'kubeconfig the webhooks use to reach the cluster: a credential in group sidecarset-webhooks (read-only)',
      });
      new CfnOutput(this, OUTPUT_KEYS.statusSyncKubeconfigSecretArn, {
        value: cluster.statusSyncSecretArn,
        description: 'kubeconfig status-sync uses to reach the cluster: user sidecarset-status-sync in group sidecarset-status-sync',
      });
    }
    // Last, so that it sees every resource made above.
    acknowledgeNagFindings(this);
  }

  /**
   * The caller secret, generated unless the user brings one. The JSON shape
   * {"current": ...} is the one rotation needs (it adds "previous" and its
   * state). CloudFormation generates the value when the secret is created
   * and again only if GenerateSecretString itself changes, so later deploys
   * leave the rotated value alone: never change these settings.
   * GetRandomPassword's character classes do not include exactly
   * base64url's '-' and '_', so punctuation is excluded altogether: letters
   * and digits are a subset of base64url.
   */
  private webhookSecret(arn: string | undefined): ISecret {
    if (arn !== undefined) return Secret.fromSecretCompleteArn(this, 'WebhookSecret', arn);
    return new Secret(this, 'WebhookSecret', {
      description: 'Caller secret of the SidecarSet webhooks: {"current": "<base64url>", "previous": "<base64url, during rotation>"}',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({}),
        generateStringKey: 'current',
        passwordLength: WEBHOOK_SECRET_LENGTH,
        excludePunctuation: true,
        includeSpace: false,
      },
    });
  }

  /**
   * `webhookIngress=private`: an interface VPC endpoint for execute-api in
   * the cluster's VPC and a PRIVATE REST API associated with it, whose
   * resource policy admits calls through that endpoint only (aws:SourceVpce).
   * The webhooks are addressed by the endpoint alias
   * `{api-id}-{vpce-id}.execute-api.{region}.amazonaws.com`, a public DNS name
   * that resolves to the endpoint's private addresses, so the EKS control
   * plane (which cannot resolve private hosted zones) reaches it without
   * private DNS. Private DNS on the endpoint stays off: it would turn every
   * execute-api name private for the whole VPC.
   */
  private privateWebhookApi(ingress: Extract<WebhookIngress, { kind: 'private' }>, stackName: string): { api: RestApi; baseUrl: string } {
    const endpoint = new CfnVPCEndpoint(this, 'WebhookApiEndpoint', {
      vpcId: ingress.vpcId,
      serviceName: `com.amazonaws.${this.region}.execute-api`,
      vpcEndpointType: 'Interface',
      subnetIds: ingress.subnetIds,
      securityGroupIds: [this.endpointSecurityGroup(ingress)],
      privateDnsEnabled: false,
    });
    const vpce = InterfaceVpcEndpoint.fromInterfaceVpcEndpointAttributes(this, 'WebhookApiEndpointRef', { vpcEndpointId: endpoint.ref, port: 443 });
    const stage = 'webhooks';
    const api = new RestApi(this, 'WebhookApi', {
      restApiName: `${stackName}-webhooks`,
      description: 'SidecarSet admission webhooks, reachable only through the VPC endpoint in the cluster\'s VPC',
      endpointConfiguration: { types: [EndpointType.PRIVATE], vpcEndpoints: [vpce] },
      deployOptions: { stageName: stage },
      // No CloudWatch role for the account: the functions log each review themselves.
      cloudWatchRole: false,
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({ effect: Effect.ALLOW, principals: [new AnyPrincipal()], actions: ['execute-api:Invoke'], resources: ['execute-api:/*'] }),
          new PolicyStatement({
            effect: Effect.DENY,
            principals: [new AnyPrincipal()],
            actions: ['execute-api:Invoke'],
            resources: ['execute-api:/*'],
            conditions: { StringNotEquals: { 'aws:SourceVpce': endpoint.ref } },
          }),
        ],
      }),
    });
    return { api, baseUrl: `https://${api.restApiId}-${endpoint.ref}.execute-api.${this.region}.${this.urlSuffix}/${stage}` };
  }

  /**
   * The endpoint's security group: the user's own, or one made here whose
   * only rule admits HTTPS from the caller group (the control plane's
   * interfaces), so that no pod or node reaches the endpoint, whatever
   * secret it holds.
   */
  private endpointSecurityGroup(ingress: Extract<WebhookIngress, { kind: 'private' }>): string {
    const access = ingress.endpointAccess;
    if ('securityGroupId' in access) return access.securityGroupId;
    const group = new CfnSecurityGroup(this, 'WebhookApiEndpointSecurityGroup', {
      vpcId: ingress.vpcId,
      groupDescription: 'SidecarSet webhooks endpoint: HTTPS from the EKS control plane only',
      securityGroupIngress: [
        { ipProtocol: 'tcp', fromPort: 443, toPort: 443, sourceSecurityGroupId: access.callerSecurityGroupId, description: 'HTTPS from the EKS control plane interfaces' },
      ],
      // An endpoint only answers. Without an egress rule EC2 adds allow-all; this one matches nothing (the form CDK
      // uses for allowAllOutbound: false).
      securityGroupEgress: [{ ipProtocol: 'icmp', fromPort: 252, toPort: 86, cidrIp: '255.255.255.255/32', description: 'Disallow all traffic' }],
    });
    return group.attrGroupId;
  }

  /** The cluster credentials: the user's secret, or a placeholder for them to fill after the first deploy. */
  private kubeconfigSecret(id: string, arn: string | undefined, whose: string): ISecret {
    if (arn !== undefined) return Secret.fromSecretCompleteArn(this, id, arn);
    return new Secret(this, id, {
      description: `kubeconfig (YAML) ${whose} uses to reach the cluster`,
      // Not a secret: instructions the user overwrites (see KUBECONFIG_PLACEHOLDER).
      secretStringValue: SecretValue.unsafePlainText(KUBECONFIG_PLACEHOLDER),
    });
  }

  /**
   * One function with its own role and log group. The role can write to its
   * log group and read the secrets its environment names, nothing else (no
   * AWSLambdaBasicExecutionRole: that one may write to every log group).
   */
  private lambdaFunction(
    spec: FunctionSpec,
    settings: FunctionSettings,
    bundleDir: string,
    retention: RetentionDays,
    inputs: StackInputs,
  ): { fn: LambdaFn; role: Role } {
    const logGroup = new LogGroup(this, `${spec.id}Logs`, { retention });
    const role = new Role(this, `${spec.id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${spec.description}: its logs and its secrets`,
    });
    logGroup.grantWrite(role);
    const { environment, secretArns, writableSecretArns } = functionAccess(spec, inputs);
    if (secretArns.length > 0) role.addToPrincipalPolicy(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: secretArns }));
    // The rotator stores each new webhook secret (status-sync only, that secret only).
    if (writableSecretArns.length > 0) role.addToPrincipalPolicy(new PolicyStatement({ actions: ['secretsmanager:PutSecretValue'], resources: writableSecretArns }));

    const fn = new LambdaFn(this, spec.id, {
      description: spec.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      handler: 'index.handler',
      // meta.json is esbuild's build report (npm run build -- --metafile), not code.
      code: Code.fromAsset(bundleDir, { exclude: ['meta.json'] }),
      memorySize: settings.memoryMb,
      timeout: Duration.seconds(settings.timeoutSeconds),
      ...(settings.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: settings.reservedConcurrency }),
      role,
      logGroup,
      // The reconciler reads the cluster's pods: its heap is sized to the function (heap.ts).
      environment: spec.trigger === 'schedule' ? { ...environment, NODE_OPTIONS: heapNodeOptions(settings.memoryMb) } : environment,
    });
    return { fn, role };
  }

  /**
   * An admitted SidecarSet change, or a pod change, starts its sets' reconciles
   * at once: the webhook sends their names to status-sync's queue (lib/
   * adapters/queue-rollout-trigger.ts), the messages the schedule sends too.
   * sqs:SendMessage on that queue is all it holds of status-sync (SendMessageBatch
   * is authorised as SendMessage; the queue URL comes from the environment,
   * so no GetQueueUrl or GetQueueAttributes): no invoke, no receive, no
   * delete. What a stolen credential can do with it: docs/OPERATIONS.md,
   * "Identities".
   */
  private rolloutTrigger(trigger: LambdaFn, queue: Queue): void {
    trigger.addEnvironment(ENV_STATUS_SYNC_QUEUE_URL, queue.queueUrl);
    trigger.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }));
  }

  /**
   * The controller's queue (lib/status-sync/queue-message.ts): FIFO, one
   * message group per SidecarSet, so Lambda's event source never hands one
   * set to two invocations at once while `queueConcurrency` sets are
   * reconciled side by side. status-sync reads it in batches of ten,
   * reporting the messages of failed sets (ReportBatchItemFailures); a
   * message handed out five times goes to the dead-letter queue, whose alarm
   * says a set keeps failing. The visibility timeout is six times the
   * function's timeout (AWS's advice for an event source), so a message is
   * never handed out again while an invocation still holds it.
   */
  private statusSyncQueue(fn: LambdaFn, settings: StackConfig['statusSync'], topic: ITopic | undefined): Queue {
    const deadLetters = new Queue(this, 'StatusSyncDeadLetters', {
      fifo: true,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    const queue = new Queue(this, 'StatusSyncQueue', {
      fifo: true,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // A set name older than a day is stale: the schedule has passed every set many times since.
      retentionPeriod: Duration.days(1),
      visibilityTimeout: Duration.seconds(Math.min(6 * settings.timeoutSeconds, 43_200)),
      deadLetterQueue: { queue: deadLetters, maxReceiveCount: 5 },
    });
    fn.addEventSource(new SqsEventSource(queue, { batchSize: 10, maxConcurrency: settings.queueConcurrency, reportBatchItemFailures: true }));
    // The schedule's resync hands the sets that roll to the queue, and a consumer sends back the sets still in flight.
    fn.addEnvironment(ENV_STATUS_SYNC_QUEUE_URL, queue.queueUrl);
    queue.grantSendMessages(fn);
    const alarm = new Alarm(this, 'StatusSyncDeadLettersAlarm', {
      alarmDescription: `${deadLetters.node.path}: a SidecarSet's reconcile failed five times in a row (its name is in the message); the schedule's resync still reconciles it`,
      metric: deadLetters.metricApproximateNumberOfMessagesVisible({ period: ALARM_PERIOD, statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    notify(alarm, topic);
    return queue;
  }

  /**
   * status-sync may invoke itself, and only itself: an invocation whose
   * controller budget ends with a rollout in flight hands it to a self-requeue
   * (lib/adapters/lambda-self-invoke.ts) instead of leaving it to the next
   * tick. The reserved concurrency of 1 still holds: Lambda throttles the
   * self-requeue until the sender has ended, then runs it (throttled
   * asynchronous events are retried within the 60 s maximum age whatever
   * the retry attempts, which count function errors). A policy of its own,
   * not the role's default one: the function depends on that one, so a
   * grant there naming the function's ARN would be a circular dependency.
   * Its construct id keeps its old word: a new id would replace the policy on deploy.
   */
  private selfRequeueGrant(statusSync: LambdaFn): void {
    const role = statusSync.role;
    if (role === undefined) throw new Error('status-sync has no role to grant its self-requeue to');
    new Policy(this, 'StatusSyncContinuation', {
      roles: [role],
      statements: [new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [statusSync.functionArn] })],
    });
  }

  /**
   * Runs the reconciler every `rateMinutes`. A tick or a webhook's trigger
   * that fails is dropped, not retried, and one that cannot start within 60 s
   * (the previous invocation still holds the reserved concurrency; 60 s is the
   * shortest age Lambda's queue allows) is dropped too: a stale trigger is
   * worth nothing, and the next tick does the same work on fresher data.
   */
  private schedule(fn: LambdaFn, rateMinutes: number, deployedWebhookUrls: readonly string[]): void {
    fn.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.seconds(60) });
    // EventBridge's own window for handing a tick to Lambda: one interval (60 s to 6 h).
    const maxEventAge = Duration.seconds(Math.min(Math.max(rateMinutes * 60, 60), 6 * 3600));
    new Rule(this, 'StatusSyncSchedule', {
      description: `Runs the SidecarSet status reconciler every ${rateMinutes} minute(s)`,
      schedule: Schedule.rate(Duration.minutes(rateMinutes)),
      // A scheduled event as EventBridge sends it, with the deployed webhook URLs in its detail (lib/status-sync/admitted-event.ts).
      targets: [
        new LambdaFunction(fn, {
          retryAttempts: 0,
          maxEventAge,
          event: RuleTargetInput.fromObject({ 'detail-type': 'Scheduled Event', source: 'aws.events', time: EventField.time, detail: { deployedWebhookUrls: deployedWebhookUrls } }),
        }),
      ],
    });
  }

  /**
   * The dashboard (named after the stack and region: dashboards are global
   * to an account) and the alarms on the functions' own metrics.
   */
  private monitoring(config: StackConfig, functions: Record<StackFunctionName, LambdaFn>, topic: ITopic | undefined): void {
    sidecarSetDashboard(this, 'Dashboard', {
      namespace: config.metricsNamespace,
      dashboardName: `${config.stackName}-${this.region}`,
      admission: Object.fromEntries(FUNCTION_DESCRIPTORS.map((d) => [d.name, functions[d.name]])) as Record<FunctionName, LambdaFn>,
      statusSync: functions['status-sync'],
    });
    for (const spec of metricAlarmSpecs(config.metricsNamespace)) notify(metricAlarm(this, spec, this.node.path), topic);
  }

  private alarms(spec: FunctionSpec, fn: LambdaFn, topic: ITopic | undefined): void {
    const whenItFails = 'whenItFails' in spec && typeof spec.whenItFails === 'string' ? spec.whenItFails : undefined;
    const alarms: [string, IMetric, string][] = [
      [
        'Errors',
        fn.metricErrors({ period: ALARM_PERIOD, statistic: 'Sum' }),
        whenItFails !== undefined
          ? `calls failed (cold-start configuration error, crash or timeout): ${whenItFails}`
          : 'reconciler runs failed or timed out: SidecarSet statuses may be stale',
      ],
      [
        'Throttles',
        fn.metricThrottles({ period: ALARM_PERIOD, statistic: 'Sum' }),
        whenItFails !== undefined
          ? `calls were refused at the reserved concurrency cap (admissionReservedConcurrency): ${whenItFails}`
          : 'a reconciler run was held back by the previous one (statusSyncReservedConcurrency)',
      ],
    ];
    for (const [metricName, metric, meaning] of alarms) {
      const alarm = new Alarm(this, `${spec.id}${metricName}Alarm`, {
        alarmDescription: `${fn.node.path} ${metricName}: ${meaning}`,
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        // No invocations is not a failure.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      notify(alarm, topic);
    }
  }
}

/** The topic, when there is one, hears when an alarm fires and when it clears. */
function notify(alarm: Alarm, topic: ITopic | undefined): void {
  if (topic === undefined) return;
  alarm.addAlarmAction(new SnsAction(topic));
  alarm.addOkAction(new SnsAction(topic));
}
