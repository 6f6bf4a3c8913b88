/**
 * The functions' credentials for the Kubernetes API: a kubeconfig read from a
 * file, from an environment variable holding its YAML, or from a loader such
 * as a Secrets Manager secret. Everything is checked once, at cold start, so
 * that a broken kubeconfig is a clear startup error naming what is wrong
 * rather than a confusing failure on the first admission request.
 */
import { access, constants, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { LineCounter, parseDocument } from 'yaml';
import { isObject } from '../kube/json.ts';
import { errorMessage } from '../errors.ts';

/** Where a kubeconfig comes from. */
export type KubeconfigSource =
  /** A file; relative paths inside it are relative to its directory, as kubectl reads them. */
  | { file: string }
  /** An environment variable holding the kubeconfig's YAML. */
  | { envVar: string; env: Readonly<Record<string, string | undefined>> }
  /** Any async source (Secrets Manager, ...); `description` names it in errors. */
  | { load: () => Promise<string>; description: string };

export interface KubeconfigOptions {
  /** Use this context instead of the kubeconfig's `current-context`. */
  context?: string;
}

export interface ParseKubeconfigOptions extends KubeconfigOptions {
  /** The directory relative file references are resolved against (a file's own directory). */
  baseDir?: string;
}

/** A kubeconfig that cannot be used; the message names its origin and the problem. */
export class KubeconfigError extends Error {
  /** Where the kubeconfig came from: `file /path`, `environment variable X`, ... */
  readonly origin: string;
  constructor(origin: string, problem: string, options?: { cause?: unknown }) {
    super(`kubeconfig from ${origin}: ${problem}`, options);
    this.name = 'KubeconfigError';
    this.origin = origin;
  }
}

/** A human name for a source, used in every error about it. */
export function describeKubeconfigSource(source: KubeconfigSource): string {
  if ('file' in source) return `file ${source.file}`;
  if ('envVar' in source) return `environment variable ${source.envVar}`;
  return source.description;
}

function names(items: readonly { name: string }[]): string {
  return items.length === 0 ? 'none defined' : `defined: ${items.map((item) => `"${item.name}"`).join(', ')}`;
}

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
 * Builds a KubeConfig from kubeconfig YAML and checks that its current
 * context leads to a cluster with an http(s) server and to a defined user.
 * Files it references (CA, client certificate and key) are not checked here;
 * {@link loadKubeConfig} does that.
 * @param origin names the source in errors (`file /x`, `environment variable Y`).
 * @throws KubeconfigError
 */
export function parseKubeConfig(content: string, origin: string, options: ParseKubeconfigOptions = {}): KubeConfig {
  // Annotated so that TypeScript narrows after a call, as after a throw.
  const fail: (problem: string, cause?: unknown) => never = (problem, cause) => {
    throw new KubeconfigError(origin, problem, cause === undefined ? undefined : { cause });
  };
  if (content.trim() === '') fail('it is empty');

  // Parsed here first only to give a clear message; client-node parses again.
  const lineCounter = new LineCounter();
  const document = parseDocument(content, { prettyErrors: false, lineCounter });
  const [firstError] = document.errors;
  if (firstError !== undefined) {
    // Code and position only: the parser's message quotes the line, which may hold a token.
    const { line, col } = lineCounter.linePos(firstError.pos[0]);
    fail(`it is not valid YAML (${firstError.code} at line ${line}, column ${col})`);
  }
  const root: unknown = document.toJS();
  if (!isObject(root)) fail(`it is not a kubeconfig: expected a YAML mapping, got ${Array.isArray(root) ? 'a list' : typeof root}`);
  if (isObject(root) && root.kind !== undefined && root.kind !== 'Config') {
    fail(`it is not a kubeconfig: its kind is ${JSON.stringify(root.kind)}, not "Config"`);
  }

  const kc = new KubeConfig();
  try {
    kc.loadFromString(content);
  } catch (error) {
    // client-node names the missing field ("clusters[0].cluster.server is
    // missing") or, for a token-file, the file; a YAML error would quote the text.
    const yamlError = isObject(error) && error.name === 'YAMLException';
    fail(yamlError ? `client-node cannot parse it${position(error)}` : errorMessage(error), yamlError ? undefined : error);
  }
  if (options.baseDir !== undefined) kc.makePathsAbsolute(options.baseDir);

  if (options.context !== undefined) {
    if (kc.getContextObject(options.context) === null) {
      fail(`the requested context "${options.context}" is not defined (${names(kc.getContexts())})`);
    }
    kc.setCurrentContext(options.context);
  }
  // Typed string, but undefined at run time when the YAML has no current-context.
  const contextName = kc.getCurrentContext() as string | undefined;
  if (contextName === undefined || contextName === '') {
    fail(`it has no current-context (contexts ${names(kc.getContexts())})`);
  }
  const context = kc.getContextObject(contextName);
  if (context === null) {
    fail(`current-context "${contextName}" is not defined (contexts ${names(kc.getContexts())})`);
  }
  const cluster = kc.getCluster(context.cluster);
  if (cluster === null) {
    fail(`context "${context.name}" names cluster "${context.cluster}", which is not defined (clusters ${names(kc.getClusters())})`);
  }
  let server: URL | undefined;
  try {
    server = new URL(cluster.server);
  } catch {
    server = undefined;
  }
  if (server === undefined || (server.protocol !== 'https:' && server.protocol !== 'http:')) {
    fail(`cluster "${cluster.name}" has server "${cluster.server}", which is not an http(s) URL`);
  }
  // client-node refuses this on every request; say so once, at startup.
  if (server.protocol === 'http:' && !cluster.skipTLSVerify) {
    fail(`cluster "${cluster.name}" has a plain http:// server, which client-node uses only with insecure-skip-tls-verify: true`);
  }
  // A context may name no user (anonymous access), but a named user must exist.
  const userName = context.user as string | undefined;
  if (userName !== undefined && userName !== '' && kc.getUser(userName) === null) {
    fail(`context "${context.name}" names user "${userName}", which is not defined (users ${names(kc.getUsers())})`);
  }
  return kc;
}

/** Fails at startup, not on the first request, when the CA or client key files are missing. */
async function checkReferencedFiles(kc: KubeConfig, origin: string): Promise<void> {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  // client-node stores absent fields as null despite its types.
  const files: [string, string | null | undefined][] = [
    ['certificate-authority', cluster?.caFile],
    ['client-certificate', user?.certFile],
    ['client-key', user?.keyFile],
  ];
  for (const [field, path] of files) {
    if (path === undefined || path === null || path === '') continue;
    try {
      await access(path, constants.R_OK);
    } catch (error) {
      throw new KubeconfigError(origin, `its ${field} file ${path} cannot be read (${errorMessage(error)})`, { cause: error });
    }
  }
}

async function readSource(source: KubeconfigSource, origin: string): Promise<string> {
  if ('file' in source) {
    try {
      return await readFile(source.file, 'utf8');
    } catch (error) {
      throw new KubeconfigError(origin, `the file cannot be read (${errorMessage(error)})`, { cause: error });
    }
  }
  if ('envVar' in source) {
    const content = source.env[source.envVar];
    if (content === undefined) throw new KubeconfigError(origin, 'the variable is not set');
    return content;
  }
  let content: unknown;
  try {
    content = await source.load();
  } catch (error) {
    throw new KubeconfigError(origin, `loading it failed (${errorMessage(error)})`, { cause: error });
  }
  if (typeof content !== 'string') throw new KubeconfigError(origin, `the loader returned ${typeof content}, not a string`);
  return content;
}

/**
 * Reads, parses and checks a kubeconfig (see {@link parseKubeConfig}), and
 * checks that the files it references can be read.
 * @throws KubeconfigError naming the source and what is wrong.
 */
export async function loadKubeConfig(source: KubeconfigSource, options: KubeconfigOptions = {}): Promise<KubeConfig> {
  const origin = describeKubeconfigSource(source);
  const content = await readSource(source, origin);
  const kc = parseKubeConfig(content, origin, 'file' in source ? { ...options, baseDir: dirname(source.file) } : options);
  await checkReferencedFiles(kc, origin);
  return kc;
}

/** The API clients the live sources use, made once per cold start. */
export interface KubeClients {
  readonly customObjects: CustomObjectsApi;
  readonly core: CoreV1Api;
  /** The API server's URL, for logs and messages. */
  readonly server: string;
}

/** Makes the API clients for a checked KubeConfig (from {@link loadKubeConfig}). */
export function makeKubeClients(kc: KubeConfig): KubeClients {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new KubeconfigError('the given KubeConfig', 'its current context names no cluster');
  return {
    customObjects: kc.makeApiClient(CustomObjectsApi),
    core: kc.makeApiClient(CoreV1Api),
    server: cluster.server,
  };
}
