/**
 * The AWS stack as CloudFormation sees it, synthesized offline from the
 * project's own bundles with the feature flags of cdk.json.
 */
import { FUNCTION_DESCRIPTORS } from '../../lib/webhooks/descriptors.ts';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Token, type CfnElement } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { randomInt } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createApp } from '../../infra/aws/app.ts';
import { distBundles, MissingBundleError, type BundleDirectories } from '../../infra/aws/bundles.ts';
import { CLUSTER_ENV, FUNCTION_SPECS, STACK_FUNCTIONS, type StackFunctionName } from '../../infra/aws/functions.ts';
import { OUTPUT_KEYS, WEBHOOK_SECRET_LENGTH, type SidecarSetStack } from '../../infra/aws/stack.ts';
import { RETIRED_STATUS_SYNC_FUNCTION } from '../../lib/adapters/queue-rollout-trigger.ts';
import { ENV_STATUS_SYNC_QUEUE_URL } from '../../lib/adapters/sqs-set-queue.ts';
import { ENV_REVISION_NAMESPACE } from '../../lib/adapters/revision-namespace.ts';
import { parseSecretValue } from '../../lib/auth/caller-auth.ts';
import { ENV_ROTATION_PERIOD_MS, ENV_SECRET_ARN } from '../../lib/auth/caller-config.ts';
import { ENV_METRICS_NAMESPACE } from '../../lib/metrics/catalogue.ts';
import { projectBundles, projectRoot } from './bundles.ts';

const scratch = join(projectRoot, '.cache', `infra-stack-test-${process.pid}`);
let bundles: BundleDirectories;
let outdirs = 0;

const ADMISSION = STACK_FUNCTIONS.filter((fn) => FUNCTION_SPECS[fn].trigger === 'function-url');
const CLUSTER_READERS = STACK_FUNCTIONS.filter((fn) => FUNCTION_SPECS[fn].readsCluster);
const WEBHOOK_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:sidecarset/webhook-AbCdEf';
const KUBECONFIG_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:sidecarset/kubeconfig-GhIjKl';
const ENV_KUBECONFIG_SECRET_ARN = CLUSTER_ENV.kubeconfigSecretArn;
const STATUS_SYNC_KUBECONFIG_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:sidecarset/status-sync-kubeconfig-MnOpQr';
const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:sidecarset-alarms';

/** A resource or property bag, typed as the assertions library returns it. */
type Json = ReturnType<Template['findResources']>[string];

interface Synth {
  stack: SidecarSetStack;
  template: Template;
  /** Logical ID of a function's AWS::Lambda::Function. */
  fnId: (fn: StackFunctionName) => string;
  /** Properties of a function's AWS::Lambda::Function. */
  props: (fn: StackFunctionName) => Json;
}

async function synth(context: Record<string, unknown> = {}): Promise<Synth> {
  const { stack } = await createApp({ context, bundles, outdir: join(scratch, `out-${++outdirs}`) });
  const template = Template.fromStack(stack);
  const resources = template.findResources('AWS::Lambda::Function');
  const fnId = (fn: StackFunctionName) => stack.getLogicalId(stack.functions[fn].node.defaultChild as CfnElement);
  return { stack, template, fnId, props: (fn) => resources[fnId(fn)]!.Properties as Json };
}

const ref = (s: Synth, id: string) => ({ Ref: s.stack.getLogicalId(s.stack.node.findChild(id).node.defaultChild as CfnElement) });

/** Every statement of the IAM policies attached to a function's role. */
function roleStatements(s: Synth, fn: StackFunctionName): Json[] {
  const roleId = s.props(fn).Role['Fn::GetAtt'][0] as string;
  const policies = Object.values(s.template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleId }] } }));
  return policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Json[]);
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

let defaults: Synth;
/** The webhooks that start reconciles (their descriptors' triggersReconcile). */
const TRIGGERS: readonly StackFunctionName[] = FUNCTION_DESCRIPTORS.filter((d) => d.triggersReconcile).map((d) => d.name);

