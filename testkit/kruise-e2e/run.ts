/**
 * Runs OpenKruise v1.9.0's own SidecarSet e2e specs against this project
 * (spec: kruise-e2e.md): the embedded cluster with everything `npm start --
 * --test-kubelet` installs (webhooks, the status reconciler's loop on the
 * same schedule, the test kubelet with its defaults), a kube-controller-manager
 * beside it so that Deployments make pods, and Kruise's test binary once per
 * group (both at once: every spec has its own namespace, and most of a
 * group's time is its own sleeps), then, one group at a time, the specs that
 * write a cluster-scoped object both groups write (args.ts, runPhases). The
 * groups' JUnit reports become a table per spec (junit.ts).
 *
 * Everything goes to one report directory: <run>.xml (Ginkgo's JUnit),
 * <run>.log (the binary's output; a run is `v1alpha1` or `v1alpha1-shared`), kube-controller-manager.log, stack.log
 * (the webhooks', reconciler's and test kubelet's log lines) and results.md
 * (the tables). The admin kubeconfig is written there for the run and
 * removed after it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import { statusSyncHeartbeatFromEnv, statusSyncIntervalFromEnv } from '../../functions/status-sync/compose.ts';
import { ensureKruiseE2eBinaries } from './binaries.ts';
import { allPassed, formatResults, parseJunitReport, type GroupResult } from './junit.ts';
import { CONTROLLERS, controllerManagerArgs, groupArgs, runPhases, SHARED_OBJECT_SPECS, type GroupRun } from './args.ts';
import type { KruiseE2eOptions } from './options.ts';

/** How long kube-controller-manager may take to give the default namespace its ServiceAccount. */
const CONTROLLER_MANAGER_READY_MS = 5 * 60_000;

interface Child {
  child: ChildProcess;
  exited: Promise<number | null>;
  log: string;
}

/** Starts a program with its output appended to `log`. */
async function startLogged(name: string, binary: string, args: readonly string[], log: string, env: NodeJS.ProcessEnv, cwd: string): Promise<Child> {
  const out: WriteStream = createWriteStream(log, { flags: 'a' });
  await new Promise<void>((resolvePromise, reject) => {
    out.once('open', () => {
      resolvePromise();
    });
    out.once('error', reject);
  });
  const child = spawn(binary, args, { cwd, env, stdio: ['ignore', out, out] });
  await new Promise<void>((resolvePromise, reject) => {
    child.once('spawn', resolvePromise);
    child.once('error', (error) => {
      reject(new Error(`cannot run ${name} (${binary}): ${error.message}`));
    });
  });
  const exited = new Promise<number | null>((resolvePromise) => {
    child.once('exit', (code) => {
      out.end();
      resolvePromise(code);
    });
  });
  return { child, exited, log };
}

/** SIGTERM, then SIGKILL after 10 s. */
async function stopChild({ child, exited }: Child): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolvePromise) => {
    timer = setTimeout(() => {
      resolvePromise('late');
    }, 10_000);
  });
  if ((await Promise.race([exited, late])) === 'late') {
    child.kill('SIGKILL');
    await exited;
  }
  clearTimeout(timer);
}

