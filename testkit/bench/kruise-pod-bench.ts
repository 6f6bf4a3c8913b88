/**
 * OpenKruise v1.9.0's pod mutating webhook, timed inside its own Go process
 * (control-plane/tools/kruise-reference/podbench/, whose main.go documents
 * what one review is and the line protocol): built once per content of the
 * module like the conformance reference, then one long-lived process per
 * bench run that is handed the bench's inputs once and asked for timed runs
 * of N reviews, each answered with the run's nanoseconds per review.
 *
 * The binary is cached under .cache/kruise-reference/podbench-<kruise
 * version>-<hash of go.mod, go.sum and podbench/main.go>.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOne, isExecutable } from '../../control-plane/build.ts';
import type { Namespace } from '../../lib/kube/types.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { KRUISE_REFERENCE_MODULE_DIR, kruiseReferenceVersion } from '../conformance/kruise-reference.ts';
import { startLineProcess } from '../line-process.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MODULE_FILES = ['go.mod', 'go.sum', join('podbench', 'main.go')] as const;

/** Why Kruise's handler cannot be timed here (no Go toolchain), or undefined when it can. */
export function kruiseBenchUnavailable(): string | undefined {
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error !== undefined || go.status !== 0) return `no Go toolchain (go version: ${go.error?.message ?? go.stderr.trim()}), so Kruise's handler cannot be built`;
  return undefined;
}

/** Where the binary for the module as it is now lives. */
export async function kruisePodBenchBinaryPath(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of MODULE_FILES) hash.update(file).update('\0').update(await readFile(join(KRUISE_REFERENCE_MODULE_DIR, file)));
  const key = `podbench-${await kruiseReferenceVersion('1.9')}-${hash.digest('hex').slice(0, 12)}`;
  return join(repoRoot, '.cache', 'kruise-reference', key, 'podbench');
}

/** Builds the program (once per module content; minutes on a cold Go cache) and returns its path. */
export async function ensureKruisePodBench(): Promise<string> {
  const binary = await kruisePodBenchBinaryPath();
  if (await isExecutable(binary)) return binary;
  await mkdir(dirname(binary), { recursive: true });
  await buildOne(`Kruise pod webhook bench (OpenKruise ${await kruiseReferenceVersion('1.9')})`, KRUISE_REFERENCE_MODULE_DIR, binary, '-s -w', './podbench');
  return binary;
}

/** What Kruise answered the bench's review once, before any timing. */
export interface KruiseSetupAnswer {
  statusCode: number;
  allowed: boolean;
  patchOps: number;
  answerBytes: number;
}

/** One timed run inside the Go process. */
export interface KruiseRun {
  reviews: number;
  /** Wall-clock nanoseconds of the run, and per review. */
  ns: number;
  nsPerOp: number;
  /** The Go process's CPU time per review (every thread: the collector's too). */
  cpuNsPerOp: number;
}

interface Reply extends Partial<KruiseSetupAnswer & KruiseRun> {
  message?: string;
  error?: string;
}

export interface KruisePodBench {
  /** Hands Kruise the review body and the cluster; answers its first answer, checked to be a patch. */
  setup(body: string, cluster: { sidecarSets: readonly SidecarSet[]; namespaces: readonly Namespace[] }): Promise<KruiseSetupAnswer>;
  /** Reviews back to back inside the Go process for about `runMs`. */
  run(runMs: number): Promise<KruiseRun>;
  close(): Promise<void>;
}

/**
 * Starts the program. `gomaxprocs` is its GOMAXPROCS (1 by default, so that
 * its collector shares one core with the reviews as Node's does, rather than
 * borrowing the machine's other core).
 */
export function startKruisePodBench(binary: string, gomaxprocs = 1): KruisePodBench {
  const lines = startLineProcess(binary, { name: 'the Kruise pod bench', env: { ...process.env, GOMAXPROCS: String(gomaxprocs) } });
  const ask = async (command: Record<string, unknown>): Promise<Reply> => {
    const reply = (await lines.ask(command)) as Reply;
    if (reply.error !== undefined) throw new Error(`the Kruise pod bench: ${reply.error}`);
    return reply;
  };
  return {
    async setup(body, cluster) {
      const reply = await ask({ op: 'setup', body, cluster });
      const answer = { statusCode: reply.statusCode ?? 0, allowed: reply.allowed === true, patchOps: reply.patchOps ?? 0, answerBytes: reply.answerBytes ?? 0 };
      if (answer.statusCode !== 200 || !answer.allowed || answer.patchOps === 0) {
        throw new Error(`Kruise did not inject the bench pod (status ${answer.statusCode}, allowed ${answer.allowed}, ${answer.patchOps} patch operations${reply.message === undefined ? '' : `: ${reply.message}`})`);
      }
      return answer;
    },
    async run(runMs) {
      const reply = await ask({ op: 'run', runMs });
      if (reply.reviews === undefined || reply.ns === undefined || reply.nsPerOp === undefined || reply.cpuNsPerOp === undefined) {
        throw new Error(`the Kruise pod bench answered a run without its figures: ${JSON.stringify(reply)}`);
      }
      return { reviews: reply.reviews, ns: reply.ns, nsPerOp: reply.nsPerOp, cpuNsPerOp: reply.cpuNsPerOp };
    },
    close: () => lines.close(),
  };
}
