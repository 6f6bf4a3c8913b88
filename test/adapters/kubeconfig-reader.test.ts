/**
 * The kubeconfig reader the webhooks use without client-node: which fields
 * of the current context it reads, which ones it leaves to client-node,
 * which ones it refuses, and the HTTPS client settings it makes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import {
  checkKubeconfig,
  KubeconfigError,
  kubeconfigHttpsSettings,
  readKubeconfig,
  TOKEN_FILE_REFRESH_MS,
  type CheckedKubeconfig,
} from '../../lib/adapters/kubeconfig-reader.ts';

const SECRET = 'reader-secret-token';
const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A kubeconfig with one context whose cluster and user carry the given fields. */
/** `null` for a context without a user. */
function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown> | null = { token: SECRET }): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://api.example:6443', ...cluster } }],
    users: user === null ? [] : [{ name: 'fn', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', ...(user === null ? {} : { user: 'fn' }) } }],
    'current-context': 'x',
  });
}

function problem(content: string, options = {}): string {
  let thrown: unknown;
  try {
    checkKubeconfig(content, 'test', options);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(KubeconfigError);
  const message = (thrown as Error).message;
  expect(message).not.toContain(SECRET);
  return message.replace(/^kubeconfig from test: /, '');
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeconfig-reader-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('reading the current context of a kubeconfig', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>, Partial<CheckedKubeconfig>]>([
    ['a bearer token', {}, { token: SECRET }, { user: { name: 'fn', token: SECRET } }],
    ['a token-file, resolved against the base directory', {}, { 'token-file': 'token' }, { user: { name: 'fn', tokenFile: '/conf/token' } }],
    ['certificate-authority-data', { 'certificate-authority-data': b64('CA') }, {}, { cluster: { name: 'c', server: 'https://api.example:6443', caData: b64('CA'), insecureSkipTlsVerify: false } }],
    ['a certificate-authority file', { 'certificate-authority': 'ca.crt' }, {}, { cluster: { name: 'c', server: 'https://api.example:6443', caFile: '/conf/ca.crt', insecureSkipTlsVerify: false } }],
    ['an absolute file path, as it is', { 'certificate-authority': '/etc/ca.crt' }, {}, { cluster: { name: 'c', server: 'https://api.example:6443', caFile: '/etc/ca.crt', insecureSkipTlsVerify: false } }],
    ['insecure-skip-tls-verify', { 'insecure-skip-tls-verify': true }, {}, { cluster: { name: 'c', server: 'https://api.example:6443', insecureSkipTlsVerify: true } }],
    ['tls-server-name', { 'tls-server-name': 'kubernetes.default' }, {}, { cluster: { name: 'c', server: 'https://api.example:6443', tlsServerName: 'kubernetes.default', insecureSkipTlsVerify: false } }],
    ['client certificate and key data', {}, { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') }, { user: { name: 'fn', certData: b64('CERT'), keyData: b64('KEY') } }],
    ['client certificate and key files', {}, { 'client-certificate': 'tls.crt', 'client-key': '/keys/tls.key' }, { user: { name: 'fn', certFile: '/conf/tls.crt', keyFile: '/keys/tls.key' } }],
    ['a server URL with a trailing slash, dropped', { server: 'https://api.example/prefix/' }, {}, { cluster: { name: 'c', server: 'https://api.example/prefix', insecureSkipTlsVerify: false } }],
  ])('reads %s', (_name, cluster, user, expected) => {
    const checked = checkKubeconfig(kubeconfig(cluster, user), 'test', { baseDir: '/conf' });
    expect(checked).toMatchObject({ context: 'x', clientNodeOnly: [], ...expected });
  });

  it('reads a context without a user as anonymous', () => {
    expect(checkKubeconfig(kubeconfig({}, null), 'test').user).toBeUndefined();
  });

  it('uses a requested context instead of the current one', () => {
    const content = stringify({
      clusters: [
        { name: 'a', cluster: { server: 'https://a.example' } },
        { name: 'b', cluster: { server: 'https://b.example' } },
      ],
      contexts: [
        { name: 'a', context: { cluster: 'a' } },
        { name: 'b', context: { cluster: 'b' } },
      ],
      'current-context': 'a',
    });
    expect(checkKubeconfig(content, 'test', { context: 'b' })).toMatchObject({ context: 'b', cluster: { server: 'https://b.example' } });
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>, string[]]>([
    ['an exec plugin', {}, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws' } }, ['users[].user.exec']],
    ['an auth provider', {}, { 'auth-provider': { name: 'oidc', config: {} } }, ['users[].user.auth-provider']],
    ['basic auth', {}, { username: 'u', password: 'p' }, ['users[].user.username', 'users[].user.password']],
    ['impersonation of a user', {}, { token: SECRET, as: 'someone' }, ['users[].user.as']],
    ['a proxy', { 'proxy-url': 'http://proxy.example:3128' }, { token: SECRET }, ['clusters[].cluster.proxy-url']],
  ])('leaves %s to client-node', (_name, cluster, user, fields) => {
    expect(checkKubeconfig(kubeconfig(cluster, user), 'test').clientNodeOnly).toEqual(fields);
  });

  it('leaves alone what other contexts use', () => {
    const content = stringify({
      clusters: [{ name: 'c', cluster: { server: 'https://a.example' } }],
      users: [
        { name: 'fn', user: { token: SECRET } },
        { name: 'human', user: { exec: { command: 'aws' } } },
      ],
      contexts: [
        { name: 'x', context: { cluster: 'c', user: 'fn' } },
        { name: 'y', context: { cluster: 'c', user: 'human' } },
      ],
      'current-context': 'x',
    });
    expect(checkKubeconfig(content, 'test').clientNodeOnly).toEqual([]);
  });
});

describe('refusing a kubeconfig, naming the problem', () => {
  it.each<[string, string, string | RegExp]>([
    ['impersonated groups, which no client here sends', kubeconfig({}, { token: SECRET, 'as-groups': ['admins'] }), 'user "fn" sets as-groups, which is not supported: the functions would call the API server as another identity than the one asked for'],
    ['an impersonated uid', kubeconfig({}, { token: SECRET, as: 'x', 'as-uid': '1' }), /^user "fn" sets as-uid, which is not supported/],
    ['impersonated extras', kubeconfig({}, { token: SECRET, 'as-user-extra': { a: ['b'] } }), /^user "fn" sets as-user-extra, which is not supported/],
    ['a client certificate without its key', kubeconfig({}, { 'client-certificate-data': b64('CERT') }), 'user "fn" has a client certificate but no client key (client-certificate(-data) and client-key(-data) go together)'],
    ['a client key without its certificate', kubeconfig({}, { 'client-key': 'tls.key' }), 'user "fn" has a client key but no client certificate (client-certificate(-data) and client-key(-data) go together)'],
    ['a token that is not a string', kubeconfig({}, { token: { value: SECRET } }), 'user "fn" has a token that is not a string'],
    ['a CA that is not a string', kubeconfig({ 'certificate-authority-data': ['x'] }), 'cluster "c" has a certificate-authority-data that is not a string'],
    ['a cluster entry that is not a mapping', stringify({ clusters: ['c'], 'current-context': 'x' }), 'clusters[0] is not a mapping'],
    ['a cluster without a name', stringify({ clusters: [{ cluster: { server: 'https://a' } }] }), 'clusters[0].name is missing'],
    ['a cluster entry without its cluster', stringify({ clusters: [{ name: 'c' }] }), 'clusters[0].cluster is missing'],
    ['a user without a name', stringify({ users: [{ user: { token: SECRET } }] }), 'users[0].name is missing'],
    ['a context without its cluster', stringify({ contexts: [{ name: 'x', context: { user: 'fn' } }] }), 'contexts[0].context.cluster is missing'],
    ['an ftp server', kubeconfig({ server: 'ftp://api.example' }), 'cluster "c" has server "ftp://api.example", which is not an http(s) URL'],
    ['plain http without skipping verification', kubeconfig({ server: 'http://127.0.0.1:8001' }), 'cluster "c" has a plain http:// server, which is used only with insecure-skip-tls-verify: true'],
    ['no current-context', stringify({ contexts: [{ name: 'x', context: { cluster: 'c' } }] }), 'it has no current-context (contexts defined: "x")'],
    ['a context naming a missing cluster', stringify({ contexts: [{ name: 'x', context: { cluster: 'gone' } }], 'current-context': 'x' }), 'context "x" names cluster "gone", which is not defined (clusters none defined)'],
    ['YAML that is not a mapping', '[1, 2]', 'it is not a kubeconfig: expected a YAML mapping, got a list'],
  ])('refuses %s', (_name, content, expected) => {
    const message = problem(content);
    if (typeof expected === 'string') expect(message).toBe(expected);
    else expect(message).toMatch(expected);
  });

  it('refuses a requested context that is not defined', () => {
    expect(problem(kubeconfig({}), { context: 'other' })).toBe('the requested context "other" is not defined (defined: "x")');
  });

  it.each([
    ['certificate-authority file', { 'certificate-authority': 'missing-ca.crt' }, {}],
    ['client-certificate file', {}, { 'client-certificate': 'missing.crt', 'client-key': 'missing.key' }],
    ['token-file', {}, { 'token-file': 'missing-token' }],
  ])('refuses a %s that cannot be read, at cold start', async (label, cluster, user) => {
    const file = join(dir, `refs-${label.replace(/\W/g, '-')}.yaml`);
    await writeFile(file, kubeconfig(cluster, user));
    const error = await readKubeconfig({ file }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeconfigError);
    expect((error as Error).message).toMatch(new RegExp(`^kubeconfig from file ${file}: its ${label} ${dir}/missing[^ ]* cannot be read \\(ENOENT`));
  });
});

describe('the HTTPS client settings for a kubeconfig', () => {
  it('decodes the data fields and sends the token', async () => {
    const settings = await kubeconfigHttpsSettings(
      checkKubeconfig(kubeconfig({ 'certificate-authority-data': b64('CA PEM'), 'tls-server-name': 'kubernetes' }, { token: SECRET, 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') }), 'test'),
    );
    expect(settings).toMatchObject({ server: 'https://api.example:6443', rejectUnauthorized: true, servername: 'kubernetes' });
    expect([settings.ca?.toString(), settings.cert?.toString(), settings.key?.toString()]).toEqual(['CA PEM', 'CERT', 'KEY']);
    await expect(settings.token?.()).resolves.toBe(SECRET);
  });

  it('reads the files beside a kubeconfig file', async () => {
    await writeFile(join(dir, 'ca.crt'), 'CA FROM FILE');
    await writeFile(join(dir, 'tls.crt'), 'CERT FROM FILE');
    await writeFile(join(dir, 'tls.key'), 'KEY FROM FILE');
    const file = join(dir, 'files.yaml');
    await writeFile(file, kubeconfig({ 'certificate-authority': 'ca.crt', 'insecure-skip-tls-verify': false }, { 'client-certificate': 'tls.crt', 'client-key': 'tls.key' }));
    const settings = await kubeconfigHttpsSettings(await readKubeconfig({ file }));
    expect([settings.ca?.toString(), settings.cert?.toString(), settings.key?.toString()]).toEqual(['CA FROM FILE', 'CERT FROM FILE', 'KEY FROM FILE']);
    expect(settings.token).toBeUndefined();
  });

  it('turns verification off only for insecure-skip-tls-verify: true', async () => {
    const settings = await kubeconfigHttpsSettings(checkKubeconfig(kubeconfig({ server: 'http://127.0.0.1:8001', 'insecure-skip-tls-verify': true }), 'test'));
    expect(settings.rejectUnauthorized).toBe(false);
  });

  it('reads a token-file again once a minute has passed, and keeps the last token while the file is away', async () => {
    const tokenFile = join(dir, 'rotating-token');
    await writeFile(tokenFile, 'first\n');
    let now = 0;
    const settings = await kubeconfigHttpsSettings(checkKubeconfig(kubeconfig({}, { 'token-file': tokenFile }), 'test'), () => now);
    await expect(settings.token?.()).resolves.toBe('first');
    await writeFile(tokenFile, 'second\n');
    now = TOKEN_FILE_REFRESH_MS - 1;
    await expect(settings.token?.()).resolves.toBe('first');
    now = TOKEN_FILE_REFRESH_MS;
    await expect(settings.token?.()).resolves.toBe('second');
    await rm(tokenFile);
    now = 3 * TOKEN_FILE_REFRESH_MS;
    await expect(settings.token?.()).resolves.toBe('second');
  });

  it('refuses an empty token-file at cold start', async () => {
    const tokenFile = join(dir, 'empty-token');
    await writeFile(tokenFile, '\n');
    await expect(kubeconfigHttpsSettings(checkKubeconfig(kubeconfig({}, { 'token-file': tokenFile }), 'test'))).rejects.toThrow(`kubeconfig from test: its token-file ${tokenFile} is empty`);
  });

  it('refuses a kubeconfig that needs client-node', async () => {
    const checked = checkKubeconfig(kubeconfig({}, { exec: { command: 'aws' } }), 'test');
    await expect(kubeconfigHttpsSettings(checked)).rejects.toThrow('kubeconfig from test: it needs client-node (users[].user.exec)');
  });
});
