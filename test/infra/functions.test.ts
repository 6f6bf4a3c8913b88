/** The stack's table of functions agrees with the functions themselves. */
import { describe, expect, it } from '@jest/globals';
import { CLUSTER_ENV, FUNCTION_SPECS, functionAccess, STACK_FUNCTIONS, type StackInputs } from '../../infra/aws/functions.ts';
import { ENV_EKS_CA_DATA, ENV_EKS_CLUSTER_NAME, ENV_EKS_ENDPOINT, ENV_KUBECONFIG_SECRET_ARN } from '../../functions/shared/cluster.ts';
import { needsCluster } from '../../functions/shared/compose.ts';
import { ADMISSION_FUNCTIONS, FUNCTION_NAMES } from '../../lib/webhooks/registry.ts';

const kubeconfigInputs: StackInputs = {
  webhookSecretArn: 'webhook-arn',
  cluster: { kind: 'kubeconfig-secret', secretArn: 'kubeconfig-arn', statusSyncSecretArn: 'status-sync-kubeconfig-arn' },
  kubeSettings: { KUBE_API_TIMEOUT_MS: '3000' },
  webhookSecretRotationHours: 24,
  revisionNamespace: 'kruise-system',
  metricsNamespace: 'Team/Sidecars',
};
const eksInputs: StackInputs = {
  ...kubeconfigInputs,
  cluster: { kind: 'eks', clusterName: 'prod', endpoint: 'https://abc.eks.example', caData: 'Q0E=' },
};

describe('function table', () => {
  it('puts exactly the functions the API server calls behind Function URLs: the admission functions and the CRD conversion', () => {
    expect(STACK_FUNCTIONS.filter((fn) => FUNCTION_SPECS[fn].trigger === 'function-url')).toEqual([...FUNCTION_NAMES]);
    expect(FUNCTION_NAMES).toEqual([...ADMISSION_FUNCTIONS, 'sidecarset-convert']);
  });

  it.each(ADMISSION_FUNCTIONS)('gives %s the cluster exactly when it reads the cluster, and the webhook secret always', (fn) => {
    expect(FUNCTION_SPECS[fn]).toMatchObject({ readsCluster: needsCluster(fn), readsWebhookSecret: true });
  });

  it('gives the reconciler the cluster and the webhook secret only to rotate it', () => {
    expect(FUNCTION_SPECS['status-sync']).toMatchObject({ trigger: 'schedule', readsCluster: true, readsWebhookSecret: false, rotatesWebhookSecret: true });
    for (const fn of ADMISSION_FUNCTIONS) expect(FUNCTION_SPECS[fn].rotatesWebhookSecret).toBe(false);
  });

  it('gives the Kubernetes client settings to the functions that read the cluster through the cached sources', () => {
    expect(STACK_FUNCTIONS.filter((fn) => FUNCTION_SPECS[fn].takesKubeSettings)).toEqual(ADMISSION_FUNCTIONS.filter(needsCluster));
  });

  it('names the cluster with the variables cluster.ts reads', () => {
    expect(CLUSTER_ENV).toEqual({
      kubeconfigSecretArn: ENV_KUBECONFIG_SECRET_ARN,
      eksClusterName: ENV_EKS_CLUSTER_NAME,
      eksEndpoint: ENV_EKS_ENDPOINT,
      eksCaData: ENV_EKS_CA_DATA,
    });
  });
});

