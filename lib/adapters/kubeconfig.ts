/**
 * client-node's side of a kubeconfig: its KubeConfig and API clients, for
 * the kubeconfigs the project's own client cannot serve (exec plugins, auth
 * providers, basic auth, a proxy, impersonation) and for the status
 * reconciler, which pages pods, patches statuses and writes events through
 * them. The checking is kubeconfig-reader.ts's, so both clients refuse the
 * same kubeconfigs with the same words. The webhooks load this module (and
 * with it client-node) only through a dynamic import, when a kubeconfig
 * needs it.
 */
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  Observable,
  type ConfigurationOptions,
  type ObservableMiddleware,
} from '@kubernetes/client-node';
import { errorMessage } from '../errors.ts';
import { isObject } from '../kube/json.ts';
import { GROUP, VERSION } from '../sidecarset/types.ts';
import { apiServerAnswered, asKubeApiError, KubeApiError } from './kube-api-error.ts';
import {
  getControllerRevisionOperation,
  getNamespaceOperation,
  LIST_SIDECARSETS,
  listControllerRevisionsOperation,
  SIDECARSET_PLURAL,
  type ServerReader,
} from './kube-sources.ts';
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
 * Per-call client-node options that abort the request when `signal` does.
 * client-node 2.x has no per-call timeout parameter, but its RequestContext
 * carries an AbortSignal to undici's fetch; a middleware sets it.
 */
export function abortWith(signal: AbortSignal): ConfigurationOptions {
  const middleware: ObservableMiddleware = {
    pre: (context) => {
      context.setSignal(signal);
      return new Observable(Promise.resolve(context));
    },
    post: (response) => new Observable(Promise.resolve(response)),
  };
  // 'append' keeps the User-Agent middleware makeApiClient installs; the
  // default, 'replace', would drop it.
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}

/**
 * The KubeApiError for a failed client-node call: its ApiException message
 * carries every response header, so only the status and the API server's own
 * explanation from its Status body are kept.
 */
export function clientNodeError(operation: string, error: unknown): KubeApiError {
  if (error instanceof ApiException) return apiServerAnswered(operation, error.code, error.body, { cause: error });
  return asKubeApiError(operation, error);
}

/** The API clients, made once per cold start; also the live sources' port over client-node. */
export interface KubeClients extends ServerReader {
  readonly customObjects: CustomObjectsApi;
  readonly core: CoreV1Api;
  /** The API server's URL, for logs and messages. */
  readonly server: string;
}

/** Makes the API clients for a checked KubeConfig (from {@link loadKubeConfig}). */
export function makeKubeClients(kc: KubeConfig): KubeClients {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new KubeconfigError('the given KubeConfig', 'its current context names no cluster');
  const customObjects = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  return {
    customObjects,
    core,
    server: cluster.server,
    async listSidecarSets(signal) {
      // CustomObjectsApi returns the parsed JSON untouched: unknown fields survive.
      try {
        const list: unknown = await customObjects.listClusterCustomObject({ group: GROUP, version: VERSION, plural: SIDECARSET_PLURAL }, abortWith(signal));
        return list;
      } catch (error) {
        throw clientNodeError(LIST_SIDECARSETS, error);
      }
    },
    async readNamespace(name, signal) {
      try {
        return await core.readNamespace({ name }, abortWith(signal));
      } catch (error) {
        if (error instanceof ApiException && error.code === 404) return undefined;
        throw clientNodeError(getNamespaceOperation(name), error);
      }
    },
    // Through CustomObjectsApi, which works for any group: it returns the JSON untouched (AppsV1Api would type `data`).
    async readControllerRevision(namespace, name, signal) {
      try {
        const revision: unknown = await customObjects.getNamespacedCustomObject({ group: 'apps', version: 'v1', namespace, plural: 'controllerrevisions', name }, abortWith(signal));
        if (!isObject(revision)) throw new KubeApiError(getControllerRevisionOperation(namespace, name), 'the answer is not an object');
        return revision;
      } catch (error) {
        if (error instanceof ApiException && error.code === 404) return undefined;
        throw clientNodeError(getControllerRevisionOperation(namespace, name), error);
      }
    },
    async listControllerRevisions(namespace, labelSelector, signal, page) {
      try {
        const paging = page === undefined ? {} : { limit: page.limit, ...(page.continue === undefined ? {} : { _continue: page.continue }) };
        const list: unknown = await customObjects.listNamespacedCustomObject({ group: 'apps', version: 'v1', namespace, plural: 'controllerrevisions', labelSelector, ...paging }, abortWith(signal));
        return list;
      } catch (error) {
        throw clientNodeError(listControllerRevisionsOperation(namespace, labelSelector), error);
      }
    },
  };
}
