/**
 * Where an EKS cluster is, checked once at cold start. Kept apart from
 * eks-kubeconfig.ts (client-node) so that the webhooks, which read EKS with
 * the project's own HTTPS client, check the same settings with the same
 * words without loading client-node.
 */
import { EksAuthError } from './eks-token.ts';

/** Where the cluster is; the credentials come from the token source. */
export interface EksClusterSettings {
  clusterName: string;
  /** The cluster's API server endpoint (`aws eks describe-cluster` .cluster.endpoint). */
  endpoint: string;
  /** Base64 of the cluster CA's PEM (`.cluster.certificateAuthority.data`), as a kubeconfig's certificate-authority-data. */
  caData: string;
}

/** The checked settings: the endpoint without a trailing slash and the CA's PEM. */
export interface EksCluster {
  clusterName: string;
  server: string;
  caPem: string;
}

/**
 * Checks the settings.
 * @throws EksAuthError when the endpoint is not https, the CA data is not a base64 PEM certificate or the name is empty.
 */
export function checkEksCluster(settings: EksClusterSettings): EksCluster {
  let endpoint: URL;
  try {
    endpoint = new URL(settings.endpoint);
  } catch (error) {
    throw new EksAuthError(`the EKS endpoint "${settings.endpoint}" is not a URL`, { cause: error });
  }
  if (endpoint.protocol !== 'https:') throw new EksAuthError(`the EKS endpoint "${settings.endpoint}" is not an https:// URL`);
  const caPem = Buffer.from(settings.caData, 'base64').toString('utf8');
  if (!caPem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new EksAuthError('the EKS CA data is not base64 of a PEM certificate (use .cluster.certificateAuthority.data from aws eks describe-cluster)');
  }
  if (settings.clusterName === '') throw new EksAuthError('the EKS cluster name is empty');
  return { clusterName: settings.clusterName, server: endpoint.toString().replace(/\/$/, ''), caPem };
}
