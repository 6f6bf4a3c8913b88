import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { kubeConfigConnection, loadKubeConfig, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { KubeconfigError, type KubeconfigSource } from '../../lib/adapters/kubeconfig-reader.ts';

const SECRET = 's3cr3t-token-value';

/** A valid kubeconfig with two contexts; `patch` edits the object before it is written as YAML. */
function kubeconfigYaml(patch: (config: Record<string, unknown>) => void = () => undefined): string {
  const config: Record<string, unknown> = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'prod', cluster: { server: 'https://prod.example:6443' } },
      { name: 'dev', cluster: { server: 'https://dev.example:6443/' } },
    ],
    users: [{ name: 'fn', user: { token: SECRET } }],
    contexts: [
      { name: 'prod', context: { cluster: 'prod', user: 'fn' } },
      { name: 'dev', context: { cluster: 'dev', user: 'fn' } },
    ],
    'current-context': 'prod',
  };
  patch(config);
  return stringify(config);
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeconfig-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeTemp(name: string, content: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

async function failure(source: KubeconfigSource, options = {}): Promise<KubeconfigError> {
  const error = await loadKubeConfig(source, options).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(KubeconfigError);
  const kubeconfigError = error as KubeconfigError;
  expect(kubeconfigError.name).toBe('KubeconfigError');
  // Whatever went wrong, the credentials must not end up in a log line.
  expect(kubeconfigError.message).not.toContain(SECRET);
  return kubeconfigError;
}

describe('loading a kubeconfig', () => {
  it('reads a file, using its current context', async () => {
    const path = await writeTemp('ok.yaml', kubeconfigYaml());
    const kc = await loadKubeConfig({ file: path });
    expect(kc.getCurrentContext()).toBe('prod');
    expect(kc.getCurrentCluster()?.server).toBe('https://prod.example:6443');
    expect(kc.getCurrentUser()?.token).toBe(SECRET);
  });

  it('resolves files the kubeconfig names relative to its own directory', async () => {
    await writeTemp('ca.crt', 'not really a certificate, but readable');
    const path = await writeTemp(
      'relative-ca.yaml',
      kubeconfigYaml((config) => {
        config.clusters = [{ name: 'prod', cluster: { server: 'https://prod.example', 'certificate-authority': 'ca.crt' } }];
      }),
    );
    const kc = await loadKubeConfig({ file: path });
    expect(kc.getCurrentCluster()?.caFile).toBe(join(dir, 'ca.crt'));
  });

  it('reads YAML content from an environment variable', async () => {
    const kc = await loadKubeConfig({ envVar: 'KUBECONFIG_CONTENT', env: { KUBECONFIG_CONTENT: kubeconfigYaml() } });
    expect(kc.getCurrentCluster()?.server).toBe('https://prod.example:6443');
  });

  it('accepts JSON content, which is YAML too', async () => {
    const json = JSON.stringify({
      clusters: [{ name: 'c', cluster: { server: 'https://json.example' } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    });
    const kc = await loadKubeConfig({ envVar: 'K', env: { K: json } });
    expect(kc.getCurrentCluster()?.server).toBe('https://json.example');
  });

  it('reads content from an async loader', async () => {
    const kc = await loadKubeConfig({ load: () => Promise.resolve(kubeconfigYaml()), description: 'secret functions/kubeconfig' });
    expect(kc.getCurrentUser()?.name).toBe('fn');
  });

  it('uses a requested context instead of the current one', async () => {
    const kc = await loadKubeConfig({ envVar: 'K', env: { K: kubeconfigYaml() } }, { context: 'dev' });
    // client-node drops the trailing slash, so paths join cleanly.
    expect(kc.getCurrentCluster()?.server).toBe('https://dev.example:6443');
  });

  it('also accepts a context without a user (anonymous access)', () => {
    const kc = parseKubeConfig(
      kubeconfigYaml((config) => {
        config.contexts = [{ name: 'prod', context: { cluster: 'prod' } }];
      }),
      'test',
    );
    expect(kc.getCurrentUser()).toBeNull();
  });
});

describe('reporting what is wrong with a kubeconfig', () => {
  it('names the file that cannot be read and why', async () => {
    const path = join(dir, 'missing.yaml');
    const error = await failure({ file: path });
    expect(error.origin).toBe(`file ${path}`);
    expect(error.message).toMatch(new RegExp(`^kubeconfig from file ${path}: the file cannot be read \\(ENOENT`));
    expect(error.cause).toMatchObject({ code: 'ENOENT' });
  });

  it('names a directory given as the file', async () => {
    const error = await failure({ file: dir });
    expect(error.message).toMatch(/the file cannot be read \(EISDIR/);
  });

  it('names an environment variable that is not set', async () => {
    const error = await failure({ envVar: 'KUBECONFIG_CONTENT', env: {} });
    expect(error.message).toBe('kubeconfig from environment variable KUBECONFIG_CONTENT: the variable is not set');
  });

  it('names a loader that failed', async () => {
    const error = await failure({ load: () => Promise.reject(new Error('AccessDenied')), description: 'secret s' });
    expect(error.message).toBe('kubeconfig from secret s: loading it failed (AccessDenied)');
  });

  it('names a loader that returned something other than text', async () => {
    const load = (() => Promise.resolve(42)) as unknown as () => Promise<string>;
    const error = await failure({ load, description: 'secret s' });
    expect(error.message).toBe('kubeconfig from secret s: the loader returned number, not a string');
  });

  it.each([
    { problem: 'empty content', content: '  \n', message: 'it is empty' },
    {
      problem: 'content that is not YAML, without quoting it',
      content: `users: [{name: u, user: {token: ${SECRET}}}\nclusters: [`,
      message: /^it is not valid YAML \([A-Z_]+ at line \d+, column \d+\)$/,
    },
    { problem: 'a bare string', content: 'hello', message: 'it is not a kubeconfig: expected a YAML mapping, got string' },
    { problem: 'a list', content: '- a\n- b\n', message: 'it is not a kubeconfig: expected a YAML mapping, got a list' },
    {
      problem: 'another kind of object',
      content: 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n',
      message: 'it is not a kubeconfig: its kind is "Pod", not "Config"',
    },
    {
      problem: 'no current-context',
      content: kubeconfigYaml((config) => {
        delete config['current-context'];
      }),
      message: 'it has no current-context (contexts defined: "prod", "dev")',
    },
    {
      problem: 'no contexts at all',
      content: kubeconfigYaml((config) => {
        delete config['current-context'];
        delete config.contexts;
      }),
      message: 'it has no current-context (contexts none defined)',
    },
    {
      problem: 'a current-context that is not defined',
      content: kubeconfigYaml((config) => {
        config['current-context'] = 'staging';
      }),
      message: 'current-context "staging" is not defined (contexts defined: "prod", "dev")',
    },
    {
      problem: 'a cluster without a server',
      content: kubeconfigYaml((config) => {
        config.clusters = [{ name: 'prod', cluster: { 'insecure-skip-tls-verify': true } }];
      }),
      message: 'clusters[0].cluster.server is missing',
    },
    {
      problem: 'a context naming an undefined cluster',
      content: kubeconfigYaml((config) => {
        config.contexts = [{ name: 'prod', context: { cluster: 'ghost', user: 'fn' } }];
      }),
      message: 'context "prod" names cluster "ghost", which is not defined (clusters defined: "prod", "dev")',
    },
    {
      problem: 'a server that is not an http(s) URL',
      content: kubeconfigYaml((config) => {
        config.clusters = [{ name: 'prod', cluster: { server: 'prod.example:6443' } }];
      }),
      message: 'cluster "prod" has server "prod.example:6443", which is not an http(s) URL',
    },
    {
      problem: 'a plain http server without insecure-skip-tls-verify',
      content: kubeconfigYaml((config) => {
        config.clusters = [{ name: 'prod', cluster: { server: 'http://127.0.0.1:8001' } }];
      }),
      message: 'cluster "prod" has a plain http:// server, which is used only with insecure-skip-tls-verify: true',
    },
    {
      problem: 'a context naming an undefined user',
      content: kubeconfigYaml((config) => {
        config.contexts = [{ name: 'prod', context: { cluster: 'prod', user: 'ghost' } }];
      }),
      message: 'context "prod" names user "ghost", which is not defined (users defined: "fn")',
    },
  ])('reports $problem', async ({ content, message }) => {
    const error = await failure({ envVar: 'KUBECONFIG_CONTENT', env: { KUBECONFIG_CONTENT: content } });
    const prefix = 'kubeconfig from environment variable KUBECONFIG_CONTENT: ';
    expect(error.message.startsWith(prefix)).toBe(true);
    const problem = error.message.slice(prefix.length);
    if (typeof message === 'string') expect(problem).toBe(message);
    else expect(problem).toMatch(message);
  });

  it('reports a requested context that is not defined', async () => {
    const error = await failure({ envVar: 'K', env: { K: kubeconfigYaml() } }, { context: 'staging' });
    expect(error.message).toBe('kubeconfig from environment variable K: the requested context "staging" is not defined (defined: "prod", "dev")');
  });

  it.each([
    { field: 'certificate-authority', cluster: { 'certificate-authority': 'nope/ca.crt' }, user: {} },
    { field: 'client-certificate', cluster: {}, user: { 'client-certificate': 'nope/client.crt', 'client-key': 'nope/client.key' } },
  ])('reports a $field file that cannot be read', async ({ field, cluster, user }) => {
    const path = await writeTemp(
      `refs-${field}.yaml`,
      kubeconfigYaml((config) => {
        config.clusters = [{ name: 'prod', cluster: { server: 'https://prod.example', ...cluster } }];
        config.users = [{ name: 'fn', user }];
      }),
    );
    const error = await failure({ file: path });
    expect(error.message).toContain(`its ${field} file ${join(dir, 'nope')}`);
    expect(error.message).toMatch(/cannot be read \(ENOENT/);
  });

  it('reports a token-file that cannot be read', async () => {
    const error = await failure({
      envVar: 'K',
      env: {
        K: kubeconfigYaml((config) => {
          config.users = [{ name: 'fn', user: { 'token-file': join(dir, 'no-token') } }];
        }),
      },
    });
    expect(error.message).toMatch(/ENOENT.*no-token/);
  });
});

describe('kubeConfigConnection', () => {
  it("connects to the current context's server, with the user's credentials as headers", async () => {
    const connection = kubeConfigConnection(parseKubeConfig(kubeconfigYaml(), 'test'));
    expect(connection.server).toBe('https://prod.example:6443');
    const prepared = await connection.prepare();
    expect(prepared.headers).toEqual({ Authorization: `Bearer ${SECRET}` });
    connection.close();
  });
});