/** Waits for the `default` ServiceAccount of namespace default: the controller manager is up and acting. */
async function waitForControllerManager(cp: ControlPlane, manager: Child): Promise<void> {
  const deadline = Date.now() + CONTROLLER_MANAGER_READY_MS;
  let exitCode: number | null | undefined;
  void manager.exited.then((code) => {
    exitCode = code;
  });
  for (;;) {
    if (exitCode !== undefined) throw new Error(`kube-controller-manager exited (${exitCode ?? 'signal'}) before it was ready; see ${manager.log}`);
    const res = await cp.request('admin', 'GET', '/api/v1/namespaces/default/serviceaccounts/default');
    if (res.status === 200) return;
    if (Date.now() > deadline) throw new Error(`kube-controller-manager made no default ServiceAccount in ${CONTROLLER_MANAGER_READY_MS / 1000} s; see ${manager.log}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

export interface KruiseE2eRun {
  /** The tables and the summary line. */
  text: string;
  passed: boolean;
  reportDir: string;
}

/** Builds what is missing, starts everything, runs the groups and stops everything; `say` reports progress. */
export async function runKruiseE2e(options: KruiseE2eOptions, say: (line: string) => void): Promise<KruiseE2eRun> {
  const binaries = await ensureKruiseE2eBinaries(say);
  const reportDir = options.reportDir !== undefined ? resolve(options.reportDir) : await mkdtemp(join(tmpdir(), 'kruise-e2e-'));
  await mkdir(reportDir, { recursive: true });
  say(`reports and logs: ${reportDir}`);
  const stackLog = createWriteStream(join(reportDir, 'stack.log'), { flags: 'a' });
  const kubeconfig = join(reportDir, 'kubeconfig');
  const children: Child[] = [];
  let stack: LocalStack | undefined;
  // Ctrl-C stops the test binaries and the controller manager; the control plane's own hooks stop it.
  const onSignal = () => {
    for (const { child } of children) child.kill('SIGKILL');
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    say('starting the embedded cluster with the webhooks, the status reconciler and the test kubelet (as npm start -- --test-kubelet)...');
    stack = await startLocalStack({
      statusSyncIntervalMs: statusSyncIntervalFromEnv(process.env),
      statusSyncHeartbeatMs: statusSyncHeartbeatFromEnv(process.env),
      // The test kubelet's defaults, as `npm start -- --test-kubelet` runs it.
      testKubelet: {},
      echo: (line) => stackLog.write(`${line}\n`),
    });
    await writeFile(kubeconfig, stack.cp.kubeconfig('admin'), { mode: 0o600 });
    const env = { ...process.env, KUBECONFIG: kubeconfig };
    const manager = await startLogged('kube-controller-manager', binaries.kubeControllerManager, controllerManagerArgs(kubeconfig), join(reportDir, 'kube-controller-manager.log'), env, reportDir);
    children.push(manager);
    await waitForControllerManager(stack.cp, manager);
    say(`kube-controller-manager ${binaries.kubernetesVersion} runs (${CONTROLLERS.join(', ')})`);
    const started = Date.now();
    const runGroup = async (run: GroupRun): Promise<GroupResult> => {
      const junit = join(reportDir, `${run.name}.xml`);
      await rm(junit, { force: true });
      const what = run.selection.focus === SHARED_OBJECT_SPECS ? `the spec "${SHARED_OBJECT_SPECS}" of apps/${run.group}` : `apps/${run.group}/sidecarset* specs`;
      say(`running Kruise ${binaries.kruiseVersion}'s ${what} (log: ${join(reportDir, `${run.name}.log`)})...`);
      const child = await startLogged(`kruise-e2e ${run.name}`, binaries.kruiseE2e, groupArgs(run.group, junit, run.selection), join(reportDir, `${run.name}.log`), env, reportDir);
      children.push(child);
      const code = await child.exited;
      let xml: string;
      try {
        xml = await readFile(junit, 'utf8');
      } catch {
        throw new Error(`the ${run.name} run (exit ${code ?? 'by a signal'}) wrote no JUnit report; see ${child.log}`);
      }
      say(`${run.name} done at ${((Date.now() - started) / 60_000).toFixed(1)} min`);
      return { group: run.group, specs: parseJunitReport(xml, junit) };
    };
    // The runs of a phase go at once (every spec makes its own namespace); the phases one after the other.
    const results: GroupResult[] = [];
    for (const phase of runPhases(options.groups, options.focus)) results.push(...(await Promise.all(phase.map(runGroup))));
    // One table per group: its runs' reports together (each run skips what the other ran).
    const groups = options.groups.map((group): GroupResult => ({ group, specs: results.filter((r) => r.group === group).flatMap((r) => r.specs) }));
    const text = formatResults(groups);
    await writeFile(join(reportDir, 'results.md'), `${text}\n`);
    return { text, passed: allPassed(groups), reportDir };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    for (const child of children.reverse()) await stopChild(child);
    await stack?.stop();
    await rm(kubeconfig, { force: true });
    stackLog.end();
  }
}
