/** The stack's table of functions agrees with the functions themselves. */
import { describe, expect, it } from '@jest/globals';
import { ENV_KUBECONFIG_SECRET_ARN, FUNCTION_SPECS, functionEnvironment, STACK_FUNCTIONS } from '../../infra/aws/functions.ts';
import { ENV_KUBECONFIG_SECRET_ARN as CLUSTER_ENV_KUBECONFIG_SECRET_ARN } from '../../functions/shared/cluster.ts';
import { needsCluster } from '../../functions/shared/compose.ts';
import { ADMISSION_FUNCTIONS } from '../../lib/webhooks/registry.ts';

describe('function table', () => {
  it('puts exactly the admission functions behind Function URLs', () => {
    expect(STACK_FUNCTIONS.filter((fn) => FUNCTION_SPECS[fn].trigger === 'function-url')).toEqual([...ADMISSION_FUNCTIONS]);
  });

  it.each(ADMISSION_FUNCTIONS)('gives %s the kubeconfig exactly when it reads the cluster, and the webhook secret always', (fn) => {
    expect(FUNCTION_SPECS[fn]).toMatchObject({ readsCluster: needsCluster(fn), readsWebhookSecret: true });
  });

  it('gives the reconciler the cluster and not the webhook secret', () => {
    expect(FUNCTION_SPECS['status-sync']).toMatchObject({ trigger: 'schedule', readsCluster: true, readsWebhookSecret: false });
  });

  it('names the kubeconfig secret with the variable cluster.ts reads', () => {
    expect(ENV_KUBECONFIG_SECRET_ARN).toBe(CLUSTER_ENV_KUBECONFIG_SECRET_ARN);
  });

  it('adds the Kubernetes client settings only where the cluster is read', () => {
    const secrets = { webhook: 'w', kubeconfig: 'k' };
    const settings = { KUBE_API_TIMEOUT_MS: '3000' };
    expect(functionEnvironment(FUNCTION_SPECS['sidecarset-default'], secrets, settings)).toEqual({ WEBHOOK_SECRET_ARN: 'w' });
    expect(functionEnvironment(FUNCTION_SPECS['status-sync'], secrets, settings)).toEqual({ KUBECONFIG_SECRET_ARN: 'k', KUBE_API_TIMEOUT_MS: '3000' });
  });
});
