/**
 * Section 1b: this project's pod-inject against OpenKruise's own pod webhook,
 * on the same request body and the same 50 stored SidecarSets (section 1's
 * inputs), in one bench run, their runs alternating. Kruise's reviews are
 * timed inside its Go process (testkit/bench/kruise-pod-bench.ts), so that
 * neither process start nor the pipe is counted. Skipped, loudly, without Go.
 */
import { benchNamespaces, clusterSidecarSets } from '../../testkit/bench/admission-inputs.ts';
import { ensureKruisePodBench, kruiseBenchUnavailable, startKruisePodBench } from '../../testkit/bench/kruise-pod-bench.ts';
import { kruiseReferenceVersion } from '../../testkit/conformance/kruise-reference.ts';
import { alternate, summarize } from '../../testkit/bench/stats.ts';
import { reviewOnce } from './admission-compute.ts';
import { bytesText, ratioText, withSpread } from './format.ts';
import type { SectionReport } from './report.ts';

export interface KruisePodSettings {
  runs: number;
  runMs: number;
}

/** pod-inject must answer at least this many times faster than Kruise's handler. */
export const KRUISE_POD_TARGET = 5;

const TITLE = '1b. pod-inject against Kruise\'s pod webhook (in-process, same inputs)';
const TARGET = `pod-inject: ≥ ${KRUISE_POD_TARGET}× faster than Kruise's pod webhook (CPU per review; same review, same 50 SidecarSets)`;

/** One run's cost per review: wall clock, and the process's CPU time. */
interface PerReview {
  wallUs: number;
  cpuUs: number;
}

function method(version: string): string[] {
  return [
    `Both sides answer section 1's pod review (the same request body) against the same 50 stored SidecarSets, 5 of which select the pod. This project: one call of \`serveAdmission\`, as in section 1. OpenKruise ${version}: its \`PodCreateHandler\` (pkg/webhook/pod/mutating, every mutation its default feature gates enable) behind controller-runtime's \`admission.Webhook.ServeHTTP\`, called in-process with the request body (an httptest request and recorder): the body read, the AdmissionReview decoded, the handler, the answer and its JSON Patch encoded, the same work as \`serveAdmission\` less the caller check and the log line, which Kruise does not do here (TLS client authentication happens before).`,
    'Kruise reads its SidecarSets as its manager serves them: from an informer cache by the namespace field index, without a deep copy (it lists with `DisableDeepCopy`): a list is an index lookup and a struct copy per set. Kinds the cluster holds none of (WorkloadSpreads, PodUnavailableBudgets, PersistentPodStates...) list empty at once. The bench pod\'s ReplicaSet is not in that cluster, so Kruise\'s PodUnavailableBudget step ends its owner lookup at a NotFound (from a fake client holding the same objects), where a real cluster would have it read the ReplicaSet and its Deployment from the cache: if anything, a little less work for Kruise here. Its reviews are timed inside its Go process (control-plane/tools/kruise-reference/podbench), with GOMAXPROCS=1 so that its collector shares one core with the reviews as Node\'s does; this project\'s inside the bench process. Runs alternate between the two, so a busy moment of the shared machine hits both. The target is judged on CPU time per review (each process\'s own, measured around its loop: Go\'s every thread, the collector\'s too), which counts the work; the wall clock, also shown, counts waiting for a core as well, which on a shared machine says more about the neighbours.',
  ];
}

/**
 * Reviews back to back for about `runMs` (the clock read every 50, as
 * opsPerSecond does), timed by the wall clock and the process's CPU time.
 */
async function timedReviews(review: () => Promise<unknown>, runMs: number): Promise<PerReview> {
  const batch = 50;
  let reviews = 0;
  const cpuStarted = process.cpuUsage();
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < runMs) {
    for (let i = 0; i < batch; i++) await review();
    reviews += batch;
    elapsed = performance.now() - started;
  }
  const cpu = process.cpuUsage(cpuStarted);
  return { wallUs: (elapsed * 1000) / reviews, cpuUs: (cpu.user + cpu.system) / reviews };
}

export async function kruisePodSection(settings: KruisePodSettings, log: (line: string) => void): Promise<SectionReport> {
  const version = await kruiseReferenceVersion('1.9');
  const unavailable = kruiseBenchUnavailable();
  if (unavailable !== undefined) {
    log(`\n*** bench: Kruise's pod webhook NOT measured: ${unavailable}. Install Go 1.26 to measure it. ***\n`);
    return {
      id: 'kruise',
      title: TITLE,
      method: method(version),
      table: { headers: ['figure', 'value'], rows: [['not measured', unavailable]] },
      verdicts: [{ target: TARGET, figure: 'not measured (no Go)', met: false, skipped: true }],
      notes: [],
    };
  }
  log('  building or finding Kruise\'s pod webhook bench (minutes on a cold Go cache)...');
  const binary = await ensureKruisePodBench();
  const kruise = startKruisePodBench(binary);
  try {
    const { body, review } = reviewOnce('pod-inject');
    const first = await review();
    if (first.statusCode !== 200 || !first.body.includes('"patch"')) throw new Error(`pod-inject did not patch the bench pod: ${first.statusCode} ${first.body.slice(0, 300)}`);
    const kruiseFirst = await kruise.setup(body, { sidecarSets: clusterSidecarSets(), namespaces: benchNamespaces() });
    const ours = () => timedReviews(review, settings.runMs);
    const theirs = async (): Promise<PerReview> => {
      const run = await kruise.run(settings.runMs);
      return { wallUs: run.nsPerOp / 1000, cpuUs: run.cpuNsPerOp / 1000 };
    };
    // Warm both up, so that neither first run is its JIT's or its heap's growth.
    await ours();
    await theirs();
    const runs = await alternate(settings.runs, ours, theirs);
    const oursUs = summarize(runs.measured.map((r) => r.cpuUs));
    const kruiseUs = summarize(runs.floor.map((r) => r.cpuUs));
    const oursWall = summarize(runs.measured.map((r) => r.wallUs));
    const kruiseWall = summarize(runs.floor.map((r) => r.wallUs));
    const ratio = kruiseUs.median / oursUs.median;
    const wallRatio = kruiseWall.median / oursWall.median;
    const ourPatch = (JSON.parse(first.body) as { response: { patch: string } }).response.patch;
    const ourOps = (JSON.parse(Buffer.from(ourPatch, 'base64').toString('utf8')) as unknown[]).length;
    return {
      id: 'kruise',
      title: TITLE,
      method: method(version),
      table: {
        headers: ['webhook', 'CPU per review', 'wall per review', 'answer', 'patch operations'],
        rows: [
          ['pod-inject (this project, Node)', withSpread(oursUs, 'µs', 0), withSpread(oursWall, 'µs', 0), bytesText(Buffer.byteLength(first.body)), String(ourOps)],
          [`Kruise ${version} PodCreateHandler (Go)`, withSpread(kruiseUs, 'µs', 0), withSpread(kruiseWall, 'µs', 0), bytesText(kruiseFirst.answerBytes), String(kruiseFirst.patchOps)],
          ['Kruise ÷ pod-inject', ratioText(ratio), ratioText(wallRatio), '', ''],
        ],
      },
      verdicts: [{ target: TARGET, figure: ratioText(ratio), met: ratio >= KRUISE_POD_TARGET }],
      notes: [],
    };
  } finally {
    await kruise.close();
  }
}
