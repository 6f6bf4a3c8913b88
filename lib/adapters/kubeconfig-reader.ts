/**
 * The functions' credentials for the Kubernetes API: a kubeconfig read from a
 * file, from an environment variable holding its YAML, or from a loader such
 * as a Secrets Manager secret, checked once at cold start so that a broken
 * kubeconfig is a clear startup error naming what is wrong rather than a
 * confusing failure on the first admission request.
 *
 * This reader does not load client-node: the webhooks read the cluster with
 * the project's small HTTPS client (kube-https.ts), and client-node's import
 * alone was most of their cold start. It also tells which kubeconfigs need
 * client-node after all (exec plugins, auth providers, basic auth, a proxy,
 * impersonation), which the caller then builds with kubeconfig.ts.
 */
import { access, constants, readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { isObject } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import { errorMessage } from '../errors.ts';
import type { KubeHttpsSettings } from './kube-request.ts';

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

export interface CheckKubeconfigOptions extends KubeconfigOptions {
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

/** The current context's cluster. */
export interface KubeconfigCluster {
  readonly name: string;
  /** The API server's URL without a trailing slash, so that API paths join cleanly. */
  readonly server: string;
  /** `certificate-authority-data`: base64 of the CA's PEM. */
  readonly caData?: string;
  /** `certificate-authority`: a PEM file, absolute when the kubeconfig came from a file. */
  readonly caFile?: string;
  readonly insecureSkipTlsVerify: boolean;
  /** `tls-server-name`: the name the server's certificate is checked against, instead of the URL's host. */
  readonly tlsServerName?: string;
}

/** The current context's user: the credentials the project's own client uses. */
export interface KubeconfigUser {
  readonly name: string;
  readonly token?: string;
  /** `token-file`, re-read while the function runs (projected tokens rotate). */
  readonly tokenFile?: string;
  /** `client-certificate-data` and `client-key-data`: base64 of PEM. */
  readonly certData?: string;
  readonly keyData?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
}

/** A kubeconfig whose current context was checked and resolved. */
export interface CheckedKubeconfig {
  /** Where it came from, for errors. */
  readonly origin: string;
  /** The YAML itself, for client-node when {@link clientNodeOnly} is not empty. */
  readonly content: string;
  /** What relative file references are resolved against. */
  readonly baseDir: string | undefined;
  readonly context: string;
  readonly cluster: KubeconfigCluster;
  /** Undefined when the context names no user (anonymous access). */
  readonly user: KubeconfigUser | undefined;
  /**
   * The fields of the current context that only client-node implements
   * (`users[].user.exec`, `clusters[].cluster.proxy-url`, ...); empty when the
   * project's own client reads the cluster with it.
   */
  readonly clientNodeOnly: readonly string[];
}

/** User fields only client-node implements: the kubeconfig then falls back to it. */
const CLIENT_NODE_USER_FIELDS = ['exec', 'auth-provider', 'username', 'password', 'as'] as const;
/** Cluster fields only client-node implements. */
const CLIENT_NODE_CLUSTER_FIELDS = ['proxy-url'] as const;
/**
 * User fields no client here implements: client-node ignores them without a
 * word, so the functions would act as another identity than the one asked
 * for. Refused instead.
 */
const UNSUPPORTED_USER_FIELDS = ['as-groups', 'as-uid', 'as-user-extra'] as const;

function names(items: readonly { name: string }[]): string {
  return items.length === 0 ? 'none defined' : `defined: ${items.map((item) => `"${item.name}"`).join(', ')}`;
}

/** A scalar as YAML may type it (`name: 123` is a number) as the string Go would read; anything else is absent. */
function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

interface Named {
  name: string;
  body: JsonObject;
}

/**
 * The entries of one of the kubeconfig's lists, each checked the way
 * client-node's loader checks them, with its messages ("clusters[0].cluster.server
 * is missing"), so that whichever client ends up reading the cluster, the
 * same kubeconfigs are refused with the same words.
 */
function entries(root: JsonObject, list: 'clusters' | 'users' | 'contexts', fail: (problem: string) => never): Named[] {
  const value = root[list];
  // client-node reads a missing or non-list field as no entries.
  if (!Array.isArray(value)) return [];
  const field = list.slice(0, -1);
  return value.map((item, i) => {
    if (!isObject(item)) return fail(`${list}[${i}] is not a mapping`);
    const name = scalarText(item.name);
    if (name === undefined || name === '') return fail(`${list}[${i}].name is missing`);
    const body = item[field];
    // A user may be only a name: no credentials, as an anonymous caller.
    if (list === 'users') return { name, body: isObject(body) ? body : {} };
    if (!isObject(body)) return fail(`${list}[${i}].${field} is missing`);
    const required = list === 'clusters' ? 'server' : 'cluster';
    const requiredValue = scalarText(body[required]);
    if (requiredValue === undefined || requiredValue === '') return fail(`${list}[${i}].${field}.${required} is missing`);
    return { name, body };
  });
}

/** Absolute, against `baseDir`, as kubectl resolves the paths in a kubeconfig file. */
function resolvePath(path: string | undefined, baseDir: string | undefined): string | undefined {
  if (path === undefined || path === '' || baseDir === undefined || isAbsolute(path)) return path === '' ? undefined : path;
  return join(baseDir, path);
}

/** The kubeconfig's YAML as a mapping of kind Config (or no kind). */
function configRoot(content: string, fail: (problem: string) => never): JsonObject {
  if (content.trim() === '') fail('it is empty');
  const lineCounter = new LineCounter();
  const document = parseDocument(content, { prettyErrors: false, lineCounter });
  const [firstError] = document.errors;
  if (firstError !== undefined) {
    // Code and position only: the parser's message quotes the line, which may hold a token.
    const { line, col } = lineCounter.linePos(firstError.pos[0]);
    fail(`it is not valid YAML (${firstError.code} at line ${line}, column ${col})`);
  }
  const root: unknown = document.toJS();
  if (!isObject(root)) return fail(`it is not a kubeconfig: expected a YAML mapping, got ${Array.isArray(root) ? 'a list' : typeof root}`);
  if (root.kind !== undefined && root.kind !== 'Config') {
    fail(`it is not a kubeconfig: its kind is ${JSON.stringify(root.kind)}, not "Config"`);
  }
  return root;
}

const findNamed = (list: Named[], name: string): Named | undefined => list.find((item) => item.name === name);

/** The context asked for, else the current one; it must be defined. */
function chosenContext(root: JsonObject, contexts: Named[], asked: string | undefined, fail: (problem: string) => never): Named {
  let contextName = scalarText(root['current-context']);
  if (asked !== undefined) {
    if (findNamed(contexts, asked) === undefined) fail(`the requested context "${asked}" is not defined (${names(contexts)})`);
    contextName = asked;
  }
  if (contextName === undefined || contextName === '') return fail(`it has no current-context (contexts ${names(contexts)})`);
  return findNamed(contexts, contextName) ?? fail(`current-context "${contextName}" is not defined (contexts ${names(contexts)})`);
}

/** The context's user, checked; undefined for a context naming none (anonymous access), but a named user must exist. */
function contextUser(context: Named, users: Named[], baseDir: string | undefined, clientNodeOnly: string[], fail: (problem: string) => never): KubeconfigUser | undefined {
  const userName = scalarText(context.body.user) ?? '';
  if (userName === '') return undefined;
  const entry = findNamed(users, userName) ?? fail(`context "${context.name}" names user "${userName}", which is not defined (users ${names(users)})`);
  const body = entry.body;
  const unsupported = UNSUPPORTED_USER_FIELDS.filter((field) => body[field] !== undefined);
  if (unsupported.length > 0) {
    fail(`user "${entry.name}" sets ${unsupported.join(', ')}, which is not supported: the functions would call the API server as another identity than the one asked for`);
  }
  clientNodeOnly.push(...CLIENT_NODE_USER_FIELDS.filter((field) => body[field] !== undefined).map((field) => `users[].user.${field}`));
  return checkUser(entry, baseDir, fail);
}

/**
 * Parses kubeconfig YAML and checks that its current context leads to a
 * cluster with an http(s) server and to a defined user whose credentials
 * some client here can use. Files it references are not read here;
 * {@link readKubeconfig} checks them.
 * @param origin names the source in errors (`file /x`, `environment variable Y`).
 * @throws KubeconfigError
 */
export function checkKubeconfig(content: string, origin: string, options: CheckKubeconfigOptions = {}): CheckedKubeconfig {
  const fail = (problem: string): never => {
    throw new KubeconfigError(origin, problem);
  };
  const root = configRoot(content, fail);
  const clusters = entries(root, 'clusters', fail);
  const users = entries(root, 'users', fail);
  const contexts = entries(root, 'contexts', fail);
  const context = chosenContext(root, contexts, options.context, fail);
  const clusterName = scalarText(context.body.cluster) ?? '';
  const clusterEntry = findNamed(clusters, clusterName);
  if (clusterEntry === undefined) {
    return fail(`context "${context.name}" names cluster "${clusterName}", which is not defined (clusters ${names(clusters)})`);
  }
  const cluster = checkCluster(clusterEntry, options.baseDir, fail);
  const clientNodeOnly = CLIENT_NODE_CLUSTER_FIELDS.filter((field) => clusterEntry.body[field] !== undefined).map((field) => `clusters[].cluster.${field}`);
  const user = contextUser(context, users, options.baseDir, clientNodeOnly, fail);
  return { origin, content, baseDir: options.baseDir, context: context.name, cluster, user, clientNodeOnly };
}

/** A field that must be a string when present. */
function stringField(body: JsonObject, field: string, where: string, fail: (problem: string) => never): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') return fail(`${where} has a ${field} that is not a string`);
  return value === '' ? undefined : value;
}

function checkCluster({ name, body }: Named, baseDir: string | undefined, fail: (problem: string) => never): KubeconfigCluster {
  const where = `cluster "${name}"`;
  const serverText = scalarText(body.server) ?? '';
  let server: URL | undefined;
  try {
    server = new URL(serverText);
  } catch {
    server = undefined;
  }
  if (server === undefined || (server.protocol !== 'https:' && server.protocol !== 'http:')) {
    return fail(`${where} has server "${serverText}", which is not an http(s) URL`);
  }
  // Read as client-node reads it: only a YAML true skips verification.
  const insecureSkipTlsVerify = body['insecure-skip-tls-verify'] === true;
  if (server.protocol === 'http:' && !insecureSkipTlsVerify) {
    fail(`${where} has a plain http:// server, which is used only with insecure-skip-tls-verify: true`);
  }
  const caData = stringField(body, 'certificate-authority-data', where, fail);
  const caFile = resolvePath(stringField(body, 'certificate-authority', where, fail), baseDir);
  const tlsServerName = stringField(body, 'tls-server-name', where, fail);
  return {
    name,
    server: serverText.replace(/\/$/, ''),
    insecureSkipTlsVerify,
    ...(caData !== undefined ? { caData } : {}),
    ...(caFile !== undefined ? { caFile } : {}),
    ...(tlsServerName !== undefined ? { tlsServerName } : {}),
  };
}

function checkUser({ name, body }: Named, baseDir: string | undefined, fail: (problem: string) => never): KubeconfigUser {
  const where = `user "${name}"`;
  const token = stringField(body, 'token', where, fail);
  const tokenFile = resolvePath(stringField(body, 'token-file', where, fail), baseDir);
  const certData = stringField(body, 'client-certificate-data', where, fail);
  const keyData = stringField(body, 'client-key-data', where, fail);
  const certFile = resolvePath(stringField(body, 'client-certificate', where, fail), baseDir);
  const keyFile = resolvePath(stringField(body, 'client-key', where, fail), baseDir);
  // Either half alone would fail every TLS handshake; say which half is missing now.
  const hasCert = certData !== undefined || certFile !== undefined;
  const hasKey = keyData !== undefined || keyFile !== undefined;
  if (hasCert !== hasKey) {
    fail(`${where} has a client ${hasCert ? 'certificate but no client key' : 'key but no client certificate'} (client-certificate(-data) and client-key(-data) go together)`);
  }
  return {
    name,
    ...(token !== undefined ? { token } : {}),
    ...(tokenFile !== undefined ? { tokenFile } : {}),
    ...(certData !== undefined ? { certData } : {}),
    ...(keyData !== undefined ? { keyData } : {}),
    ...(certFile !== undefined ? { certFile } : {}),
    ...(keyFile !== undefined ? { keyFile } : {}),
  };
}

/** The files a checked kubeconfig references, each with the name errors give it. */
function referencedFiles(kubeconfig: CheckedKubeconfig): [string, string][] {
  const files: [string, string | undefined][] = [
    ['certificate-authority file', kubeconfig.cluster.caFile],
    ['client-certificate file', kubeconfig.user?.certFile],
    ['client-key file', kubeconfig.user?.keyFile],
    ['token-file', kubeconfig.user?.tokenFile],
  ];
  return files.filter((entry): entry is [string, string] => entry[1] !== undefined);
}

/** Reads one referenced file; a failure is a KubeconfigError naming the field and the path. */
async function readReferenced(kubeconfig: CheckedKubeconfig, label: string, path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new KubeconfigError(kubeconfig.origin, `its ${label} ${path} cannot be read (${errorMessage(error)})`, { cause: error });
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
 * Reads and checks a kubeconfig (see {@link checkKubeconfig}), and checks
 * that the files its current context references can be read, so that a
 * missing CA or key stops the cold start rather than the first request.
 * @throws KubeconfigError naming the source and what is wrong.
 */
export async function readKubeconfig(source: KubeconfigSource, options: KubeconfigOptions = {}): Promise<CheckedKubeconfig> {
  const origin = describeKubeconfigSource(source);
  const content = await readSource(source, origin);
  const kubeconfig = checkKubeconfig(content, origin, 'file' in source ? { ...options, baseDir: dirname(source.file) } : options);
  for (const [label, path] of referencedFiles(kubeconfig)) {
    try {
      await access(path, constants.R_OK);
    } catch (error) {
      throw new KubeconfigError(origin, `its ${label} ${path} cannot be read (${errorMessage(error)})`, { cause: error });
    }
  }
  return kubeconfig;
}

/**
 * How often a token-file is read again. Projected service account tokens are
 * rotated well before they expire (at 80% of an hour by default); client-go
 * re-reads its token file every minute, and so does this.
 */
export const TOKEN_FILE_REFRESH_MS = 60_000;

/**
 * The token from a token-file, read again once {@link TOKEN_FILE_REFRESH_MS}
 * has passed. A failed re-read keeps the last token: a file being replaced
 * may be briefly absent, and the API server is the judge of a stale token.
 */
function tokenFileProvider(path: string, first: string, now: () => number): () => Promise<string> {
  let token = first;
  let readAt = now();
  let reading: Promise<string> | undefined;
  return () => {
    if (now() - readAt < TOKEN_FILE_REFRESH_MS) return Promise.resolve(token);
    reading ??= readFile(path, 'utf8')
      .then(
        (text) => {
          if (text.trim() !== '') token = text.trim();
          return token;
        },
        () => token,
      )
      .finally(() => {
        readAt = now();
        reading = undefined;
      });
    return reading;
  };
}

/**
 * The settings of the project's HTTPS client for a checked kubeconfig that
 * needs nothing of client-node ({@link CheckedKubeconfig.clientNodeOnly} is
 * empty): the CA, client certificate and key read now, the bearer token from
 * `token`, or from `token-file`, read now and again every minute.
 * @param now monotonic milliseconds; tests move it to see the token-file read again.
 * @throws KubeconfigError when a referenced file cannot be read or the token-file is empty.
 */
export async function kubeconfigHttpsSettings(kubeconfig: CheckedKubeconfig, now: () => number = () => performance.now()): Promise<KubeHttpsSettings> {
  const { cluster, user } = kubeconfig;
  if (kubeconfig.clientNodeOnly.length > 0) {
    throw new KubeconfigError(kubeconfig.origin, `it needs client-node (${kubeconfig.clientNodeOnly.join(', ')})`);
  }
  const material = async (label: string, file: string | undefined, data: string | undefined): Promise<Buffer | undefined> => {
    if (file !== undefined) return readReferenced(kubeconfig, label, file);
    return data === undefined ? undefined : Buffer.from(data, 'base64');
  };
  const ca = await material('certificate-authority file', cluster.caFile, cluster.caData);
  const cert = await material('client-certificate file', user?.certFile, user?.certData);
  const key = await material('client-key file', user?.keyFile, user?.keyData);

  let token: (() => Promise<string>) | undefined;
  if (user?.token !== undefined) {
    const value = user.token;
    token = () => Promise.resolve(value);
  } else if (user?.tokenFile !== undefined) {
    const first = (await readReferenced(kubeconfig, 'token-file', user.tokenFile)).toString('utf8').trim();
    if (first === '') throw new KubeconfigError(kubeconfig.origin, `its token-file ${user.tokenFile} is empty`);
    token = tokenFileProvider(user.tokenFile, first, now);
  }
  return {
    server: cluster.server,
    rejectUnauthorized: !cluster.insecureSkipTlsVerify,
    ...(ca !== undefined ? { ca } : {}),
    ...(cert !== undefined ? { cert } : {}),
    ...(key !== undefined ? { key } : {}),
    ...(cluster.tlsServerName !== undefined ? { servername: cluster.tlsServerName } : {}),
    ...(token !== undefined ? { token } : {}),
  };
}
