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
import { EksAuthError, type EksTokenSource } from './eks-token.ts';

/** Where the cluster is; the credentials come from the token source. */
export interface EksClusterSettings {
  clusterName: string;
  /** The cluster's API server endpoint (`aws eks describe-cluster` .cluster.endpoint). */
  endpoint: string;
  /** Base64 of the cluster CA's PEM (`.cluster.certificateAuthority.data`), as a kubeconfig's certificate-authority-data. */
  caData: string;
}

/** The user name the authenticator recognises; it names the role's token, not a Kubernetes user. */
const EKS_USER = 'eks-iam-role';

/** Parameters of client-node's KubeConfig.addAuthenticator (its Authenticator type is not exported). */
type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

/**
 * Checks the settings and builds the KubeConfig.
 * @throws EksAuthError when the endpoint is not https or the CA data is not a base64 PEM certificate.
 */
export function eksKubeConfig(settings: EksClusterSettings, tokens: EksTokenSource): KubeConfig {
  let endpoint: URL;
  try {
    endpoint = new URL(settings.endpoint);
  } catch (error) {
    throw new EksAuthError(`the EKS endpoint "${settings.endpoint}" is not a URL`, { cause: error });
  }
  if (endpoint.protocol !== 'https:') throw new EksAuthError(`the EKS endpoint "${settings.endpoint}" is not an https:// URL`);
  if (!Buffer.from(settings.caData, 'base64').toString('utf8').includes('-----BEGIN CERTIFICATE-----')) {
    throw new EksAuthError('the EKS CA data is not base64 of a PEM certificate (use .cluster.certificateAuthority.data from aws eks describe-cluster)');
  }
  if (settings.clusterName === '') throw new EksAuthError('the EKS cluster name is empty');

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
    clusters: [{ name: settings.clusterName, server: endpoint.toString().replace(/\/$/, ''), caData: settings.caData, skipTLSVerify: false }],
    users: [{ name: EKS_USER }],
    contexts: [{ name: settings.clusterName, cluster: settings.clusterName, user: EKS_USER }],
    currentContext: settings.clusterName,
  });
  return kc;
}
