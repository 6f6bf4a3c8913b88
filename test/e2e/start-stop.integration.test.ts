/**
 * `npm start` (the real package script, through npm) stops cleanly and
 * leaves nothing behind however its parent goes away: SIGTERM, SIGINT or
 * SIGHUP sent to the npm process (what IDE stop buttons, process managers
 * and CI send), or npm killed outright. And a second `npm start` on a port in
 * use fails at once, naming the port and what to do. Each case boots an
 * embedded cluster (about 10-20 s), so there is one boot per way of stopping.
 */
import { freePort } from '../../testkit/free-port.ts';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { SERVING_FILE } from '../../functions/server/serving-file.ts';
import { CA_FILE } from '../../functions/server/tls.ts';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { projectCopy } from '../../testkit/project-copy.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Everything must be gone this long after the signal; a stop takes a few seconds (10x margin and more). */
const GONE_WITHIN_MS = 60_000;

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => {
      resolve(false);
    });
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => {
      resolve(true);
    }));
  });
}

/** Whether a process is alive (a zombie, exited but not reaped by whoever adopted it, is not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The pids whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((p) => {
      try {
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    });
}

async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} not within ${timeoutMs} ms. Output:\n${output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface Started {
  npm: ChildProcess;
  output: () => string;
  /** The server (node), etcd and kube-apiserver. */
  pids: { node: number; etcd: number; apiServer: number };
  kubeconfig: string;
}

