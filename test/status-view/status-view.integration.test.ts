/**
 * `npm run -s status` against a real kube-apiserver: the CLI runs as a child
 * process with a kubeconfig to the test API server, as a user runs it,
 * while the test kubelet restarts updated sidecars and the reconciler's
 * resyncs (composed as on AWS, as the functions' identity) roll a set. It
 * checks the table for a set before its status is written, mid-rollout and
 * finished; that --watch appends a table when a set changes and exits 0 on
 * SIGINT, and exits 1 with one line when the API server goes away; the
 * per-pod view (--pods) with a sidecar the kubelet cannot pull, a set that
 * does not exist, and --watch; and the one-line errors for a bad kubeconfig,
 * an unreachable server and a cluster without the CRD.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { composeStatusSync, type StatusSyncRuntime } from '../../functions/status-sync/compose.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { STALE_NOTE } from '../../lib/status-view/table.ts';
import { isReady } from '../../testkit/cluster-pods.ts';
import { listPods, NEW_IMAGE, readSet, seedRollout, SIDECAR, startRolloutCluster, updateSidecarImage, type RolloutCluster } from '../../testkit/faults/rollout-fixture.ts';
import { capturingLogger } from '../../testkit/reviews.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAIN = join(projectRoot, 'functions', 'status-view', 'main.ts');
const SET = 'view';
const CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/sidecarsets.apps.kruise.io';

/** Standard error without the lines naming the cluster (checked once on their own; a note follows while an npm start of this checkout runs). */
const answerOf = (stderr: string): string => stderr.split(/(?<=\n)/).filter((line) => !line.startsWith('cluster: context ') && !line.startsWith("note: npm start's embedded cluster")).join('');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The first line of standard error: the cluster named. */
  clusterLine: string;
}

