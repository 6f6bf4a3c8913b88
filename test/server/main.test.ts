/**
 * `npm start` as a user runs it, in a real process. Serving a real cluster is
 * covered by the end-to-end tests; here, the ways it refuses to start.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SECRET } from '../../testkit/reviews.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npm start -- <args>` with a caller secret set, so that nothing is generated into the project. */
function npmStart(args: readonly string[], extraEnv: Record<string, string> = {}): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['--silent', 'start', '--', ...args], {
      cwd: projectRoot,
      env: { ...process.env, WEBHOOK_SECRET: SECRET, WEBHOOK_SECRET_ARN: '', ALLOW_UNAUTHENTICATED_CALLERS: '', ALLOWED_CALLER_CIDRS: '', ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

describe('npm start', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sidecarset-main-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('exits non-zero with one line naming a --kubeconfig file that does not exist', async () => {
    const missing = join(dir, 'no-such-kubeconfig.yaml');
    const run = await npmStart(['--kubeconfig', missing, '--tls-dir', join(dir, 'tls'), '--port', '0']);
    expect(run.code).not.toBe(0);
    expect(run.code).not.toBeNull();
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(missing);
    expect(lines[0]).toMatch(/^server: kubeconfig from file .*: the file cannot be read \(ENOENT/);
    expect(run.stdout).toBe('');
    // It stopped before generating a certificate for a server it will not run.
    await expect(readdir(join(dir, 'tls'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('exits non-zero with one line naming a bad ALLOWED_CALLER_CIDRS entry', async () => {
    const run = await npmStart(['--kubeconfig', join(dir, 'no-such-kubeconfig.yaml'), '--tls-dir', join(dir, 'tls-cidr'), '--port', '0'], { ALLOWED_CALLER_CIDRS: '127.0.0.1,localhost' });
    expect(run.code).not.toBe(0);
    expect(run.stderr.trimEnd()).toBe('server: ALLOWED_CALLER_CIDRS: "localhost" is not an IPv4 or IPv6 address or CIDR block (e.g. 203.0.113.7 or 198.51.100.0/24)');
  });

  it('refuses a predictable secret kept in the TLS directory, naming the file and how to make a good one', async () => {
    const tls = join(dir, 'tls-weak');
    await mkdir(tls, { recursive: true });
    await writeFile(join(tls, 'webhook-secret'), `${'abc'.repeat(15)}\n`);
    const run = await npmStart(['--kubeconfig', join(dir, 'no-such-kubeconfig.yaml'), '--tls-dir', tls, '--port', '0'], { WEBHOOK_SECRET: '' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`server: secret file ${join(tls, 'webhook-secret')} (current) is too predictable`);
    expect(run.stderr).toContain('openssl rand -base64 32');
    expect(run.stderr).not.toContain('abcabc');
  });

  it('refuses --test-kubelet with a cluster of its own, in one line: a real cluster has real kubelets', async () => {
    const run = await npmStart(['--kubeconfig', join(dir, 'no-such-kubeconfig.yaml'), '--tls-dir', join(dir, 'tls-kubelet'), '--port', '0', '--test-kubelet=2000']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'server: --test-kubelet runs only with the embedded cluster, and --kubeconfig names a cluster of its own: a real cluster has real kubelets\n',
    );
    expect(run.stdout).toBe('');
    await expect(readdir(join(dir, 'tls-kubelet'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it.each([['--bogus'], ['--port', '8443', '--verbose'], ['--port']])('exits 2 with the usage for %j', async (...args) => {
    const run = await npmStart(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('usage: npm start -- [--port N] [--kubeconfig FILE [--reconcile]]');
    expect(run.stdout).toBe('');
  });

  it('refuses --reconcile without --kubeconfig, before starting anything: the embedded cluster is always reconciled', async () => {
    const run = await npmStart(['--reconcile', '--port', '0']);
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe('--reconcile goes with --kubeconfig FILE (the embedded cluster is always reconciled)');
  });

  it('names the unknown option', async () => {
    const run = await npmStart(['--bogus']);
    expect(run.stderr.split('\n')[0]).toBe('unknown option --bogus');
  });
});
