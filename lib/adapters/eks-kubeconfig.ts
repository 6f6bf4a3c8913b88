/**
 * A KubeConfig for an EKS cluster that authenticates with the function's IAM
 * role instead of a kubeconfig's credentials: every request carries a token
 * from eks-token.ts, made anew shortly before the previous one expires.
 *
 * client-node asks a registered authenticator for headers on every request,
 * so a warm Lambda that lives for hours keeps working past the 15-minute
 * token lifetime without any timer of its own.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { checkEksCluster, type EksClusterSettings } from './eks-cluster.ts';
import type { EksTokenSource } from './eks-token.ts';

/** The user name the authenticator recognises; it names the role's token, not a Kubernetes user. */
const EKS_USER = 'eks-iam-role';

/** Parameters of client-node's KubeConfig.addAuthenticator (its Authenticator type is not exported). */
type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

/**
 * Checks the settings (eks-cluster.ts) and builds the KubeConfig.
 * @throws EksAuthError when the endpoint is not https or the CA data is not a base64 PEM certificate.
 */
export function eksKubeConfig(settings: EksClusterSettings, tokens: EksTokenSource): KubeConfig {
  const cluster = checkEksCluster(settings);
  const kc = new KubeConfig();
  const authenticator: Authenticator = {
    isAuthProvider: (user) => user.name === EKS_USER,
    applyAuthentication: (_user, opts) => {
      // Typed as https or WebSocket options; both carry headers, which client-node creates before asking.
      const target = opts as { headers?: Record<string, unknown> };
      target.headers = { ...target.headers, Authorization: `Bearer ${tokens.token()}` };
      return Promise.resolve();
    },
  };
  kc.addAuthenticator(authenticator);
  kc.loadFromOptions({
    clusters: [{ name: cluster.clusterName, server: cluster.server, caData: settings.caData, skipTLSVerify: false }],
    users: [{ name: EKS_USER }],
    contexts: [{ name: settings.clusterName, cluster: settings.clusterName, user: EKS_USER }],
    currentContext: settings.clusterName,
  });
  return kc;
}