/** The CLI as a child process; `--kubeconfig` names the file, so nothing of this environment's cluster settings counts. */
function start(args: string[]): { child: ChildProcess; output: () => Run; exited: Promise<Run> } {
  const child = spawn(process.execPath, [MAIN, ...args], { cwd: projectRoot, env: { ...process.env, KUBECONFIG: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const cluster = () => stderr.split('\n')[0] ?? '';
  const output = () => ({ code: child.exitCode, stdout, stderr: answerOf(stderr), clusterLine: cluster() });
  const exited = new Promise<Run>((resolveRun) => child.on('close', (code) => { resolveRun({ code, stdout, stderr: answerOf(stderr), clusterLine: cluster() }); }));
  return { child, output, exited };
}

/** What `exited` gave within `ms`, or undefined (the timer cleared either way, so nothing outlives the test). */
async function within(exited: Promise<Run>, ms: number): Promise<Run | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((r) => (timer = setTimeout(() => { r(undefined); }, ms)));
  try {
    return await Promise.race([exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the CLI to its end (killed after 60 s, which fails the test). */
async function run(args: string[]): Promise<Run> {
  const { child, exited } = start(args);
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const result = await exited;
  clearTimeout(timer);
  return result;
}

async function until(test: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await test()); ) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The table of the set with every pod updated and ready. */
// No injection policy in this cluster: pod-inject injects every set (PATH webhook).
const HEADER = 'NAME   MATCHED   UPDATED   READY   UPDATED-READY   STATE      PATH      WHY';
const FINISHED = (mark: string) => `view   3${mark.padEnd(9)}3${mark.padEnd(9)}3${mark.padEnd(7)}3${mark.padEnd(15)}Finished   webhook   finished: every matched pod runs the current sidecars`;

const sidecarImage = (pod: Pod): unknown => pod.status?.containerStatuses?.find((c) => c.name === SIDECAR)?.image;
const specImage = (pod: Pod): string | undefined => pod.spec?.containers.find((c) => c.name === SIDECAR)?.image;
const sidecarWaiting = (pod: Pod): unknown => (pod.status?.containerStatuses?.find((c) => c.name === SIDECAR)?.state as { waiting?: { reason?: string } } | undefined)?.waiting?.reason;
/** An image the test kubelet cannot pull (its tag says bad): ErrImagePull, then ImagePullBackOff. */
const BAD_IMAGE = 'agent:bad-1';
/** The last table --watch appended (tables of --pods hold one blank line; each new one starts with its NAME header). */
const lastTable = (stdout: string): string => stdout.slice(stdout.lastIndexOf('NAME '));

describeWithControlPlane('npm run -s status on a real API server', () => {
  let cluster: RolloutCluster;
  let statusSync: StatusSyncRuntime;
  let dir: string;
  let kubeconfig: string;

  /** Waits until `count` pods run the new image, ready, as the kubelet reports it. */
  const updatedAndReady = (count: number, image = NEW_IMAGE) =>
    until(async () => (await listPods(cluster.cp, SET)).items.filter((p) => specImage(p) === image && sidecarImage(p) === image && isReady(p)).length === count, `${count} pod(s) updated and ready`);

  beforeAll(async () => {
    cluster = await startRolloutCluster({ readyDelayMs: 300 });
    dir = await mkdtemp(join(tmpdir(), 'status-view-'));
    kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, cluster.cp.kubeconfig('admin'), { mode: 0o600 });
    await seedRollout(cluster, { name: SET, pods: 3, maxUnavailable: 1 });
    statusSync = await composeStatusSync({ KUBECONFIG_CONTENT: cluster.cp.kubeconfig('functions') }, { logger: capturingLogger().logger });
  }, 30 * 60_000);

  afterAll(async () => {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('shows a set’s counts from its pods, marked while the stored status does not have them yet', async () => {
    const result = await run(['--kubeconfig', kubeconfig]);
    expect(result).toMatchObject({
      code: 0,
      stderr: '',
      stdout: [
        HEADER,
        FINISHED('*'),
        STALE_NOTE,
        '',
      ].join('\n'),
    });
  });

  it('shows no mark once the reconciler has written the status', async () => {
    await statusSync.resync();
    const result = await run(['--kubeconfig', kubeconfig]);
    expect(result.stdout.split('\n')[1]).toBe(FINISHED(''));
    expect(result.stdout).not.toContain(STALE_NOTE);
  });

  it('shows a rollout under way: its counts, Progressing, the bar and why the next pods wait', async () => {
    await updateSidecarImage(cluster.cp, await readSet(cluster.cp, SET), NEW_IMAGE);
    const before = await run(['--kubeconfig', kubeconfig]);
    expect(before.stdout.split('\n')[1]).toBe(
      'view   3         0*        3       0*              Progressing   webhook   [....................]   0%   1 pod(s) due for update; maxUnavailable 1 reached: the next pods wait until updated ones are ready (0 updated and not ready before this reconcile)',
    );

    const resynced = await statusSync.resync();
    expect(resynced.rollout?.podsUpdated).toBe(1);
    await updatedAndReady(1);
    const mid = await run(['--kubeconfig', kubeconfig]);
    expect(mid.code).toBe(0);
    expect(mid.stdout.split('\n')[1]).toMatch(
      /^view {3}3 {9}1\*? +3 +1\*? +Progressing {3}webhook {3}\[######\.{14}\] {2}33% {3}1 pod\(s\) due for update; maxUnavailable 1 reached: the next pods wait until updated ones are ready \(0 updated and not ready before this reconcile\)$/,
    );
  });

  it('shows the rollout finished once every pod is updated and ready', async () => {
    await statusSync.runController([SET]);
    await updatedAndReady(3);
    await statusSync.resync();
    const result = await run(['--kubeconfig', kubeconfig]);
    expect(result).toMatchObject({
      code: 0,
      stderr: '',
      stdout: [
        HEADER,
        FINISHED(''),
        '',
      ].join('\n'),
    });
  });

  it('--watch appends a table when the set changes, and exits 0 on SIGINT', async () => {
    const watch = start(['--kubeconfig', kubeconfig, '--watch']);
    try {
      await until(() => watch.output().stdout.includes('Finished'), 'the first table');
      await updateSidecarImage(cluster.cp, await readSet(cluster.cp, SET), 'agent:3.0');
      await until(() => watch.output().stdout.split('NAME ').length === 3, 'a second table');
      const tables = watch.output().stdout.split('\n\n');
      expect(tables).toHaveLength(2);
      expect(tables[1]).toMatch(/^NAME .*\nview {3}3 {9}0\* .* Progressing {3}webhook {3}\[\.{20}\] {3}0% {3}1 pod\(s\) due for update; /);
      watch.child.kill('SIGINT');
      const ended = await within(watch.exited, 30_000);
      expect(ended).toMatchObject({ code: 0, stderr: '' });
    } finally {
      watch.child.kill('SIGKILL');
    }
  });

  // util-linux `script` runs the CLI on a pseudo-terminal, as a user's terminal would; without it this case cannot run.
  const onPty = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0 ? it : it.skip;
  onPty('--watch on a terminal draws the table in place, fitted to its width, and redraws it when the set changes', async () => {
    // The shell becomes `timeout` (a backstop), which passes the SIGINT sent to its pid on to the CLI; script -e exits with its code.
    const pidFile = join(dir, 'pty.pid');
    const command = `stty cols 100 rows 30; echo $$ > ${pidFile}; exec timeout -s INT --preserve-status 120 ${process.execPath} ${MAIN} --kubeconfig ${kubeconfig} --watch`;
    const pty = spawn('script', ['-qfec', command, '/dev/null'], { cwd: projectRoot, env: { ...process.env, KUBECONFIG: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let screen = '';
    pty.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString()));
    const closed = new Promise<number | null>((r) => pty.on('close', (code) => { r(code); }));
    let code: number | null | undefined;
    try {
      await until(() => screen.includes('Progressing'), 'the first table');
      const paused = await cluster.cp.request('admin', 'PATCH', `/apis/apps.kruise.io/v1alpha1/sidecarsets/${SET}`, { spec: { updateStrategy: { paused: true } } }, 'application/merge-patch+json');
      expect(paused.status).toBe(200);
      await until(() => screen.includes('Paused'), 'the redrawn table');
      process.kill(Number((await readFile(pidFile, 'utf8')).trim()), 'SIGINT');
      code = await closed;
    } finally {
      pty.kill('SIGKILL');
    }
    const [first, second] = screen.split('\u001b[J');
    // The first table: lines cleared to their end, none wider than the terminal less one column.
    // The lines naming the cluster come first, on standard error, before the table is drawn.
    const lines = answerOf((first ?? '').replaceAll('\r\n', '\n')).split('\n').filter((l) => l !== '');
    expect(lines[0]).toBe('NAME   MATCHED   UPDATED   READY   UPDATED-READY   STATE         PATH\u001b[K');
    for (const line of lines) expect(Array.from(line.replace('\u001b[K', '')).length).toBeLessThanOrEqual(99);
    // The second: the cursor up over the first (header, set, its bar and why), then the new lines.
    expect(second?.startsWith(`\u001b[${lines.length}A\r`)).toBe(true);
    expect(second).toContain('Paused');
    expect(code).toBe(0);
  });

  it('--pods SET lists each matched pod: updated or not, ready, what waits and why, and the kubelet’s reason for a sidecar that cannot start', async () => {
    await updateSidecarImage(cluster.cp, await readSet(cluster.cp, SET), BAD_IMAGE);
    const resumed = await cluster.cp.request('admin', 'PATCH', `/apis/apps.kruise.io/v1alpha1/sidecarsets/${SET}`, { spec: { updateStrategy: { paused: false } } }, 'application/merge-patch+json');
    expect(resumed.status).toBe(200);
    const resynced = await statusSync.resync();
    expect(resynced.rollout?.podsUpdated).toBe(1);
    await until(async () => (await listPods(cluster.cp, SET)).items.some((p) => sidecarWaiting(p) === 'ImagePullBackOff'), 'the kubelet backing off the bad image');
    const pulling = (await listPods(cluster.cp, SET)).items.find((p) => specImage(p) === BAD_IMAGE)?.metadata?.name ?? '';

    const result = await run(['--kubeconfig', kubeconfig, '--pods', SET]);
    expect(result.code).toBe(0);
    // The cluster named before the answer (a note may follow when an npm start of this checkout runs meanwhile).
    expect(result.clusterLine).toBe(`cluster: context "admin", server ${cluster.cp.url} (--kubeconfig ${kubeconfig})`);
    const [summary, pods] = result.stdout.split('\n\n');
    expect(summary?.split('\n')[1]).toMatch(/^view {3}3 +1\*? +2\*? +0\*? +Progressing /);
    const lines = (pods ?? '').trimEnd().split('\n');
    expect(lines[0]).toMatch(/^POD +UPDATED +READY +STATE +KUBELET +WHY$/);
    expect(lines.slice(1)).toHaveLength(3);
    for (const line of lines.slice(1)) {
      if (line.startsWith(`view/${pulling} `)) expect(line).toMatch(/ {3}yes {7}no {6}(NotReady|Updating) +agent: ImagePullBackOff {3}\S/);
      else expect(line).toMatch(/^view\/pod-\d{5} {3}no {8}yes {5}Waiting +- +maxUnavailable 1 reached/);
    }
  });

  it('--pods names a SidecarSet that does not exist in one line, exit 1', async () => {
    const result = await run(['--kubeconfig', kubeconfig, '--pods', 'nope']);
    expect(result).toMatchObject({ code: 1, stdout: '', stderr: 'status: SidecarSet "nope" not found. (npm run -s status lists them)\n' });
  });

  it('--pods with --watch appends the pods’ table when a pod changes, and exits 0 on SIGINT', async () => {
    const watch = start(['--kubeconfig', kubeconfig, '--pods', SET, '--watch']);
    try {
      await until(() => watch.output().stdout.includes('ImagePullBackOff'), 'the first table');
      await updateSidecarImage(cluster.cp, await readSet(cluster.cp, SET), 'agent:4.0');
      await statusSync.resync();
      await until(() => watch.output().stdout.split('\nPOD ').length >= 3 && !lastTable(watch.output().stdout).includes('ImagePullBackOff'), 'a table without the bad image');
      watch.child.kill('SIGINT');
      const ended = await within(watch.exited, 30_000);
      expect(ended).toMatchObject({ code: 0, stderr: '' });
    } finally {
      watch.child.kill('SIGKILL');
    }
  });

  it('names a kubeconfig it cannot use in one line, exit 2', async () => {
    const bad = join(dir, 'bad-kubeconfig');
    await writeFile(bad, 'clusters: [ {name: x\n');
    const result = await run(['--kubeconfig', bad]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(new RegExp(`^status: kubeconfig from file ${bad}: [^\\n]+\\n$`));
  });

  it('names an API server it cannot reach in one line, exit 1', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((r) => closed.close(() => { r(); }));
    const unreachable = join(dir, 'unreachable-kubeconfig');
    await writeFile(unreachable, cluster.cp.kubeconfig('admin').replace(cluster.cp.url, `https://127.0.0.1:${port}`));
    const result = await run(['--kubeconfig', unreachable]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^status: list SidecarSets: the request failed: [^\n]*ECONNREFUSED[^\n]*\n$/);
  });

  it('--watch exits 1 with one line when the API server goes away', async () => {
    const watch = start(['--kubeconfig', kubeconfig, '--watch']);
    try {
      await until(() => watch.output().stdout.includes('NAME'), 'the first table');
      await cluster.cp.stopApiServer();
      const ended = await within(watch.exited, 60_000);
      expect(ended?.code).toBe(1);
      // Refused, or answered by a server shutting down: either way one line naming the read that failed.
      expect(ended?.stderr).toMatch(/^status: (lost the connection to the API server|the cluster can no longer be read): list SidecarSets: [^\n]+\n$/);
    } finally {
      watch.child.kill('SIGKILL');
      await cluster.cp.startApiServer();
    }
  });

  it('says the SidecarSet CRD is missing, exit 1', async () => {
    const deleted = await cluster.cp.request('admin', 'DELETE', CRD);
    expect(deleted.status).toBe(200);
    await until(async () => (await cluster.cp.request('admin', 'GET', '/apis/apps.kruise.io/v1alpha1/sidecarsets')).status === 404, 'the CRD gone');
    const result = await run(['--kubeconfig', kubeconfig]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('status: list SidecarSets: the API server has no SidecarSets (sidecarsets.apps.kruise.io): the SidecarSet CRD is not installed in this cluster (npm run manifests renders it; apply it with kubectl apply --server-side)\n');
  });
});
