/**
 * Every case docs/RELIABILITY.md reports, with what it claims and how long a
 * run it gets (`quick` for a smoke run, the full one for the document). Each
 * case runs the same scenario function its short version in `npm test` runs,
 * and throws when an invariant breaks.
 */
import { CONTEXT_DEFAULTS } from '../../infra/aws/config.ts';
import { heapNodeOptions } from '../../infra/aws/heap.ts';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { benchControlPlane, seedAdmissionCluster } from '../../testkit/bench/cluster.ts';
import { injectionUnderApiFaults, podCreationUnderApiFaults } from '../../testkit/faults/pod-inject-faults.ts';
import { podListRetry } from '../../testkit/faults/pod-list-retry.ts';
import { apiServerRestarts, continueTokenExpires, podListFailsHalfway, writeConflicts } from '../../testkit/faults/status-sync-faults.ts';
import { startFaultCluster, type FaultCluster } from '../../testkit/faults/status-sync-fixture.ts';
import { rolloutUnderFault, type RolloutFault } from '../../testkit/faults/rollout-faults.ts';
import { startRolloutCluster, type RolloutCluster } from '../../testkit/faults/rollout-fixture.ts';
import { httpsSoak } from '../../testkit/load/https-soak.ts';
import { lambdaSoak } from '../../testkit/load/lambda-soak.ts';
import { LARGE_SET_BYTES, largeSidecarSets, REVIEW_DEADLINE_MS } from '../../testkit/load/large-sidecarsets.ts';
import { checkRefusals } from '../../testkit/reliability/refusals.ts';
import { adversarialRows, MB, RELIABILITY_SIZES } from '../../testkit/reliability/adversarial.ts';
import { QUICK_TIMEOUTS, strangerConnections } from '../../testkit/reliability/stranger-connections.ts';

import type { Figures } from '../../testkit/reliability/figures.ts';
import { resyncMemory, RESYNC_MEMORY_TARGET_MB, STACK_RESYNC } from '../bench/resync-memory-run.ts';
/** A case's result: figures, or rows of a table. */
export type CaseOutput = Figures | Figures[];

export const SECTIONS = ['bad-input', 'adversarial', 'faults', 'load'] as const;
export type SectionId = (typeof SECTIONS)[number];

export interface RunSettings {
  quick: boolean;
  /** The fuzzer's seed. */
  seed: number;
}

export interface Case {
  section: SectionId;
  name: string;
  /** What passing shows, in a sentence. */
  claim: string;
  run(settings: RunSettings, shared: Shared): Promise<CaseOutput>;
}

/** Clusters started once and shared by the cases of a section. */
export class Shared {
  #seeded: Promise<ControlPlane> | undefined;
  #faultCluster: Promise<FaultCluster> | undefined;
  #rolloutCluster: Promise<RolloutCluster> | undefined;

  /** A control plane holding the benchmarks' 50 SidecarSets, 5 of them selecting the pod (testkit/bench/cluster.ts). */
  seeded(): Promise<ControlPlane> {
    this.#seeded ??= benchControlPlane().then(async (cp) => {
      await seedAdmissionCluster(cp);
      return cp;
    });
    return this.#seeded;
  }

  /** The reconciler's fault cluster, lists read from etcd so that continue tokens can expire. */
  faultCluster(): Promise<FaultCluster> {
    this.#faultCluster ??= startFaultCluster({ listsFromEtcd: true });
    return this.#faultCluster;
  }

  /** The rollout's cluster: the test kubelet restarting updated sidecars (ready 300 ms later), lists and watches read from etcd. */
  rolloutCluster(): Promise<RolloutCluster> {
    this.#rolloutCluster ??= startRolloutCluster({ readyDelayMs: 300 });
    return this.#rolloutCluster;
  }

  async stop(): Promise<void> {
    const all = await Promise.allSettled([this.#seeded, this.#faultCluster, this.#rolloutCluster]);
    for (const result of all) if (result.status === 'fulfilled') await result.value?.stop();
  }
}

const FUZZ_SCRIPT = fileURLToPath(new URL('../fuzz.ts', import.meta.url));

interface FuzzSummary {
  ok: boolean;
  seed: number;
  inputs: number;
  durationMs: number;
  unhandledRejections: number;
  properties: { name: string; description: string; inputs: number; durationMs: number; ok: boolean; failure?: string }[];
}

/** The fuzzer in a process of its own (as `npm run fuzz` runs), its summary line parsed. */
function runFuzz(args: readonly string[]): Promise<FuzzSummary> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--no-warnings=ExperimentalWarning', FUZZ_SCRIPT, ...args], { maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      const line = stdout.split('\n').find((l) => l.startsWith('{"fuzzSummary"'));
      if (line === undefined) {
        reject(new Error(`the fuzzer printed no summary${error ? `: ${error.message}` : ''}\n${stdout.slice(-2000)}`));
        return;
      }
      const summary = (JSON.parse(line) as { fuzzSummary: FuzzSummary }).fuzzSummary;
      if (!summary.ok) {
        const failed = summary.properties.filter((p) => !p.ok).map((p) => `${p.name}: ${p.failure ?? ''}`);
        reject(new Error(`the fuzzer found failures (seed ${summary.seed}; unhandled rejections ${summary.unhandledRejections}):\n${failed.join('\n')}`));
        return;
      }
      resolve(summary);
    });
  });
}