beforeAll(async () => {
  bundles = await projectBundles(join(scratch, 'bundles'));
  defaults = await synth();
}, 120_000);

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('functions', () => {
  it('deploys the six functions on nodejs22.x and arm64 with handler index.handler', () => {
    defaults.template.resourceCountIs('AWS::Lambda::Function', 6);
    for (const fn of STACK_FUNCTIONS) {
      expect(defaults.props(fn)).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Handler: 'index.handler' });
    }
  });

  it('gives the admission functions a 10 s timeout and status-sync 5 minutes, each configurable', async () => {
    for (const fn of ADMISSION) expect(defaults.props(fn)).toMatchObject({ Timeout: 10, MemorySize: 512 });
    expect(defaults.props('status-sync')).toMatchObject({ Timeout: 300, MemorySize: 512 });
    const s = await synth({ admissionTimeoutSeconds: '20', admissionMemoryMb: 1024, statusSyncTimeoutSeconds: '600', statusSyncMemoryMb: '256' });
    for (const fn of ADMISSION) expect(s.props(fn)).toMatchObject({ Timeout: 20, MemorySize: 1024 });
    expect(s.props('status-sync')).toMatchObject({ Timeout: 600, MemorySize: 256 });
  });

  it('caps concurrency: 20 per admission function and 3 reconcilers (the queue\'s 2 consumers and the schedule) by default, configurable or off', async () => {
    for (const fn of ADMISSION) expect(defaults.props(fn).ReservedConcurrentExecutions).toBe(20);
    expect(defaults.props('status-sync').ReservedConcurrentExecutions).toBe(3);
    const s = await synth({ admissionReservedConcurrency: '5', statusSyncReservedConcurrency: 'none' });
    for (const fn of ADMISSION) expect(s.props(fn).ReservedConcurrentExecutions).toBe(5);
    expect(s.props('status-sync')).not.toHaveProperty('ReservedConcurrentExecutions');
  });

  it('names the secrets each function reads in its environment, and only those (plus the revision namespace for the cluster readers)', () => {
    for (const fn of STACK_FUNCTIONS) {
      const env = (defaults.props(fn).Environment?.Variables ?? {}) as Record<string, unknown>;
      const spec = FUNCTION_SPECS[fn];
      const webhookSecret = spec.readsWebhookSecret || spec.rotatesWebhookSecret;
      expect(env[ENV_SECRET_ARN]).toEqual(webhookSecret ? ref(defaults, 'WebhookSecret') : undefined);
      const kubeconfigSecret = spec.trigger === 'schedule' ? 'StatusSyncKubeconfigSecret' : 'KubeconfigSecret';
      expect(env[ENV_KUBECONFIG_SECRET_ARN]).toEqual(spec.readsCluster ? ref(defaults, kubeconfigSecret) : undefined);
      expect(env[ENV_ROTATION_PERIOD_MS]).toEqual(spec.rotatesWebhookSecret ? String(24 * 3_600_000) : undefined);
      const triggers = TRIGGERS.includes(fn);
      expect(env[ENV_REVISION_NAMESPACE]).toEqual(spec.readsCluster ? 'kruise-system' : undefined);
      // The reconciler's stall threshold (context rolloutStallSeconds, default 60).
      expect(env.ROLLOUT_STALL_MS).toEqual(spec.trigger === 'schedule' ? '60000' : undefined);
      // The repair step's limit (context repairMaxEvictionsPerResync, default 5).
      expect(env.REPAIR_MAX_EVICTIONS_PER_RESYNC).toEqual(spec.trigger === 'schedule' ? '5' : undefined);
      // The schedule's rate (context statusSyncRateMinutes, default 1), which the heartbeat Lease's duration follows.
      expect(env.STATUS_SYNC_INTERVAL_MS).toEqual(spec.trigger === 'schedule' ? '60000' : undefined);
      expect(Object.keys(env).sort()).toEqual(
        [
          ENV_METRICS_NAMESPACE,
          ...(webhookSecret ? [ENV_SECRET_ARN] : []),
          ...(spec.readsCluster ? [ENV_KUBECONFIG_SECRET_ARN, ENV_REVISION_NAMESPACE] : []),
          ...(spec.rotatesWebhookSecret ? [ENV_ROTATION_PERIOD_MS] : []),
          ...(triggers ? [ENV_STATUS_SYNC_QUEUE_URL] : []),
          ...(spec.trigger === 'schedule' ? ['ROLLOUT_STALL_MS', 'REPAIR_MAX_EVICTIONS_PER_RESYNC', 'NODE_OPTIONS', ENV_STATUS_SYNC_QUEUE_URL, 'STATUS_SYNC_INTERVAL_MS'] : []),
        ].sort(),
      );
    }
  });

  it('sets REPAIR_MAX_EVICTIONS_PER_RESYNC from the deprecated context key repairMaxEvictionsPerPass too, with a synth warning naming the new key', async () => {
    const s = await synth({ repairMaxEvictionsPerPass: '2' });
    expect(s.props('status-sync').Environment.Variables.REPAIR_MAX_EVICTIONS_PER_RESYNC).toBe('2');
    Annotations.fromStack(s.stack).hasWarning('*', Match.stringLikeRegexp('^context "repairMaxEvictionsPerPass" is deprecated: set repairMaxEvictionsPerResync instead'));
  });

  it('caps status-sync\'s V8 heap at three quarters of its memory (NODE_OPTIONS), so garbage is collected before the function\'s memory runs out', async () => {
    expect(defaults.props('status-sync').Environment.Variables.NODE_OPTIONS).toBe('--max-old-space-size=384');
    const s = await synth({ statusSyncMemoryMb: '1024' });
    expect(s.props('status-sync').Environment.Variables.NODE_OPTIONS).toBe('--max-old-space-size=768');
    for (const fn of ADMISSION) expect(s.props(fn).Environment.Variables).not.toHaveProperty('NODE_OPTIONS');
  });

  it('tells the triggering webhooks (sidecarset-validate, pod-inject, pod-change) status-sync\'s queue, and no function to invoke (STATUS_SYNC_FUNCTION is retired)', () => {
    for (const fn of STACK_FUNCTIONS) {
      const env = (defaults.props(fn).Environment?.Variables ?? {}) as Record<string, unknown>;
      expect(env[ENV_STATUS_SYNC_QUEUE_URL]).toEqual(TRIGGERS.includes(fn) || fn === 'status-sync' ? ref(defaults, 'StatusSyncQueue') : undefined);
      expect(env).not.toHaveProperty(RETIRED_STATUS_SYNC_FUNCTION);
    }
  });

  it('passes Kubernetes client settings to the admission functions that read the cluster', async () => {
    const s = await synth({ kubeApiTimeoutMs: '3000', sidecarSetCacheMaxStalenessMs: '0' });
    for (const fn of STACK_FUNCTIONS) {
      const env = (s.props(fn).Environment?.Variables ?? {}) as Record<string, unknown>;
      const expected = FUNCTION_SPECS[fn].takesKubeSettings
        ? { KUBE_API_TIMEOUT_MS: '3000', SIDECARSET_CACHE_MAX_STALENESS_MS: '0' }
        : {};
      // SIDECARSET_CACHE_TTL_MS is retired: no function is given it.
      for (const variable of ['KUBE_API_TIMEOUT_MS', 'SIDECARSET_CACHE_TTL_MS', 'SIDECARSET_CACHE_MAX_STALENESS_MS']) {
        expect(env[variable]).toBe((expected as Record<string, string>)[variable]);
      }
    }
  });

  it('stops synth with the functions whose bundle is missing', async () => {
    const missing = { ...bundles, 'status-sync': join(scratch, 'no-such-bundle') };
    const error = await createApp({ bundles: missing, outdir: join(scratch, 'out-missing') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingBundleError);
    expect((error as MissingBundleError).functions).toEqual(['status-sync']);
    expect((error as Error).message).toMatch(/no bundle for status-sync .*no-such-bundle\/index\.mjs.*npm run build/);
  });

  it('uses the bundles under dist/ unless told otherwise', () => {
    expect(distBundles('/x')).toEqual({
      'sidecarset-default': '/x/sidecarset-default',
      'sidecarset-validate': '/x/sidecarset-validate',
      'pod-inject': '/x/pod-inject',
      'pod-change': '/x/pod-change',
      'sidecarset-convert': '/x/sidecarset-convert',
      'status-sync': '/x/status-sync',
    });
  });
});

