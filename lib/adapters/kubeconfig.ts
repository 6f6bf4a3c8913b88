/**
 * client-node's side of a kubeconfig: its KubeConfig, and the connection
 * that asks it for each request's credentials and TLS material, for the
 * kubeconfigs the project's own reading cannot serve (exec plugins, auth
 * providers, basic auth, a proxy, impersonation) and for the status
 * reconciler. The requests themselves go through kube-request.ts either way.
 * The checking is kubeconfig-reader.ts's, so both refuse the same
 * kubeconfigs with the same words. The webhooks load this module (and with
 * it client-node) only through a dynamic import, when a kubeconfig needs it.
 */
import { Agent as HttpAgent } from 'node:http';
import type { RequestOptions } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { errorMessage } from '../errors.ts';
import { isObject } from '../kube/json.ts';
import { keepAliveAgent, kubeClient, type KubeClient, type KubeClientOptions, type KubeConnection, type TlsSettings } from './kube-request.ts';
import {
  checkKubeconfig,
  KubeconfigError,
  readKubeconfig,
  type CheckedKubeconfig,
  type CheckKubeconfigOptions,
  type KubeconfigOptions,
  type KubeconfigSource,
} from './kubeconfig-reader.ts';

/**
 * Where client-node's parser (js-yaml) failed, without its message: that
 * quotes the text, which holds secrets.
 */
function position(error: unknown): string {
  if (!isObject(error)) return '';
  const mark: unknown = error.mark;
  if (isObject(mark) && typeof mark.line === 'number' && typeof mark.column === 'number') {
    return ` at line ${mark.line + 1}, column ${mark.column + 1}`;
  }
  return '';
}

/**
 * client-node's KubeConfig for a checked kubeconfig, its files resolved as
 * the checker resolved them and its current context the checked one.
 * @throws KubeconfigError when client-node cannot load what the checker accepted (a token-file of another user, ...).
 */
export function kubeConfigOf(kubeconfig: CheckedKubeconfig): KubeConfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromString(kubeconfig.content);
  } catch (error) {
    // A YAML error would quote the text; anything else names a field or a file.
    const yamlError = isObject(error) && error.name === 'YAMLException';
    throw new KubeconfigError(
      kubeconfig.origin,
      yamlError ? `client-node cannot parse it${position(error)}` : errorMessage(error),
      yamlError ? undefined : { cause: error },
    );
  }
  if (kubeconfig.baseDir !== undefined) kc.makePathsAbsolute(kubeconfig.baseDir);
  kc.setCurrentContext(kubeconfig.context);
  return kc;
}

/**
 * Checks kubeconfig YAML (kubeconfig-reader.ts's checkKubeconfig) and builds
 * client-node's KubeConfig for it. Referenced files are not checked here;
 * {@link loadKubeConfig} does that.
 * @throws KubeconfigError
 */
export function parseKubeConfig(content: string, origin: string, options: CheckKubeconfigOptions = {}): KubeConfig {
  return kubeConfigOf(checkKubeconfig(content, origin, options));
}

/**
 * Reads and checks a kubeconfig (kubeconfig-reader.ts's readKubeconfig) and
 * builds client-node's KubeConfig for it.
 * @throws KubeconfigError naming the source and what is wrong.
 */
export async function loadKubeConfig(source: KubeconfigSource, options: KubeconfigOptions = {}): Promise<KubeConfig> {
  return kubeConfigOf(await readKubeconfig(source, options));
}

/**
 * The connection for a KubeConfig: before every attempt client-node says
 * what to send (`applyToHTTPSOptions`: the CA and client certificate, the
 * bearer token an exec plugin, an auth provider, a token file or the EKS
 * authenticator gives, basic auth, impersonation headers), and the request
 * goes through the one client (kube-request.ts). The sockets are kept alive
 * on an agent of the connection's own, made again only when the TLS material
 * changes (an exec plugin's renewed client certificate); through a proxy,
 * client-node's own agent for it.
 * @throws KubeconfigError when its current context names no cluster.
 */
export function kubeConfigConnection(kc: KubeConfig): KubeConnection {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new KubeconfigError('the given KubeConfig', 'its current context names no cluster');
  const server = cluster.server.replace(/\/$/, '');
  let held: { key: string; agent: HttpAgent } | undefined;
  return {
    server,
    async prepare() {
      const options: RequestOptions = {};
      await kc.applyToHTTPSOptions(options);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(options.headers ?? {})) if (value !== undefined) headers[name] = String(value);
      if (typeof options.auth === 'string') headers.Authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
      if (cluster.proxyUrl !== undefined && cluster.proxyUrl !== '' && options.agent instanceof HttpAgent) return { agent: options.agent, headers };
      const tls: TlsSettings = {
        ...(options.ca === undefined ? {} : { ca: options.ca as string | Buffer }),
        ...(options.cert === undefined ? {} : { cert: options.cert as string | Buffer }),
        ...(options.key === undefined ? {} : { key: options.key as string | Buffer }),
        ...(options.servername === undefined ? {} : { servername: options.servername }),
        ...(options.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: options.rejectUnauthorized }),
      };
      const key = JSON.stringify(Object.entries(tls).map(([name, value]) => [name, Buffer.isBuffer(value) ? value.toString('base64') : value]));
      if (held?.key !== key) {
        // Sockets of the old material finish what they carry and are not reused.
        held?.agent.destroy();
        held = { key, agent: keepAliveAgent(server, tls) };
      }
      return { agent: held.agent, headers };
    },
    close() {
      held?.agent.destroy();
    },
  };
}

/** The one client (kube-request.ts) over a KubeConfig: what the reconciler, the rollout view and the migration send with. */
export function kubeConfigClient(kc: KubeConfig, options: KubeClientOptions = {}): KubeClient {
  return kubeClient(kubeConfigConnection(kc), options);
}