/**
 * The reconciler's scenarios report `writtenBelowTruth` (statuses written
 * with fewer pods than exist, the invariant: always 0 when they pass) and
 * the smallest matched count the widest set showed against its true count.
 */
export const CASES: readonly Case[] = [
  {
    section: 'bad-input',
    name: 'Fuzzing both entry points',
    claim:
      'Random bytes, truncated JSON, wrong types in every field, huge and deeply nested values, awkward keys, random Pods and SidecarSets, strangers and bad requests, through the Lambda handler and the HTTPS server: no crash, no unhandled rejection, a well-formed answer echoing the uid, and every patch applies to its object.',
    async run({ quick, seed }) {
      const summary = await runFuzz(quick ? ['--runs', '20', '--size', 'quick', '--seed', String(seed)] : ['--seed', String(seed)]);
      return summary.properties.map((p) => ({ property: p.name, inputs: p.inputs, durationMs: p.durationMs, result: p.ok ? 'pass' : 'FAIL', what: p.description }));
    },
  },
  {
    section: 'bad-input',
    name: 'Refusals',
    claim: 'Strangers get the bare 404 without their body being read; callers with the secret but a wrong method, content type, size or body get 405/415/413/400 with a one-line message; no answer carries a stack, a path, a version or part of the secret.',
    run: ({ quick }) => checkRefusals(quick ? 2 : 20),
  },
  ...(['pod-inject', 'sidecarset-validate', 'sidecarset-default'] as const).map((fn): Case => ({
    section: 'adversarial',
    name: `The worst reviews for ${fn}`,
    claim: `The reviews of ${fn} built to make its work grow faster than its input (testkit/reliability/adversarial.ts), at 1 MB, 3 MB and just under the 6 MB body limit, through the HTTP handler both the Lambda handler and the server use: every one answered inside its deadline, its ratio to the parse floor not growing more than 3 times from 1 to 6 MB (a quadratic step grows it 6 times), the median time shown against JSON.parse of the same body (target: at most 20 times).`,
    run: ({ quick }) => adversarialRows(fn, quick ? [MB / 4, MB] : RELIABILITY_SIZES, quick ? 2 : 5),
  })),
  {
    section: 'bad-input',
    name: 'Connections before authentication',
    claim:
      'Strangers declaring a 1 GB body they never send, and slow clients (TCP without TLS, TLS then silence, headers a byte every 100 ms, a body with the secret trickled and never finished), against the local server over TLS with its production timeouts: every stranger gets the bare 404 and a closed connection at once, every slow client is cut off by its timeout (handshake and headers 10 s, body 30 s), and the server holds no connection afterwards. Close times count from opening the connection.',
    run: ({ quick }) => strangerConnections(quick ? { strangers: 300, slowClients: 10, timeouts: QUICK_TIMEOUTS } : { strangers: 1500, slowClients: 50 }),
  },
  {
    section: 'faults',
    name: 'Pod injection while the API server is slow or down',
    claim:
      'Reviews sent to both entry points while a fault proxy delays, resets or blackholes the functions\' API calls, or is stopped, and while the API server itself is stopped: every answer inside the webhook timeout; the same injection as with the API up while the cached list is within its staleness bound; past it a failed call (so failurePolicy decides); never a denial, never an injection from a wrong list; fresh answers after recovery.',
    run: ({ quick }) => injectionUnderApiFaults({ rounds: quick ? 1 : 3 }),
  },
  {
    section: 'faults',
    name: 'Pod creation through the API server under faults',
    claim:
      'Pods created through the real API server with the webhooks registered while the functions\' reads are faulted: with failurePolicy Fail each pod is created with exactly the right sidecars or refused by the API server; with Ignore it is created with the right sidecars or none; never a denial by the webhook.',
    run: ({ quick }) => podCreationUnderApiFaults({ rounds: quick ? 1 : 3 }),
  },
  {
    section: 'faults',
    name: 'Reconciler: the pod list fails halfway',
    claim: 'The API server stops (or the connection keeps being reset) in the middle of the paged pod list: the resync reports it and writes nothing; every status the API server stored stayed true; the next resync converges and a further one writes nothing.',
    run: async ({ quick }, shared) => podListFailsHalfway(await shared.faultCluster(), { repetitions: quick ? 1 : 3 }),
  },
  {
    section: 'faults',
    name: 'Reconciler: a dropped connection mid-list',
    claim: 'The connection is reset for a moment in the middle of the paged pod list: the page is read again with the same continue token and the list misses or repeats no pod; when the connection keeps dropping, the list fails after three attempts with the reason.',
    run: ({ quick }) => podListRetry({ pods: quick ? 45 : 300, pageSize: quick ? 10 : 25, lists: quick ? 2 : 10 }),
  },
  {
    section: 'faults',
    name: 'Reconciler: the continue token expires',
    claim: 'etcd is compacted between pages (410 Expired): the list starts over and the statuses written are complete; when it expires every time, nothing is written.',
    run: async ({ quick }, shared) => continueTokenExpires(await shared.faultCluster(), { repetitions: quick ? 1 : 3 }),
  },
  {
    section: 'faults',
    name: 'Reconciler: write conflicts',
    claim: 'A SidecarSet changes between the resync reading it and writing its status (a real 409): the resync reads it again and writes the right counts; when its selector changed, its status waits for the next resync. (The smallest matched count seen here is the true count under the narrower canary selector the scenario switches to, not a shortfall.)',
    run: async ({ quick }, shared) => writeConflicts(await shared.faultCluster(), { repetitions: quick ? 1 : 3 }),
  },
  {
    section: 'faults',
    name: 'Reconciler: the API server restarts mid-resync',
    claim: 'The API server is stopped and started again between pages and between writes: nothing partial is written, the errors are reported, the next resync converges.',
    run: async ({ quick }, shared) => apiServerRestarts(await shared.faultCluster(), { repetitions: quick ? 1 : 3 }),
  },
  {
    section: 'faults',
    name: 'In-place rollout under faults',
    claim:
      'SidecarSet image updates rolled out by the reconciler as the Lambda runs it, with the test kubelet restarting the sidecars, while the API server restarts, the reconciler\'s connections are reset, another writer patches the same pods, or pods are deleted: at no stored version of any pod were more updated pods unavailable than maxUnavailable, no pod\'s sidecar was written twice, and every rollout converged (all pods updated and Ready, the status N/N/N/N). The same for HotUpgrade sidecars, where also the working container never held the empty image and one of the two containers always ran a real image ready.',
    async run({ quick }, shared) {
      const cluster = await shared.rolloutCluster();
      const faults: RolloutFault[] = ['none', 'api-server-restarts', 'connection-resets', 'concurrent-writer', 'pods-deleted'];
      const sizes = quick ? [{ pods: 20, maxUnavailable: '20%' }] : [{ pods: 60, maxUnavailable: '10%' }, { pods: 25, maxUnavailable: 3 }, { pods: 150, maxUnavailable: '25%' }];
      const rows: Figures[] = [];
      for (const [i, size] of sizes.entries()) {
        for (const [j, fault] of faults.entries()) rows.push(await rolloutUnderFault(cluster, { fault, ...size, seed: 1000 + 10 * i + j }));
      }
      // HotUpgrade sidecars: two writes per pod (upgrade, flip), the faults striking between them.
      for (const [j, fault] of faults.entries()) rows.push(await rolloutUnderFault(cluster, { fault, pods: quick ? 12 : 40, maxUnavailable: quick ? 3 : '20%', seed: 2000 + j, hot: true }));
      return rows;
    },
  },
  {
    section: 'load',
    name: 'A warm Lambda handler invoked 100,000 times',
    claim: 'pod-inject invoked 100,000 times in one process (and the two SidecarSet functions 20,000 times each), reading a real API server holding 50 SidecarSets: every answer right, reachable heap, handles and process listeners flat.',
    async run({ quick }, shared) {
      const cp = await shared.seeded();
      return [
        await lambdaSoak({ cp, fn: 'pod-inject', invocations: quick ? 5_000 : 100_000 }),
        await lambdaSoak({ cp, fn: 'sidecarset-validate', invocations: quick ? 1_000 : 20_000 }),
        await lambdaSoak({ cp, fn: 'sidecarset-default', invocations: quick ? 1_000 : 20_000 }),
      ];
    },
  },
  {
    section: 'load',
    name: 'The resync\'s memory: pods of a megabyte',
    claim: `A resync over 200 pods of 1 MB each (50 in --quick), in a fresh process through the Lambda's composition with the NODE_OPTIONS the stack gives status-sync (a heap of three quarters of its 512 MB), peaks under ${RESYNC_MEMORY_TARGET_MB} MB of RSS: each pod is parsed and summarised as its bytes arrive, so a page is never held whole. Shown beside it: the same resync as Node starts by default (V8 sizes its heap from the host's memory and lets garbage pile up before collecting, so its peak follows the machine, not the resync), and the floor, which reads the same pages whole and parses them, as the resync did before.`,
    async run({ quick }) {
      const rows = await resyncMemory(quick ? 50 : 200, 1_000_000, () => undefined);
      const over = rows.filter((r) => r.run.startsWith(STACK_RESYNC) && r.peakRssMB >= RESYNC_MEMORY_TARGET_MB);
      if (over.length > 0) throw new Error(`a resync peaked at ${RESYNC_MEMORY_TARGET_MB} MB or more: ${JSON.stringify(over)}`);
      const short = rows.find((r) => r.podsSeen !== r.pods && r.run.startsWith('resync'));
      if (short !== undefined) throw new Error(`a resync did not read every pod: ${JSON.stringify(short)}`);
      return rows.map((r) => ({ run: r.run, pods: r.pods, bytesPerPod: r.bytesPerPod, peakRssMiB: r.peakRssMiB, peakRssMB: r.peakRssMB, durationMs: r.durationMs }));
    },
  },
  {
    section: 'load',
    name: '40 MiB of SidecarSets',
    claim: `41 valid SidecarSets of just under 1 MiB each (the largest spec validation admits is 1 MiB; 10 in --quick), over 40 MiB in all, that select no pod, listed before one small set that selects pods, on a real API server: a cold pod-inject (a new Lambda instance composed as on AWS, in a fresh process) injects the small set's sidecar within the review's ${REVIEW_DEADLINE_MS / 1000} s deadline, and a cold resync (with the heap cap the stack gives status-sync) completes and counts the small set's pods. The SidecarSet lists are read in pages whose bytes are bounded, the first of 4 sets (4 of the largest valid sets fit a page's 4 MiB target), each set kept without its managedFields; what a process keeps grows with the sets' total size (heapAfterGcMiB).`,
    async run({ quick }) {
      const cluster = await startRolloutCluster({ readyDelayMs: 300, listsFromEtcd: false });
      try {
        return await largeSidecarSets(cluster.cp, { largeSets: quick ? 10 : 41, bytesPerSet: LARGE_SET_BYTES, statusSyncHeapOption: heapNodeOptions(CONTEXT_DEFAULTS.statusSyncMemoryMb) });
      } finally {
        await cluster.stop();
      }
    },
  },
  {
    section: 'load',
    name: 'The HTTPS server under autocannon',
    claim: 'Three minutes of autocannon (16 connections, as fast as the server answers) sending the three functions\' reviews in turn over TLS to the server in its own process, reading a real API server: zero errors, the same answers before and after, reachable heap and handles flat.',
    async run({ quick }, shared) {
      return httpsSoak({ cp: await shared.seeded(), durationSeconds: quick ? 10 : 180, warmUpSeconds: quick ? 3 : 10 });
    },
  },
];