describe('Function URLs and schedule', () => {
  it('gives each admission function a Function URL with auth type NONE, and status-sync none', () => {
    const urls = Object.values(defaults.template.findResources('AWS::Lambda::Url'));
    // The four admission functions and sidecarset-convert, the CRD's conversion webhook.
    expect(ADMISSION).toEqual(['sidecarset-default', 'sidecarset-validate', 'pod-inject', 'pod-change', 'sidecarset-convert']);
    expect(urls).toHaveLength(5);
    for (const url of urls) expect(url.Properties.AuthType).toBe('NONE');
    const targets = urls.map((u) => u.Properties.TargetFunctionArn['Fn::GetAtt'][0] as string).sort();
    expect(targets).toEqual(ADMISSION.map(defaults.fnId).sort());
  });

  it('lets anyone invoke the admission functions through their URL only', () => {
    for (const fn of ADMISSION) {
      defaults.template.hasResourceProperties('AWS::Lambda::Permission', {
        FunctionName: { 'Fn::GetAtt': [defaults.fnId(fn), 'Arn'] },
        Action: 'lambda:InvokeFunctionUrl',
        Principal: '*',
        FunctionUrlAuthType: 'NONE',
      });
      defaults.template.hasResourceProperties('AWS::Lambda::Permission', {
        FunctionName: { 'Fn::GetAtt': [defaults.fnId(fn), 'Arn'] },
        Action: 'lambda:InvokeFunction',
        Principal: '*',
        InvokedViaFunctionUrl: true,
      });
    }
    const statusSyncPermissions = defaults.template.findResources('AWS::Lambda::Permission', {
      Properties: { FunctionName: { 'Fn::GetAtt': [defaults.fnId('status-sync'), 'Arn'] } },
    });
    expect(Object.values(statusSyncPermissions).map((p): unknown => p.Properties.Principal)).toEqual(['events.amazonaws.com']);
  });

  it('runs status-sync every minute by default, and drops ticks rather than retrying them', () => {
    defaults.template.resourceCountIs('AWS::Events::Rule', 1);
    defaults.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [defaults.fnId('status-sync'), 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 } })],
    });
    defaults.template.resourceCountIs('AWS::Lambda::EventInvokeConfig', 1);
    defaults.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: defaults.fnId('status-sync') },
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 60,
    });
  });

  it('hands each scheduled pass the Function URLs the stack deployed (the only URLs its rotation writes the secret into)', () => {
    const rule = Object.values(defaults.template.findResources('AWS::Events::Rule'))[0];
    const transformer = JSON.stringify((rule?.Properties as { Targets: { InputTransformer?: unknown }[] }).Targets[0]?.InputTransformer);
    expect(transformer).toContain('deployedWebhookUrls');
    expect(transformer).toContain('Scheduled Event');
    const urls = Object.keys(defaults.template.findResources('AWS::Lambda::Url'));
    expect(urls).toHaveLength(5);
    for (const id of urls) expect(transformer).toContain(JSON.stringify({ 'Fn::GetAtt': [id, 'FunctionUrl'] }));
  });

  it('runs status-sync at the configured rate; a queued tick or trigger still expires after 60 s, not retried', async () => {
    const s = await synth({ statusSyncRateMinutes: '5' });
    s.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: [Match.objectLike({ RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 300 } })],
    });
    s.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { FunctionName: { Ref: s.fnId('status-sync') }, MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 });
  });

  it('gives status-sync its queue: FIFO, encrypted, TLS only, a dead-letter queue with an alarm, read in batches with partial failures at the configured concurrency', async () => {
    defaults.template.resourceCountIs('AWS::SQS::Queue', 2);
    const queue = ref(defaults, 'StatusSyncQueue');
    const deadLetters = ref(defaults, 'StatusSyncDeadLetters');
    defaults.template.hasResourceProperties('AWS::SQS::Queue', {
      FifoQueue: true,
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 1800,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [deadLetters.Ref, 'Arn'] }, maxReceiveCount: 5 },
    });
    // Both queues refuse requests without TLS.
    const policies = Object.values(defaults.template.findResources('AWS::SQS::QueuePolicy')).map((p): Json => p.Properties as Json);
    const queues = policies.map((p): string => JSON.stringify(p.Queues)).sort();
    expect(queues).toEqual([JSON.stringify([deadLetters]), JSON.stringify([queue])].sort());
    for (const p of policies) expect(p.PolicyDocument.Statement).toEqual([expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]);
    defaults.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: defaults.fnId('status-sync') },
      EventSourceArn: { 'Fn::GetAtt': [queue.Ref, 'Arn'] },
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 2 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    defaults.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLetters.Ref, 'QueueName'] } }],
      Threshold: 1,
    });
    const sends = (fn: StackFunctionName) => roleStatements(defaults, fn).filter((st) => asList(st.Action).includes('sqs:SendMessage'));
    for (const fn of [...TRIGGERS, 'status-sync'] as const) expect(sends(fn).flatMap((st) => asList(st.Resource))).toEqual([{ 'Fn::GetAtt': [queue.Ref, 'Arn'] }]);
    // A webhook may send to the queue and do nothing else with it (SendMessageBatch is authorised as SendMessage).
    for (const fn of TRIGGERS) expect(roleStatements(defaults, fn).filter((st) => asList(st.Action).some((a) => String(a).startsWith('sqs:')))).toEqual([{ Effect: 'Allow', Action: 'sqs:SendMessage', Resource: { 'Fn::GetAtt': [queue.Ref, 'Arn'] } }]);
    for (const fn of STACK_FUNCTIONS.filter((name) => !TRIGGERS.includes(name) && name !== 'status-sync')) expect(sends(fn)).toEqual([]);
    const s = await synth({ statusSyncQueueConcurrency: '8', statusSyncReservedConcurrency: '9' });
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 8 } });
    await expect(synth({ statusSyncQueueConcurrency: '8', statusSyncReservedConcurrency: '8' })).rejects.toThrow(/statusSyncReservedConcurrency.*at least statusSyncQueueConcurrency \+ 1 \(9/);
  });

  it('lets status-sync invoke itself (its self-requeue), and nothing else invoke any function: the webhooks send to the queue instead', () => {
    const invokes = (fn: StackFunctionName) => roleStatements(defaults, fn).filter((st) => asList(st.Action).some((a) => String(a).startsWith('lambda:')));
    const statusSyncArn = { 'Fn::GetAtt': [defaults.fnId('status-sync'), 'Arn'] };
    // The unqualified function only, not `<arn>:*` (every version and alias; cdk-nag's IAM5).
    expect(invokes('status-sync')).toEqual([{ Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: statusSyncArn }]);
    for (const fn of STACK_FUNCTIONS.filter((name) => name !== 'status-sync')) expect(invokes(fn)).toEqual([]);
    // The queue's consumers and the schedule's resync, and no more.
    expect(defaults.props('status-sync').ReservedConcurrentExecutions).toBe(3);
  });
});

