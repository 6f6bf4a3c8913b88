/**
 * A kube-controller-manager beside a test's control plane, running only the
 * controllers the test names (a ReplicaSet that really recreates a pod, a
 * PodDisruptionBudget whose status really counts healthy pods), from the
 * binary the Kruise e2e run caches (testkit/kruise-e2e/binaries.ts). Its
 * output goes to a log file, named when it fails and removed when it stops.
 */
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlane } from '../control-plane/harness.ts';
import { controllerManagerArgs } from './kruise-e2e/args.ts';
import { ensureKubeControllerManager } from '../control-plane/controller-manager.ts';

export interface ControllerManager {
  /** Its output so far, for a failure's message. */
  log(): Promise<string>;
  stop(): Promise<void>;
}

export async function startControllerManager(cp: ControlPlane, controllers: readonly string[]): Promise<ControllerManager> {
  const { path } = await ensureKubeControllerManager(() => undefined);
  const dir = await mkdtemp(join(tmpdir(), 'kube-controller-manager-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, cp.kubeconfig('admin'), { mode: 0o600 });
  const logFile = join(dir, 'kube-controller-manager.log');
  const out = openSync(logFile, 'a');
  const child = spawn(path, controllerManagerArgs(kubeconfig, controllers), { cwd: dir, stdio: ['ignore', out, out] });
  closeSync(out);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  return {
    log: () => readFile(logFile, 'utf8').catch(() => ''),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const late = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(late);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