function npmStart(dir: string, port: number): { npm: ChildProcess; output: () => string } {
  const env: NodeJS.ProcessEnv = { ...process.env, STATUS_SYNC_INTERVAL_MS: '0' };
  for (const k of ['KUBECONFIG', 'KUBECONFIG_CONTENT', 'KUBECONFIG_SECRET_ARN', 'EKS_CLUSTER_NAME', 'WEBHOOK_SECRET', 'WEBHOOK_SECRET_ARN']) Reflect.deleteProperty(env, k);
  const npm = spawn('npm', ['start', '--', '--port', String(port)], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  npm.stdout.on('data', (d: Buffer) => (text += d.toString()));
  npm.stderr.on('data', (d: Buffer) => (text += d.toString()));
  return { npm, output: () => text };
}

async function boot(dir: string, port: number): Promise<Started> {
  const { npm, output } = npmStart(dir, port);
  await until('npm start ready', () => output().includes('Press Ctrl-C to stop') || npm.exitCode !== null, 180_000, output);
  if (!output().includes('Press Ctrl-C to stop')) throw new Error(`npm start did not come up:\n${output()}`);
  const [node, ...more] = childrenOf(npm.pid ?? -1);
  expect(more).toEqual([]);
  const etcd = Number(/"etcdPid":(\d+)/.exec(output())?.[1]);
  const apiServer = Number(/"apiServerPid":(\d+)/.exec(output())?.[1]);
  const kubeconfig = join(dir, '.cache', 'local-cluster', 'kubeconfig');
  return { npm, output, pids: { node: node ?? -1, etcd, apiServer }, kubeconfig };
}

/** Nothing of the server is left: no process, the port free, the kubeconfig gone. */
async function expectAllGone(started: Started, port: number): Promise<void> {
  const { pids, output } = started;
  await until('the server, etcd and kube-apiserver gone', () => !alive(pids.node) && !alive(pids.etcd) && !alive(pids.apiServer), GONE_WITHIN_MS, output);
  await until(`port ${port} free`, () => portIsFree(port), GONE_WITHIN_MS, output);
  expect(existsSync(started.kubeconfig)).toBe(false);
}

describeWithControlPlane('npm start stops and cleans up however its parent goes away', () => {
  let dir: string;
  const running: Started[] = [];
  beforeAll(async () => {
    dir = await projectCopy(projectRoot, 'npm-start-stop-');
  });
  afterAll(async () => {
    for (const s of running) for (const pid of Object.values(s.pids)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it.each<[NodeJS.Signals]>([['SIGTERM'], ['SIGINT'], ['SIGHUP'], ['SIGKILL']])('%s to the npm process', async (signal) => {
    const port = await freePort();
    const started = await boot(dir, port);
    running.push(started);
    expect(Object.values(started.pids).every((pid) => pid > 0 && alive(pid))).toBe(true);
    expect(existsSync(started.kubeconfig)).toBe(true);
    if (signal === 'SIGINT') {
      // The CA and secret of the embedded start are where `npm run manifests -- --local` looks.
      // `npm run -s manifests -- --local` in that directory, by the real path: main.ts runs only as the main module, which a symlink is not.
      // No --port: the running server's own (not the default 8443) is rendered.
      const manifests = spawnSync(process.execPath, [join(projectRoot, 'functions/render-manifests/main.ts'), '--local', '--only', 'webhooks'], { cwd: dir, encoding: 'utf8' });
      expect({ code: manifests.status, stderr: manifests.stderr }).toEqual({ code: 0, stderr: '' });
      expect(manifests.stdout).toContain('kind: MutatingWebhookConfiguration');
      const ca = Buffer.from(await readFile(join(dir, '.cache', 'local-server', CA_FILE))).toString('base64');
      const webhooks = parseAllDocuments(manifests.stdout).map((d) => d.toJS() as { webhooks?: { clientConfig: { url: string; caBundle: string } }[] });
      expect(webhooks.flatMap((w) => (w.webhooks ?? []).map((h) => h.clientConfig))).toEqual(
        expect.arrayContaining([expect.objectContaining({ url: expect.stringContaining(`https://127.0.0.1:${port}/pod-inject/`), caBundle: ca })]),
      );
    }
    started.npm.kill(signal);
    await expectAllGone(started, port);
    // The port file goes with the server (one killed outright would leave it, with a pid no longer running: not believed).
    expect(existsSync(join(dir, '.cache', 'local-server', SERVING_FILE))).toBe(false);
    if (signal !== 'SIGKILL') {
      // The server logged why it stopped: the signal npm passed on, or its parent's death (npm does not pass SIGHUP on).
      expect(started.output()).toMatch(/"message":"shutting down".*"reason":"(SIGTERM|SIGINT|SIGHUP|the parent process \d+ exited)"/);
    } else {
      expect(started.output()).toMatch(/"message":"shutting down".*"reason":"the parent process \d+ exited"/);
    }
  }, 300_000);
});

describe('a second npm start on a port in use', () => {
  let holder: Server;
  let port: number;
  let dir: string;
  beforeAll(async () => {
    dir = await projectCopy(projectRoot, 'npm-start-stop-');
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    port = (holder.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => holder.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('fails before starting anything, naming the port, --port and another instance', async () => {
    const { npm, output } = npmStart(dir, port);
    const code = await new Promise<number | null>((resolve) => npm.once('exit', resolve));
    expect(code).toBe(2);
    expect(output()).toContain(`port ${port} on 127.0.0.1 is in use: another npm start may be running`);
    expect(output()).toContain('npm start -- --port N');
    expect(output()).not.toContain('starting an embedded one');
    expect(existsSync(join(dir, '.cache', 'local-cluster'))).toBe(false);
  });
});

describe('--help', () => {
  it.each<[string, string[], RegExp]>([
    ['npm start', ['start', '--', '--help'], /^usage: npm start -- /],
    ['npm run manifests', ['run', 'manifests', '--', '--help'], /^usage: npm run -s manifests -- /],
    ['npm run invoke', ['run', 'invoke', '--', '--help'], /^usage: invoke <function>/],
  ])('%s --help prints the usage on stdout and exits 0', (_name, args, usage) => {
    const r = spawnSync('npm', ['--silent', ...args], { cwd: projectRoot, encoding: 'utf8' });
    expect({ code: r.status, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(usage);
  });
});