describe('secrets and IAM', () => {
  it('generates a webhook secret the functions accept: {"current": <64 letters and digits>}', () => {
    // The webhook secret and the two kubeconfig placeholders (the webhooks' and status-sync's).
    defaults.template.resourceCountIs('AWS::SecretsManager::Secret', 3);
    defaults.template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: { SecretStringTemplate: '{}', GenerateStringKey: 'current', PasswordLength: WEBHOOK_SECRET_LENGTH, ExcludePunctuation: true, IncludeSpace: false },
    });
    // What Secrets Manager can generate with those settings: any string of that length over letters and digits.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    const generated = Array.from({ length: WEBHOOK_SECRET_LENGTH }, () => alphabet[randomInt(alphabet.length)]).join('');
    expect(parseSecretValue(JSON.stringify({ current: generated }), 'generated secret')).toEqual({ current: generated });
  });

  it('creates the kubeconfig secret with a placeholder that a cold start reports as not a kubeconfig', () => {
    defaults.template.hasResourceProperties('AWS::SecretsManager::Secret', { SecretString: Match.stringLikeRegexp('^PLACEHOLDER\\. Replace this value with the kubeconfig') });
  });

  it('grants each function secretsmanager:GetSecretValue on its own secrets only, and PutSecretValue on the webhook secret to the rotator only', () => {
    for (const fn of STACK_FUNCTIONS) {
      const spec = FUNCTION_SPECS[fn];
      const statements = roleStatements(defaults, fn).filter((st) => asList(st.Action).some((a) => String(a).startsWith('secretsmanager:')));
      const reads = statements.filter((st) => asList(st.Action).includes('secretsmanager:GetSecretValue'));
      const writes = statements.filter((st) => asList(st.Action).includes('secretsmanager:PutSecretValue'));
      expect(statements.flatMap((st) => asList(st.Action)).sort()).toEqual([...reads.map(() => 'secretsmanager:GetSecretValue'), ...writes.map(() => 'secretsmanager:PutSecretValue')].sort());
      const webhookSecret = spec.readsWebhookSecret || spec.rotatesWebhookSecret;
      const kubeconfigSecret = spec.trigger === 'schedule' ? 'StatusSyncKubeconfigSecret' : 'KubeconfigSecret';
      const expected = [...(webhookSecret ? [ref(defaults, 'WebhookSecret')] : []), ...(spec.readsCluster ? [ref(defaults, kubeconfigSecret)] : [])];
      const granted = reads.flatMap((st) => asList(st.Resource));
      expect(granted).toHaveLength(expected.length);
      expect(granted).toEqual(expect.arrayContaining(expected));
      expect(writes.flatMap((st) => asList(st.Resource))).toEqual(spec.rotatesWebhookSecret ? [ref(defaults, 'WebhookSecret')] : []);
    }
  });

  it('gives the rotator no access to the webhook secret when rotation is off, and the allowlist to the Function URL functions', async () => {
    const s = await synth({ webhookSecretRotationHours: '0', allowedCallerCidrs: '198.51.100.0/24' });
    const env = (fn: StackFunctionName) => (s.props(fn).Environment?.Variables ?? {}) as Record<string, unknown>;
    expect(env('status-sync')[ENV_SECRET_ARN]).toBeUndefined();
    const actions = roleStatements(s, 'status-sync').flatMap((st) => asList(st.Action));
    expect(actions).not.toContain('secretsmanager:PutSecretValue');
    for (const fn of ADMISSION) expect(env(fn).ALLOWED_CALLER_CIDRS).toBe('198.51.100.0/24');
    expect(env('status-sync').ALLOWED_CALLER_CIDRS).toBeUndefined();
  });

  it('gives each role its log group and its secrets, nothing else: no wildcard resource, no managed policy', () => {
    for (const fn of STACK_FUNCTIONS) {
      const statements = roleStatements(defaults, fn);
      const logGroupArn = { 'Fn::GetAtt': [defaults.props(fn).LoggingConfig.LogGroup.Ref, 'Arn'] };
      for (const st of statements) {
        expect(st.Effect).toBe('Allow');
        for (const resource of asList(st.Resource)) expect(JSON.stringify(resource)).not.toMatch(/"\*"|^"\*/);
        for (const action of asList(st.Action)) expect(String(action)).not.toContain('*');
      }
      const logs = statements.filter((st) => asList(st.Action).some((a) => String(a).startsWith('logs:')));
      expect(logs).toEqual([{ Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: logGroupArn }]);
      // Besides, checked above: sending to status-sync's queue for the triggering webhooks; for status-sync itself, sending
      // to and reading its queue (its event source) and invoking itself (its self-requeue).
      const allowed = fn === 'status-sync' ? /^(logs|secretsmanager|lambda|sqs):/ : TRIGGERS.includes(fn) ? /^(logs|secretsmanager|sqs):/ : /^(logs|secretsmanager):/;
      expect(statements.every((st) => asList(st.Action).every((a) => allowed.test(String(a))))).toBe(true);
    }
    for (const role of Object.values(defaults.template.findResources('AWS::IAM::Role'))) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
      ]);
    }
  });

  it('imports secrets by ARN instead of creating them, and grants exactly those ARNs', async () => {
    const s = await synth({ webhookSecretArn: WEBHOOK_SECRET_ARN, kubeconfigSecretArn: KUBECONFIG_SECRET_ARN, statusSyncKubeconfigSecretArn: STATUS_SYNC_KUBECONFIG_SECRET_ARN });
    s.template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    expect(s.props('status-sync').Environment.Variables[ENV_KUBECONFIG_SECRET_ARN]).toBe(STATUS_SYNC_KUBECONFIG_SECRET_ARN);
    expect(s.props('pod-inject').Environment.Variables).toEqual({
      [ENV_METRICS_NAMESPACE]: 'ServerlessSidecarSet',
      [ENV_SECRET_ARN]: WEBHOOK_SECRET_ARN,
      [ENV_KUBECONFIG_SECRET_ARN]: KUBECONFIG_SECRET_ARN,
      [ENV_REVISION_NAMESPACE]: 'kruise-system',
      [ENV_STATUS_SYNC_QUEUE_URL]: ref(s, 'StatusSyncQueue'),
    });
    const granted = roleStatements(s, 'pod-inject')
      .filter((st) => asList(st.Action).includes('secretsmanager:GetSecretValue'))
      .flatMap((st) => asList(st.Resource));
    expect(granted.sort()).toEqual([KUBECONFIG_SECRET_ARN, WEBHOOK_SECRET_ARN]);
    s.template.hasOutput(OUTPUT_KEYS.webhookSecretArn, { Value: WEBHOOK_SECRET_ARN });
  });
  it('on EKS stores no cluster credential: the cluster readers get the EKS settings and their role is what the cluster maps', async () => {
    const caData = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIBdummy\n-----END CERTIFICATE-----\n').toString('base64');
    const endpoint = 'https://ABC123.gr7.eu-west-1.eks.amazonaws.com';
    const s = await synth({ eksClusterName: 'prod', eksEndpoint: endpoint, eksCaData: caData });
    s.template.resourceCountIs('AWS::SecretsManager::Secret', 1);
    for (const fn of CLUSTER_READERS) {
      const env = s.props(fn).Environment.Variables as Record<string, unknown>;
      expect(env).toMatchObject({ EKS_CLUSTER_NAME: 'prod', EKS_ENDPOINT: endpoint, EKS_CA_DATA: caData });
      expect(env).not.toHaveProperty(ENV_KUBECONFIG_SECRET_ARN);
      s.template.hasOutput(OUTPUT_KEYS.roleArn(FUNCTION_SPECS[fn]), { Value: s.props(fn).Role });
    }
    const secretGrants = (fn: StackFunctionName) =>
      roleStatements(s, fn)
        .filter((st) => asList(st.Action).includes('secretsmanager:GetSecretValue'))
        .flatMap((st) => asList(st.Resource));
    expect(secretGrants('pod-inject')).toEqual([ref(s, 'WebhookSecret')]);
    // No cluster credential: only the webhook secret it rotates.
    expect(secretGrants('status-sync')).toEqual([ref(s, 'WebhookSecret')]);
    expect(s.template.toJSON().Outputs).not.toHaveProperty(OUTPUT_KEYS.kubeconfigSecretArn);
  });

  it('on EKS maps each cluster reader\'s role to its own identity with an access entry: the webhooks read-only, status-sync the writer', async () => {
    const caData = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIBdummy\n-----END CERTIFICATE-----\n').toString('base64');
    const s = await synth({ eksClusterName: 'prod', eksEndpoint: 'https://ABC123.gr7.eu-west-1.eks.amazonaws.com', eksCaData: caData });
    const entries = Object.values(s.template.findResources('AWS::EKS::AccessEntry')).map((r) => r.Properties as Record<string, unknown>);
    const byRole = (fn: StackFunctionName) => entries.filter((e) => JSON.stringify(e.PrincipalArn) === JSON.stringify(s.props(fn).Role));
    expect(entries).toHaveLength(CLUSTER_READERS.length);
    for (const fn of CLUSTER_READERS) {
      const identity = fn === 'status-sync' ? 'sidecarset-status-sync' : 'sidecarset-webhooks';
      expect(byRole(fn)).toEqual([{ ClusterName: 'prod', PrincipalArn: s.props(fn).Role, Type: 'STANDARD', Username: identity, KubernetesGroups: [identity] }]);
    }
    defaults.template.resourceCountIs('AWS::EKS::AccessEntry', 0);
  });
});

