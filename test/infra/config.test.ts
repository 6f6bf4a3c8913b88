/** Context values: defaults, accepted spellings, and the message for each mistake. */
import { describe, expect, it } from '@jest/globals';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ContextError, CONTEXT_DEFAULTS, readStackConfig } from '../../infra/aws/config.ts';

const read = (context: Record<string, unknown>) => readStackConfig((key) => context[key]);

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:sidecarset/kubeconfig-GhIjKl';
const CA_DATA = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIBdummy\n-----END CERTIFICATE-----\n').toString('base64');
const EKS = { eksClusterName: 'prod-1', eksEndpoint: 'https://ABC123.gr7.eu-west-1.eks.amazonaws.com', eksCaData: CA_DATA };

describe('readStackConfig', () => {
  it('uses the documented defaults when nothing is set', async () => {
    await expect(read({})).resolves.toEqual({
      stackName: 'ServerlessSidecarSet',
      admission: { timeoutSeconds: 10, memoryMb: 512, reservedConcurrency: 20 },
      statusSync: { rateMinutes: 1, timeoutSeconds: 300, memoryMb: 512, reservedConcurrency: 3, queueConcurrency: 2, rolloutStallSeconds: 60, repairMaxEvictionsPerResync: 5 },
      logRetentionDays: RetentionDays.ONE_MONTH,
      webhookSecretArn: undefined,
      cluster: { kind: 'kubeconfig-secret', secretArn: undefined },
      alarmTopicArn: undefined,
      kubeSettings: {},
      allowedCallerCidrs: undefined,
      webhookSecretRotationHours: 24,
      revisionNamespace: 'kruise-system',
      metricsNamespace: 'ServerlessSidecarSet',
      ingress: { kind: 'url' },
      warnings: [],
    });
  });

  it('reads the rollout stall threshold in whole seconds', async () => {
    expect((await read({ rolloutStallSeconds: '300' })).statusSync.rolloutStallSeconds).toBe(300);
    await expect(read({ rolloutStallSeconds: '0' })).rejects.toThrow(/"rolloutStallSeconds" must be a whole number of seconds from 1 to 86400/);
    expect((await read({ repairMaxEvictionsPerResync: '0' })).statusSync.repairMaxEvictionsPerResync).toBe(0);
    await expect(read({ repairMaxEvictionsPerResync: 'many' })).rejects.toThrow(/"repairMaxEvictionsPerResync" must be a whole number of pods from 0 to 1000/);
  });

  const DEPRECATION_WARNING = {
    key: 'repairMaxEvictionsPerPass',
    message: 'context "repairMaxEvictionsPerPass" is deprecated: set repairMaxEvictionsPerResync instead (the old key is read until the next minor release)',
  };

  it.each([
    ['the new key alone', { repairMaxEvictionsPerResync: '2' }, 2, []],
    ['the deprecated key alone, with a warning naming the new key', { repairMaxEvictionsPerPass: '2' }, 2, [DEPRECATION_WARNING]],
    ['both keys at the same value, without a warning', { repairMaxEvictionsPerResync: 2, repairMaxEvictionsPerPass: ' 2 ' }, 2, []],
    ['neither key: the default', {}, 5, []],
  ])('reads the repair limit from %s', async (_, context, limit, warnings) => {
    const config = await read(context);
    expect(config.statusSync.repairMaxEvictionsPerResync).toBe(limit);
    expect(config.warnings).toEqual(warnings);
  });

  it('refuses the repair limit under both keys at different values, naming both', async () => {
    const error = await read({ repairMaxEvictionsPerResync: '3', repairMaxEvictionsPerPass: '5' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextError);
    expect((error as ContextError).message).toBe('context "repairMaxEvictionsPerResync" is 3 but repairMaxEvictionsPerPass, its deprecated name, is 5: unset repairMaxEvictionsPerPass');
  });

  it('checks the deprecated repair key as strictly as the new one, naming the key given', async () => {
    await expect(read({ repairMaxEvictionsPerPass: 'many' })).rejects.toThrow(/"repairMaxEvictionsPerPass" must be a whole number of pods from 0 to 1000/);
  });

  it('reads the metrics namespace, checked as the functions check METRICS_NAMESPACE', async () => {
    expect((await read({ metricsNamespace: ' Team/Sidecars ' })).metricsNamespace).toBe('Team/Sidecars');
    const error = await read({ metricsNamespace: ':Sidecars' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextError);
    expect((error as ContextError).message).toBe(
      'context "metricsNamespace" must be 1 to 255 printable ASCII characters not starting with \':\'; got ":Sidecars" (set it with -c metricsNamespace=VALUE)',
    );
    await expect(read({ metricsNamespace: 7 })).rejects.toThrow('context "metricsNamespace" must be a CloudWatch namespace; got 7');
  });

  it('reads the revision namespace, checked as the functions check SIDECARSET_REVISION_NAMESPACE', async () => {
    expect((await read({ revisionNamespace: ' sidecarset-history ' })).revisionNamespace).toBe('sidecarset-history');
    const error = await read({ revisionNamespace: 'Kruise_System' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextError);
    expect((error as ContextError).message).toMatch(/^context "revisionNamespace" must be a namespace name \(a lowercase RFC 1123 label .*\); got "Kruise_System" \(set it with -c revisionNamespace=VALUE\)$/);
    await expect(read({ revisionNamespace: 7 })).rejects.toThrow('context "revisionNamespace" must be a namespace name; got 7');
  });

  it('reads the caller network allowlist as the functions do, normalised, from a string or a cdk.json list', async () => {
    expect((await read({ allowedCallerCidrs: '203.0.113.7, 198.51.100.0/24' })).allowedCallerCidrs).toBe('203.0.113.7/32,198.51.100.0/24');
    expect((await read({ allowedCallerCidrs: ['2001:db8::/32', '::ffff:192.0.2.1'] })).allowedCallerCidrs).toBe('2001:db8::/32,192.0.2.1/32');
  });

  it('reads the rotation period in hours, 0 turning it off', async () => {
    expect((await read({ webhookSecretRotationHours: '0' })).webhookSecretRotationHours).toBe(0);
    expect((await read({ webhookSecretRotationHours: 168 })).webhookSecretRotationHours).toBe(168);
  });

  it('reads numbers given as strings (the CLI) or numbers (cdk.json), and treats empty as unset', async () => {
    const config = await read({ statusSyncRateMinutes: ' 15 ', admissionMemoryMb: 1024, stackName: '', logRetentionDays: '90' });
    expect(config.statusSync.rateMinutes).toBe(15);
    expect(config.admission.memoryMb).toBe(1024);
    expect(config.stackName).toBe(CONTEXT_DEFAULTS.stackName);
    expect(config.logRetentionDays).toBe(RetentionDays.THREE_MONTHS);
  });

  it('leaves a function unreserved when its concurrency is "none"', async () => {
    const config = await read({ admissionReservedConcurrency: 'none', statusSyncReservedConcurrency: 'none' });
    expect(config.admission.reservedConcurrency).toBeUndefined();
    expect(config.statusSync.reservedConcurrency).toBeUndefined();
  });

  it('passes Kubernetes client settings through under the variable names the functions read', async () => {
    const config = await read({ kubeApiTimeoutMs: 2000, sidecarSetCacheMaxStalenessMs: '120000' });
    expect(config.kubeSettings).toEqual({ KUBE_API_TIMEOUT_MS: '2000', SIDECARSET_CACHE_MAX_STALENESS_MS: '120000' });
  });

  it('refuses the retired SidecarSet cache lifetime, saying why and to remove it', async () => {
    const error = await read({ sidecarSetCacheTtlMs: '2000' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextError);
    expect((error as ContextError).key).toBe('sidecarSetCacheTtlMs');
    expect((error as Error).message).toMatch(/^context "sidecarSetCacheTtlMs" is no longer used: every review reads the SidecarSets fresh .*; remove it$/);
  });

  it('accepts complete secret ARNs and an SNS topic ARN', async () => {
    const config = await read({ kubeconfigSecretArn: SECRET_ARN, alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:alarms' });
    expect(config.cluster).toStrictEqual({ kind: 'kubeconfig-secret', secretArn: SECRET_ARN, statusSyncSecretArn: undefined });
    expect((await read({ statusSyncKubeconfigSecretArn: SECRET_ARN })).cluster).toStrictEqual({ kind: 'kubeconfig-secret', secretArn: undefined, statusSyncSecretArn: SECRET_ARN });
    expect(config.alarmTopicArn).toBe('arn:aws:sns:eu-west-1:123456789012:alarms');
  });

  it('reaches an EKS cluster with the cluster name, endpoint and CA data', async () => {
    await expect(read(EKS)).resolves.toMatchObject({
      cluster: { kind: 'eks', clusterName: 'prod-1', endpoint: 'https://ABC123.gr7.eu-west-1.eks.amazonaws.com', caData: CA_DATA },
    });
  });

  it.each([
    [{ eksClusterName: 'prod' }, 'eksEndpoint', /"eksEndpoint" must be set too when eksClusterName is/],
    [{ eksEndpoint: EKS.eksEndpoint, eksCaData: CA_DATA }, 'eksClusterName', /must be set too when eksEndpoint, eksCaData is/],
    [{ ...EKS, kubeconfigSecretArn: SECRET_ARN }, 'kubeconfigSecretArn', /cannot be set together with eksClusterName, eksEndpoint, eksCaData/],
    [{ ...EKS, statusSyncKubeconfigSecretArn: SECRET_ARN }, 'statusSyncKubeconfigSecretArn', /cannot be set together with eksClusterName, eksEndpoint, eksCaData/],
    [{ ...EKS, eksClusterName: 'prod cluster' }, 'eksClusterName', /must be an EKS cluster name; got "prod cluster"/],
    [{ ...EKS, eksEndpoint: 'http://10.0.0.1' }, 'eksEndpoint', /must be the cluster's https:\/\/ endpoint/],
    [{ ...EKS, eksEndpoint: 'ABC123.eks.amazonaws.com' }, 'eksEndpoint', /must be the cluster's https:\/\/ endpoint/],
    [{ ...EKS, eksCaData: Buffer.from('not a certificate').toString('base64') }, 'eksCaData', /must be base64 of the cluster CA's PEM certificate/],
  ])('rejects the EKS settings %j, naming %s', async (context, key, message) => {
    const error = await read(context).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextError);
    expect((error as ContextError).key).toBe(key);
    expect((error as Error).message).toMatch(message);
  });

  it.each([
    ['statusSyncRateMinutes', '0', /"statusSyncRateMinutes" must be a whole number of minutes from 1 to 1440; got "0"/],
    ['statusSyncRateMinutes', '1m', /whole number of minutes .* got "1m"/],
    ['statusSyncRateMinutes', 2.5, /whole number of minutes .* got 2\.5/],
    ['statusSyncTimeoutSeconds', '901', /"statusSyncTimeoutSeconds" must be a whole number of seconds from 1 to 900/],
    ['admissionTimeoutSeconds', '31', /"admissionTimeoutSeconds" must be a whole number of seconds from 1 to 30/],
    ['admissionMemoryMb', '64', /"admissionMemoryMb" must be a whole number of MB from 128 to 10240/],
    ['admissionReservedConcurrency', '0', /"admissionReservedConcurrency" must be a whole number of concurrent executions from 1 to 10000, or "none"; got "0"/],
    ['statusSyncReservedConcurrency', 'off', /"statusSyncReservedConcurrency" .* or "none"; got "off"/],
    ['logRetentionDays', '10', /"logRetentionDays" must be one of 1, 3, 5, 7, 14, 30, .*; got 10/],
    ['stackName', '1stack', /"stackName" must start with a letter/],
    ['stackName', 42, /"stackName" must be a string; got 42/],
    ['webhookSecretArn', 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:webhook', /"webhookSecretArn" must be the complete ARN .* 6-character suffix/],
    ['allowedCallerCidrs', '10.0.0.0/8,nat-gw', /^context "allowedCallerCidrs" "nat-gw" is not an IPv4 or IPv6 address or CIDR block/],
    ['allowedCallerCidrs', '10.0.0.0/40', /"10.0.0.0\/40" has a prefix length that is not 0-32/],
    ['webhookSecretRotationHours', '1.5', /"webhookSecretRotationHours" must be a whole number of hours from 0 to 8784 \(0 turns rotation off\)/],
    ['kubeconfigSecretArn', 'my-kubeconfig', /"kubeconfigSecretArn" must be the complete ARN/],
    ['statusSyncKubeconfigSecretArn', 'my-kubeconfig', /"statusSyncKubeconfigSecretArn" must be the complete ARN/],
    ['alarmTopicArn', 'arn:aws:sqs:eu-west-1:123456789012:q', /"alarmTopicArn" must be the ARN of an SNS topic/],
    ['kubeApiTimeoutMs', '5s', /"kubeApiTimeoutMs" must be a whole number of milliseconds, at least 1; got "5s"/],
    ['sidecarSetCacheMaxStalenessMs', '-1', /"sidecarSetCacheMaxStalenessMs" must be a whole number of milliseconds/],
    ['sidecarSetCacheMaxStalenessMs', true, /"sidecarSetCacheMaxStalenessMs" must be a number; got true/],
  ])('rejects %s=%j with a message naming the key', async (key, value, message) => {
    const error = await read({ [key]: value }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextError);
    expect((error as ContextError).key).toBe(key);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain(`(set it with -c ${key}=VALUE)`);
  });

  it('rejects an admission timeout that a Kubernetes API call could outlast', async () => {
    await expect(read({ admissionTimeoutSeconds: '5' })).rejects.toThrow(
      /"admissionTimeoutSeconds" \(5 s\) must be longer than the Kubernetes API timeout \(kubeApiTimeoutMs, 5000 ms\)/,
    );
    await expect(read({ admissionTimeoutSeconds: '3', kubeApiTimeoutMs: '2000' })).resolves.toMatchObject({ admission: { timeoutSeconds: 3 } });
  });
});