describe('functionAccess', () => {
  it('gives the reconciler alone its rollout stall threshold, as ROLLOUT_STALL_MS', () => {
    const inputs = { ...kubeconfigInputs, rolloutStallSeconds: 300 };
    expect(functionAccess(FUNCTION_SPECS['status-sync'], inputs).environment.ROLLOUT_STALL_MS).toBe('300000');
    for (const fn of ADMISSION_FUNCTIONS) expect(functionAccess(FUNCTION_SPECS[fn], inputs).environment.ROLLOUT_STALL_MS).toBeUndefined();
  });

  it('gives the reconciler alone its limit of evictions per resync, as REPAIR_MAX_EVICTIONS_PER_RESYNC', () => {
    const inputs = { ...kubeconfigInputs, repairMaxEvictionsPerResync: 2 };
    expect(functionAccess(FUNCTION_SPECS['status-sync'], inputs).environment.REPAIR_MAX_EVICTIONS_PER_RESYNC).toBe('2');
    for (const fn of ADMISSION_FUNCTIONS) expect(functionAccess(FUNCTION_SPECS[fn], inputs).environment.REPAIR_MAX_EVICTIONS_PER_RESYNC).toBeUndefined();
  });

  it('lets the defaulting webhook read the caller secret and nothing of the cluster', () => {
    expect(functionAccess(FUNCTION_SPECS['sidecarset-default'], kubeconfigInputs)).toEqual({
      environment: { METRICS_NAMESPACE: 'Team/Sidecars', WEBHOOK_SECRET_ARN: 'webhook-arn' },
      secretArns: ['webhook-arn'],
      writableSecretArns: [],
    });
  });

  it('lets the reconciler read its own kubeconfig secret (the writer\'s), and read and write the webhook secret to rotate it', () => {
    expect(functionAccess(FUNCTION_SPECS['status-sync'], kubeconfigInputs)).toEqual({
      environment: { METRICS_NAMESPACE: 'Team/Sidecars', KUBECONFIG_SECRET_ARN: 'status-sync-kubeconfig-arn', SIDECARSET_REVISION_NAMESPACE: 'kruise-system', WEBHOOK_SECRET_ARN: 'webhook-arn', WEBHOOK_SECRET_ROTATION_PERIOD_MS: String(24 * 3_600_000) },
      secretArns: ['webhook-arn', 'status-sync-kubeconfig-arn'],
      writableSecretArns: ['webhook-arn'],
    });
  });

  it('gives the reconciler nothing of the webhook secret when rotation is off', () => {
    expect(functionAccess(FUNCTION_SPECS['status-sync'], { ...kubeconfigInputs, webhookSecretRotationHours: 0 })).toEqual({
      environment: { METRICS_NAMESPACE: 'Team/Sidecars', KUBECONFIG_SECRET_ARN: 'status-sync-kubeconfig-arn', SIDECARSET_REVISION_NAMESPACE: 'kruise-system' },
      secretArns: ['status-sync-kubeconfig-arn'],
      writableSecretArns: [],
    });
  });

  it('gives each webhook that reads the cluster the webhooks\' kubeconfig secret, never the reconciler\'s', () => {
    for (const fn of ADMISSION_FUNCTIONS.filter(needsCluster)) {
      const access = functionAccess(FUNCTION_SPECS[fn], kubeconfigInputs);
      expect(access.environment.KUBECONFIG_SECRET_ARN).toBe('kubeconfig-arn');
      expect(access.secretArns).not.toContain('status-sync-kubeconfig-arn');
    }
  });

  it('gives the caller network allowlist to the Function URL functions only', () => {
    const inputs = { ...kubeconfigInputs, allowedCallerCidrs: '198.51.100.0/24' };
    for (const fn of ADMISSION_FUNCTIONS) expect(functionAccess(FUNCTION_SPECS[fn], inputs).environment.ALLOWED_CALLER_CIDRS).toBe('198.51.100.0/24');
    expect(functionAccess(FUNCTION_SPECS['status-sync'], inputs).environment.ALLOWED_CALLER_CIDRS).toBeUndefined();
  });

  it('gives the cluster readers the EKS settings and no cluster secret on EKS', () => {
    expect(functionAccess(FUNCTION_SPECS['pod-inject'], eksInputs)).toEqual({
      environment: {
        METRICS_NAMESPACE: 'Team/Sidecars',
        WEBHOOK_SECRET_ARN: 'webhook-arn',
        EKS_CLUSTER_NAME: 'prod',
        EKS_ENDPOINT: 'https://abc.eks.example',
        EKS_CA_DATA: 'Q0E=',
        SIDECARSET_REVISION_NAMESPACE: 'kruise-system',
        KUBE_API_TIMEOUT_MS: '3000',
      },
      secretArns: ['webhook-arn'],
      writableSecretArns: [],
    });
    expect(functionAccess(FUNCTION_SPECS['status-sync'], eksInputs).secretArns).toEqual(['webhook-arn']);
  });

  it('tells every function that reads the cluster where the ControllerRevisions live, the one it is given', () => {
    const inputs = { ...kubeconfigInputs, revisionNamespace: 'sidecarset-history' };
    for (const fn of STACK_FUNCTIONS) {
      expect(functionAccess(FUNCTION_SPECS[fn], inputs).environment.SIDECARSET_REVISION_NAMESPACE).toBe(FUNCTION_SPECS[fn].readsCluster ? 'sidecarset-history' : undefined);
    }
  });

  it('tells every function the CloudWatch namespace of its metrics', () => {
    for (const fn of STACK_FUNCTIONS) expect(functionAccess(FUNCTION_SPECS[fn], kubeconfigInputs).environment.METRICS_NAMESPACE).toBe('Team/Sidecars');
  });
});