describe('operations', () => {
  it('writes each function to its own log group kept 30 days by default', async () => {
    const groups = defaults.template.findResources('AWS::Logs::LogGroup');
    expect(Object.values(groups).map((g): unknown => g.Properties.RetentionInDays)).toEqual([30, 30, 30, 30, 30, 30]);
    expect(STACK_FUNCTIONS.map((fn) => defaults.props(fn).LoggingConfig.LogGroup.Ref as string).sort()).toEqual(Object.keys(groups).sort());
    const s = await synth({ logRetentionDays: '7' });
    expect(Object.values(s.template.findResources('AWS::Logs::LogGroup')).map((g): unknown => g.Properties.RetentionInDays)).toEqual([7, 7, 7, 7, 7, 7]);
  });

  it('alarms on Errors and Throttles of every function', () => {
    // And the five alarms on the functions' own metrics (below).
    // And the dead-letter queue's.
    defaults.template.resourceCountIs('AWS::CloudWatch::Alarm', 12 + 5 + 1);
    for (const fn of STACK_FUNCTIONS) {
      for (const metric of ['Errors', 'Throttles']) {
        defaults.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
          Namespace: 'AWS/Lambda',
          MetricName: metric,
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: defaults.fnId(fn) } }],
          Statistic: 'Sum',
          Period: 300,
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          TreatMissingData: 'notBreaching',
          AlarmActions: Match.absent(),
        });
      }
    }
  });

  it("says what a failed call costs: a webhook's failurePolicy, and for the conversion function the reads and writes of the other version", () => {
    const descriptions = (fn: StackFunctionName): string[] =>
      Object.values(defaults.template.findResources('AWS::CloudWatch::Alarm', { Properties: { Dimensions: [{ Name: 'FunctionName', Value: { Ref: defaults.fnId(fn) } }] } })).map(
        (a): string => a.Properties.AlarmDescription as string,
      );
    expect(descriptions('pod-inject')).toHaveLength(2);
    for (const text of descriptions('pod-inject')) expect(text).toMatch(/failurePolicy$/);
    expect(descriptions('sidecarset-convert')).toHaveLength(2);
    for (const text of descriptions('sidecarset-convert')) {
      expect(text).not.toMatch(/failurePolicy/);
      expect(text).toMatch(/could not convert SidecarSets, so reads and writes in the version it does not store failed$/);
    }
  });

  it('notifies the configured SNS topic when an alarm fires and clears', async () => {
    const s = await synth({ alarmTopicArn: TOPIC_ARN });
    const alarms = Object.values(s.template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms).toHaveLength(12 + 5 + 1);
    for (const alarm of alarms) expect(alarm.Properties).toMatchObject({ AlarmActions: [TOPIC_ARN], OKActions: [TOPIC_ARN] });
  });

  it.each([
    { id: 'PodInjectCannotDecideAlarm', metric: 'Reviews', dimensions: [{ Name: 'Function', Value: 'pod-inject' }, { Name: 'Outcome', Value: 'CannotDecide' }], statistic: 'Sum' },
    { id: 'PodsNotInjectedAlarm', metric: 'PodsNotInjected', dimensions: [{ Name: 'Function', Value: 'status-sync' }], statistic: 'Maximum' },
    { id: 'WebhooksRepointedAlarm', metric: 'WebhooksRepointed', dimensions: [{ Name: 'Function', Value: 'status-sync' }], statistic: 'Sum' },
    { id: 'WebhooksNotDeployedAlarm', metric: 'WebhooksNotDeployed', dimensions: [{ Name: 'Function', Value: 'status-sync' }], statistic: 'Sum' },
  ])('alarms on $metric ($id) from the functions\' own metrics, in their namespace', async ({ id, metric, dimensions, statistic }) => {
    const expected = { MetricName: metric, Dimensions: dimensions, Statistic: statistic, Period: 300, Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'notBreaching' };
    const alarm = defaults.template.findResources('AWS::CloudWatch::Alarm')[defaults.stack.getLogicalId(defaults.stack.node.findChild(id).node.defaultChild as CfnElement)];
    expect(alarm?.Properties).toMatchObject({ ...expected, Namespace: 'ServerlessSidecarSet', AlarmDescription: expect.stringMatching(new RegExp(`^ServerlessSidecarSet ${id.replace(/Alarm$/, '')}: `)) });
    const s = await synth({ metricsNamespace: 'Team/Sidecars', alarmTopicArn: TOPIC_ARN });
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', { ...expected, Namespace: 'Team/Sidecars', AlarmActions: [TOPIC_ARN], OKActions: [TOPIC_ARN] });
  });

  it("alarms when any SidecarSet's rollout is stalled, from the RolloutState metric the dashboard graphs, in the stack's namespace", async () => {
    const alarmOf = (s: Synth) => s.template.findResources('AWS::CloudWatch::Alarm')[s.stack.getLogicalId(s.stack.node.findChild('RolloutStalledAlarm').node.defaultChild as CfnElement)];
    const query = (namespace: string) => `SELECT MAX(RolloutState) FROM SCHEMA("${namespace}", SidecarSet, State) WHERE State = 'Stalled'`;
    expect(alarmOf(defaults)?.Properties).toMatchObject({
      Metrics: [{ Expression: query('ServerlessSidecarSet'), Period: 300, ReturnData: true }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmDescription: expect.stringMatching(/^ServerlessSidecarSet RolloutStalled: a SidecarSet's rollout is stalled/),
    });
    const s = await synth({ metricsNamespace: 'Team/Sidecars', alarmTopicArn: TOPIC_ARN });
    expect(alarmOf(s)?.Properties).toMatchObject({ Metrics: [{ Expression: query('Team/Sidecars') }], AlarmActions: [TOPIC_ARN], OKActions: [TOPIC_ARN] });
  });

  describe('the dashboard', () => {
    /** The dashboard's body with every CloudFormation reference written as <Ref:logical id>, parsed. */
    function dashboardBody(s: Synth): { widgets: { properties: { title?: string; markdown?: string; metrics?: unknown[] } }[] } {
      const dashboards = Object.values(s.template.findResources('AWS::CloudWatch::Dashboard'));
      expect(dashboards).toHaveLength(1);
      const parts = (dashboards[0]?.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
      return JSON.parse(parts.map((part) => (typeof part === 'string' ? part : `<Ref:${String((part as { Ref?: string }).Ref)}>`)).join('')) as ReturnType<typeof dashboardBody>;
    }
    const widget = (s: Synth, title: string) => {
      const found = dashboardBody(s).widgets.find((w) => w.properties.title === title);
      if (found === undefined) throw new Error(`no widget titled ${title}`);
      return JSON.stringify(found.properties.metrics);
    };

    it('is named after the stack and its region', () => {
      const dashboard = Object.values(defaults.template.findResources('AWS::CloudWatch::Dashboard'))[0];
      expect(dashboard?.Properties.DashboardName).toEqual({ 'Fn::Join': ['', ['ServerlessSidecarSet-', { Ref: 'AWS::Region' }]] });
    });

    it('shows answers per function and outcome, latency p50 and p99 per function, failures and throttles, the reconciler and each set', () => {
      expect(dashboardBody(defaults).widgets.map((w) => w.properties.title ?? 'text')).toEqual([
        'text',
        'Answers per function and outcome (per minute)',
        'Answer latency, p50 and p99 (ms)',
        'Failures: cannot decide (failurePolicy applied), Lambda errors and throttles',
        'SidecarSet list latency p99 and stale list age (ms)',
        'Rollout progress per SidecarSet: matched, updated, updated and ready pods',
        'Rollout state per SidecarSet (1 = in that state)',
        'Pods not injected (all sets, and per SidecarSet)',
        'Reconciler resyncs: duration (ms), API requests, statuses written, errors',
      ]);
      expect(widget(defaults, 'Answers per function and outcome (per minute)')).toContain(JSON.stringify(`SEARCH('{"ServerlessSidecarSet",Function,Outcome} MetricName="Reviews"', 'Sum', 60)`));
      const latency = widget(defaults, 'Answer latency, p50 and p99 (ms)');
      for (const fn of ADMISSION) {
        for (const stat of ['p50', 'p99']) expect(latency).toContain(JSON.stringify(['ServerlessSidecarSet', 'AnswerLatency', 'Function', fn, { label: `${fn} ${stat}`, period: 60, stat }]));
      }
      const failures = widget(defaults, 'Failures: cannot decide (failurePolicy applied), Lambda errors and throttles');
      for (const fn of ADMISSION) expect(failures).toContain(JSON.stringify(['ServerlessSidecarSet', 'Reviews', 'Function', fn, 'Outcome', 'CannotDecide', { label: `${fn} cannot decide`, period: 60, stat: 'Sum' }]));
      for (const fn of STACK_FUNCTIONS) {
        for (const metric of ['Errors', 'Throttles']) expect(failures).toContain(JSON.stringify(['AWS/Lambda', metric, 'FunctionName', `<Ref:${defaults.fnId(fn)}>`, { label: `${fn} ${metric.toLowerCase()}`, period: 60, stat: 'Sum' }]));
      }
    });

    it('follows every SidecarSet with SEARCH expressions over the SidecarSet dimension (sets cannot be listed at synth)', () => {
      const progress = widget(defaults, 'Rollout progress per SidecarSet: matched, updated, updated and ready pods');
      for (const metric of ['MatchedPods', 'UpdatedPods', 'UpdatedReadyPods']) {
        expect(progress).toContain(JSON.stringify(`SEARCH('{"ServerlessSidecarSet",SidecarSet} MetricName="${metric}"', 'Maximum', 60)`));
      }
      expect(widget(defaults, 'Rollout state per SidecarSet (1 = in that state)')).toContain(JSON.stringify(`SEARCH('{"ServerlessSidecarSet",SidecarSet,State} MetricName="RolloutState"', 'Maximum', 60)`));
      const notInjected = widget(defaults, 'Pods not injected (all sets, and per SidecarSet)');
      expect(notInjected).toContain(JSON.stringify(['ServerlessSidecarSet', 'PodsNotInjected', 'Function', 'status-sync', { label: 'all sets', period: 60, stat: 'Maximum' }]));
      expect(notInjected).toContain(JSON.stringify(`SEARCH('{"ServerlessSidecarSet",SidecarSet} MetricName="NotInjectedPods"', 'Maximum', 60)`));
    });

    it('reads the metrics namespace the functions are given (metricsNamespace)', async () => {
      const s = await synth({ metricsNamespace: 'Team/Sidecars' });
      for (const fn of STACK_FUNCTIONS) expect(s.props(fn).Environment.Variables.METRICS_NAMESPACE).toBe('Team/Sidecars');
      expect(widget(s, 'Answers per function and outcome (per minute)')).toContain(JSON.stringify(`SEARCH('{"Team/Sidecars",Function,Outcome} MetricName="Reviews"', 'Sum', 60)`));
      expect(JSON.stringify(dashboardBody(s))).not.toContain('ServerlessSidecarSet"');
    });
  });

  it('outputs the Function URLs, the secret ARNs and the roles to map in the cluster', () => {
    for (const fn of ADMISSION) {
      const key = OUTPUT_KEYS.functionUrl(FUNCTION_SPECS[fn]);
      // The manifests renderer finds a URL by the function name in the output key.
      expect(key.toLowerCase()).toContain(fn.replace(/-/g, ''));
      defaults.template.hasOutput(key, { Value: { 'Fn::GetAtt': [Match.anyValue(), 'FunctionUrl'] } });
    }
    for (const fn of CLUSTER_READERS) {
      defaults.template.hasOutput(OUTPUT_KEYS.roleArn(FUNCTION_SPECS[fn]), { Value: defaults.props(fn).Role });
    }
    defaults.template.hasOutput(OUTPUT_KEYS.webhookSecretArn, { Value: ref(defaults, 'WebhookSecret') });
    defaults.template.hasOutput(OUTPUT_KEYS.kubeconfigSecretArn, { Value: ref(defaults, 'KubeconfigSecret') });
    defaults.template.hasOutput(OUTPUT_KEYS.statusSyncKubeconfigSecretArn, { Value: ref(defaults, 'StatusSyncKubeconfigSecret') });
    expect(Object.keys(defaults.template.toJSON().Outputs as object)).toHaveLength(ADMISSION.length + CLUSTER_READERS.length + 3);
  });

  it('is environment-agnostic and synthesizes without warnings', () => {
    // Deployed wherever the credentials point: synth looked nothing up.
    expect(Token.isUnresolved(defaults.stack.account) && Token.isUnresolved(defaults.stack.region)).toBe(true);
    expect(defaults.stack.stackName).toBe('ServerlessSidecarSet');
    Annotations.fromStack(defaults.stack).hasNoError('*', Match.anyValue());
    Annotations.fromStack(defaults.stack).hasNoWarning('*', Match.anyValue());
  });
});

describe('sidecarset-convert', () => {
  it('has its own role that reaches no cluster: no cluster settings, no kubeconfig secret, no access entry, no role output', () => {
    const env = (defaults.props('sidecarset-convert').Environment?.Variables ?? {}) as Record<string, unknown>;
    expect(Object.keys(env).filter((k) => k.startsWith('KUBE') || k.startsWith('EKS') || k === ENV_REVISION_NAMESPACE)).toEqual([]);
    expect(env[ENV_SECRET_ARN]).toBeDefined();
    const role = defaults.props('sidecarset-convert').Role['Fn::GetAtt'][0] as string;
    for (const other of STACK_FUNCTIONS.filter((fn) => fn !== 'sidecarset-convert')) expect(defaults.props(other).Role['Fn::GetAtt'][0]).not.toBe(role);
    expect(JSON.stringify(roleStatements(defaults, 'sidecarset-convert'))).not.toContain('kubeconfig');
    expect(FUNCTION_SPECS['sidecarset-convert']).toMatchObject({ trigger: 'function-url', readsCluster: false, readsWebhookSecret: true });
    const outputs = defaults.template.toJSON().Outputs as Record<string, unknown>;
    expect(outputs.SidecarsetConvertFunctionUrl).toBeDefined();
    expect(Object.keys(outputs).filter((k) => k.startsWith('SidecarsetConvert'))).toEqual(['SidecarsetConvertFunctionUrl']);
  });
});

describe('webhookIngress=private', () => {
  const PRIVATE = { webhookIngress: 'private', webhookVpcId: 'vpc-0123456789abcdef0', webhookSubnetIds: 'subnet-0123456789abcdef0,subnet-0fedcba9876543210', webhookSecurityGroupId: 'sg-0123456789abcdef0' };
  let priv: Synth;
  beforeAll(async () => {
    priv = await synth(PRIVATE);
  }, 120_000);

  it('makes no Function URL at all, and no invoke-by-URL permission', () => {
    priv.template.resourceCountIs('AWS::Lambda::Url', 0);
    expect(JSON.stringify(priv.template.toJSON())).not.toContain('lambda:InvokeFunctionUrl');
    // The default stays the Function URLs.
    defaults.template.resourceCountIs('AWS::Lambda::Url', 5);
    defaults.template.resourceCountIs('AWS::ApiGateway::RestApi', 0);
    defaults.template.resourceCountIs('AWS::EC2::VPCEndpoint', 0);
  });

  it('puts the webhooks behind a PRIVATE REST API associated with an execute-api interface endpoint in the cluster\'s VPC', () => {
    priv.template.resourceCountIs('AWS::EC2::VPCEndpoint', 1);
    const endpointId = Object.keys(priv.template.findResources('AWS::EC2::VPCEndpoint'))[0] ?? '';
    priv.template.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      VpcId: PRIVATE.webhookVpcId,
      ServiceName: { 'Fn::Join': ['', ['com.amazonaws.', { Ref: 'AWS::Region' }, '.execute-api']] },
      VpcEndpointType: 'Interface',
      SubnetIds: PRIVATE.webhookSubnetIds.split(','),
      SecurityGroupIds: [PRIVATE.webhookSecurityGroupId],
      PrivateDnsEnabled: false,
    });
    priv.template.resourceCountIs('AWS::ApiGateway::RestApi', 1);
    priv.template.hasResourceProperties('AWS::ApiGateway::RestApi', {
      EndpointConfiguration: { Types: ['PRIVATE'], VpcEndpointIds: [{ Ref: endpointId }] },
      Policy: {
        Statement: [
          { Effect: 'Allow', Principal: { AWS: '*' }, Action: 'execute-api:Invoke', Resource: 'execute-api:/*' },
          { Effect: 'Deny', Principal: { AWS: '*' }, Action: 'execute-api:Invoke', Resource: 'execute-api:/*', Condition: { StringNotEquals: { 'aws:SourceVpce': { Ref: endpointId } } } },
        ],
      },
    });
  });

  it('routes POST /<function>/{proxy+} of each admission function to it as a proxy integration, and outputs the vpce alias URL per function', () => {
    const methods = Object.values(priv.template.findResources('AWS::ApiGateway::Method'));
    expect(methods).toHaveLength(ADMISSION.length);
    for (const method of methods) expect(method.Properties).toMatchObject({ HttpMethod: 'POST', AuthorizationType: 'NONE', Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' } });
    const paths = Object.values(priv.template.findResources('AWS::ApiGateway::Resource')).map((r) => r.Properties.PathPart as string);
    expect(paths.sort()).toEqual([...ADMISSION, ...ADMISSION.map(() => '{proxy+}')].sort());
    const outputs = priv.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    for (const fn of ADMISSION) {
      const value = JSON.stringify(outputs[`${FUNCTION_SPECS[fn].id}FunctionUrl`]?.Value);
      // https://{api-id}-{vpce-id}.execute-api.{region}.{suffix}/webhooks/<function>/
      for (const part of ['"https://",{"Ref":"WebhookApi', '"-",{"Ref":"WebhookApiEndpoint', '".execute-api.",{"Ref":"AWS::Region"},".",{"Ref":"AWS::URLSuffix"}']) expect(value).toContain(part);
      expect(value).toContain(`/webhooks/${fn}/`);
    }
  });

  it('with webhookCallerSecurityGroupId, makes the endpoint\'s security group: HTTPS from that group only, no other source, no egress', async () => {
    const CALLER = 'sg-0aaaaaaaaaaaaaaaa';
    const dedicated = await synth({ ...PRIVATE, webhookSecurityGroupId: undefined, webhookCallerSecurityGroupId: CALLER });
    const groups = dedicated.template.findResources('AWS::EC2::SecurityGroup');
    expect(Object.keys(groups)).toHaveLength(1);
    const [groupId, group] = Object.entries(groups)[0] ?? [];
    expect(group?.Properties).toMatchObject({ VpcId: PRIVATE.webhookVpcId });
    expect(group?.Properties.SecurityGroupIngress).toEqual([{ IpProtocol: 'tcp', FromPort: 443, ToPort: 443, SourceSecurityGroupId: CALLER, Description: 'HTTPS from the EKS control plane interfaces' }]);
    expect(group?.Properties.SecurityGroupEgress).toEqual([{ IpProtocol: 'icmp', FromPort: 252, ToPort: 86, CidrIp: '255.255.255.255/32', Description: 'Disallow all traffic' }]);
    // No rule elsewhere widens it (a separate AWS::EC2::SecurityGroupIngress would).
    dedicated.template.resourceCountIs('AWS::EC2::SecurityGroupIngress', 0);
    dedicated.template.hasResourceProperties('AWS::EC2::VPCEndpoint', { SecurityGroupIds: [{ 'Fn::GetAtt': [groupId, 'GroupId'] }] });
    // A group of the user's own is used as given, and none is made.
    priv.template.resourceCountIs('AWS::EC2::SecurityGroup', 0);
  }, 120_000);

  it.each([
    [{ webhookIngress: 'public' }, /context "webhookIngress" must be "url" .* or "private"/],
    [{ webhookIngress: 'private' }, /context "webhookVpcId", "webhookSubnetIds", "webhookCallerSecurityGroupId" must be set with webhookIngress=private/],
    [{ webhookIngress: 'private', webhookVpcId: 'vpc-0123456789abcdef0' }, /context "webhookSubnetIds", "webhookCallerSecurityGroupId" must be set with webhookIngress=private/],
    [{ ...PRIVATE, webhookSubnetIds: undefined }, /context "webhookSubnetIds" must be set with webhookIngress=private \(the cluster's VPC id and the subnets/],
    [{ ...PRIVATE, webhookSubnetIds: 'subnet-0123456789abcdef0,nope' }, /context "webhookSubnetIds" must be a comma-separated list of subnet ids .*got "nope"/],
    [{ ...PRIVATE, webhookVpcId: 'vpc-xyz' }, /context "webhookVpcId" must be a VPC id/],
    [{ webhookVpcId: 'vpc-0123456789abcdef0' }, /context "webhookVpcId" is only used with webhookIngress=private/],
    [{ webhookCallerSecurityGroupId: 'sg-0aaaaaaaaaaaaaaaa' }, /context "webhookCallerSecurityGroupId" is only used with webhookIngress=private/],
    [{ ...PRIVATE, webhookSecurityGroupId: undefined }, /context "webhookCallerSecurityGroupId" must be set with webhookIngress=private: a security group only the EKS control plane's interfaces carry/],
    [{ ...PRIVATE, webhookCallerSecurityGroupId: 'sg-0aaaaaaaaaaaaaaaa' }, /context "webhookCallerSecurityGroupId" and webhookSecurityGroupId cannot both be set/],
    [{ ...PRIVATE, webhookSecurityGroupId: undefined, webhookCallerSecurityGroupId: 'sg-nope' }, /context "webhookCallerSecurityGroupId" must be a security group id/],
  ])('refuses %j, naming the key', async (context, message) => {
    await expect(synth(context)).rejects.toThrow(message);
  });
});
