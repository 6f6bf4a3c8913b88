import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATE_USAGE, parseMigrateOptions, runMigrate } from '../../functions/migrate/cli.ts';
import { migrationSources } from '../../functions/migrate/compose.ts';

let dir: string;
let closedPort: number;

/** A loopback port nothing listens on: taken, then released. */
async function freePort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => { resolve(); }));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

const kubeconfig = (server: string) => `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "${server}", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: abc}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`;

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runMigrate(argv, { out: (t) => (out += t), err: (t) => (err += t) }, (file) => migrationSources(file, {}, () => undefined));
  return { code, out, err };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'migrate-cli-'));
  closedPort = await freePort();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('npm run migrate', () => {
  it.each<[string[], string]>([
    [[], 'give a command: check'],
    [['frob'], 'unknown command frob (the commands are check, fence)'],
    [['check', '--watch'], 'unknown option --watch'],
    [['check', '--kubeconfig'], '--kubeconfig needs a value'],
    [['check', '--kubeconfig', 'a', '--kubeconfig=b'], '--kubeconfig given twice'],
    [['check', '--kruise-namespace', 'Kruise_System'], '--kruise-namespace must be a namespace name'],
  ])('%j is a usage error: %s', (argv, message) => {
    expect(() => parseMigrateOptions(argv)).toThrow(message);
  });

  it('reads the namespaces it is given', () => {
    expect(parseMigrateOptions(['check', '--kruise-namespace=kruise', '--revision-namespace', 'revs', '--kubeconfig', 'k.yaml'])).toEqual({ kubeconfig: 'k.yaml', kruiseNamespace: 'kruise', revisionNamespace: 'revs' });
    expect(parseMigrateOptions(['check', '-h'])).toBe('help');
  });

  it('bad usage exits 2 with the problem and the usage on standard error', async () => {
    const result = await run(['check', '--bogus']);
    expect(result).toEqual({ code: 2, out: '', err: `migrate: unknown option --bogus\n${MIGRATE_USAGE}\n` });
  });

  it('a kubeconfig that is not YAML exits 2 naming the file and the problem', async () => {
    const file = join(dir, 'broken.yaml');
    await writeFile(file, 'apiVersion: v1\nclusters: [oops\n');
    const result = await run(['check', '--kubeconfig', file]);
    expect(result.code).toBe(2);
    expect(result.out).toBe('');
    expect(result.err).toMatch(new RegExp(`^migrate: kubeconfig from file ${file}: it is not valid YAML`));
  });

  it('a kubeconfig file that does not exist exits 2 naming it', async () => {
    const result = await run(['check', '--kubeconfig', join(dir, 'absent.yaml')]);
    expect(result.code).toBe(2);
    expect(result.err).toContain(`kubeconfig from file ${join(dir, 'absent.yaml')}: the file cannot be read`);
  });

  it('an API server nobody answers on exits 2 naming the server and the read that failed', async () => {
    const file = join(dir, 'unreachable.yaml');
    const server = `https://127.0.0.1:${closedPort}`;
    await writeFile(file, kubeconfig(server));
    const result = await run(['check', '--kubeconfig', file]);
    expect(result.code).toBe(2);
    expect(result.out).toBe('');
    expect(result.err).toMatch(new RegExp(`^migrate: cannot reach the API server at ${server}: get .*ECONNREFUSED`));
    expect(result.err.trim().split('\n')).toHaveLength(1);
  }, 30_000);
});
