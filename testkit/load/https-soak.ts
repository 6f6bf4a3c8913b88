/**
 * The HTTPS webhook server under sustained load: autocannon sends the three
 * functions' reviews in turn over TLS on loopback, as fast as the server
 * answers, while the server (a process of its own, reading a real API
 * server) is sampled for memory. Every answer must be a 200, the answers
 * before and after must be the same, and the memory still reachable after a
 * full collection must not grow.
 */
import autocannon from 'autocannon';
import { fork, type ChildProcess } from 'node:child_process';
import { request } from 'node:https';
import { fileURLToPath } from 'node:url';
import { benchReview } from '../bench/admission-inputs.ts';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { SECRET } from '../reviews.ts';
import type { Figures } from '../reliability/figures.ts';
import { assertFlat, flatness, round, type FlatLimits, type MemorySample } from './memory.ts';

export interface HttpsSoakOptions {
  /** A control plane holding the benchmarks' cluster (testkit/bench/cluster.ts seedAdmissionCluster). */
  cp: ControlPlane;
  durationSeconds: number;
  /** Load before the measured run, so that the baseline sample is of a warm server. Default 5. */
  warmUpSeconds?: number;
  /** Concurrent connections. Default 16. */
  connections?: number;
  /** Seconds between memory samples. Default a tenth of the run. */
  sampleEverySeconds?: number;
  limits?: Partial<FlatLimits>;
}

const CHILD = fileURLToPath(new URL('./server-child.ts', import.meta.url));

/** The requests of the mix: what the API server sends each function. */
function mix(): { fn: string; body: string }[] {
  return (['pod-inject', 'sidecarset-validate', 'sidecarset-default'] as const).map((fn) => ({ fn, body: benchReview(fn, `soak-${fn}`) }));
}

const path = (fn: string): string => `/${fn}/${SECRET}?timeout=10s`;

interface Server {
  child: ChildProcess;
  url: string;
  caPem: string;
  sample(): Promise<MemorySample>;
  stop(): Promise<void>;
}

function startServer(cp: ControlPlane): Promise<Server> {
  const child = fork(CHILD, [], {
    env: { ...process.env, WEBHOOK_SECRET: SECRET, KUBECONFIG_CONTENT: cp.kubeconfig('functions') },
    // Not jest's flags: the server runs as `npm start` would run it.
    execArgv: ['--no-warnings=ExperimentalWarning'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => { resolve(); }));
  const next = <T>(pick: (message: Record<string, unknown>) => T | undefined, what: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`the server process sent no ${what} within 30 s`));
      }, 30_000);
      const onMessage = (message: unknown) => {
        if (typeof message !== 'object' || message === null) return;
        const record = message as Record<string, unknown>;
        if (typeof record.error === 'string') {
          cleanup();
          reject(new Error(`the server process failed: ${record.error}`));
          return;
        }
        const value = pick(record);
        if (value === undefined) return;
        cleanup();
        resolve(value);
      };
      const onExit = () => {
        cleanup();
        reject(new Error(`the server process exited before sending its ${what}`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  return next((m) => (typeof m.url === 'string' && typeof m.caPem === 'string' ? { url: m.url, caPem: m.caPem } : undefined), 'address').then(
    ({ url, caPem }) => ({
      child,
      url,
      caPem,
      sample() {
        const answer = next((m) => m.sample as MemorySample | undefined, 'memory sample');
        child.send('sample');
        return answer;
      },
      async stop() {
        if (child.exitCode === null && child.connected) child.send('stop');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      },
    }),
    (error: unknown) => {
      child.kill('SIGKILL');
      throw error;
    },
  );
}

/** One request with the certificate verified against the server's CA: the answers, compared before and after. */
function verifiedPost(server: Server, fn: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path(fn)}`, { method: 'POST', ca: server.caPem, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) reject(new Error(`${fn} answered ${String(res.statusCode)}: ${text.slice(0, 300)}`));
        else resolve(text);
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The answers with what legitimately changes (the injection time in annotations) blanked. */
async function answers(server: Server): Promise<string[]> {
  const out: string[] = [];
  for (const { fn, body } of mix()) {
    const review = JSON.parse(await verifiedPost(server, fn, body)) as { response: { patch?: string } };
    const patch = review.response.patch === undefined ? '' : Buffer.from(review.response.patch, 'base64').toString('utf8');
    out.push(JSON.stringify({ ...review.response, patch: patch.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g, 'TIME') }));
  }
  return out;
}

function load(server: Server, seconds: number, connections: number): Promise<autocannon.Result> {
  return autocannon({
    url: server.url,
    connections,
    duration: seconds,
    requests: mix().map(({ fn, body }) => ({ method: 'POST', path: path(fn), headers: { 'content-type': 'application/json' }, body })),
  });
}

/**
 * Runs the soak and returns its figures.
 * @throws Error when a request failed, an answer changed, or memory grew.
 */
export async function httpsSoak(options: HttpsSoakOptions): Promise<Figures> {
  const connections = options.connections ?? 16;
  const sampleEvery = options.sampleEverySeconds ?? Math.max(1, options.durationSeconds / 10);
  const limits: FlatLimits = { maxHeapGrowthMiB: 4, maxRssGrowthMiB: 48, ...options.limits };
  const server = await startServer(options.cp);
  try {
    const before = await answers(server);
    await load(server, options.warmUpSeconds ?? 5, connections);
    const samples: MemorySample[] = [await server.sample()];
    let sampling = Promise.resolve();
    const timer = setInterval(() => {
      sampling = sampling.then(async () => {
        samples.push(await server.sample());
      });
    }, sampleEvery * 1000);
    let result: autocannon.Result;
    try {
      result = await load(server, options.durationSeconds, connections);
    } finally {
      clearInterval(timer);
    }
    await sampling;
    // The server closes its side of autocannon's connections a moment after
    // the run ends: give sockets up to 10 s to go before counting handles.
    const baseline = samples[0]?.activeResources ?? 0;
    let final = await server.sample();
    for (let waited = 0; final.activeResources > baseline && waited < 10_000; waited += 500) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      final = await server.sample();
    }
    samples.push(final);
    const after = await answers(server);

    const problems: string[] = [];
    if (result.errors > 0) problems.push(`${result.errors} connection errors`);
    if (result.timeouts > 0) problems.push(`${result.timeouts} timeouts`);
    if (result.non2xx > 0) problems.push(`${result.non2xx} answers other than 2xx`);
    before.forEach((answer, i) => {
      if (answer !== after[i]) problems.push(`the ${mix()[i]?.fn ?? ''} answer changed under load: ${answer.slice(0, 200)} then ${String(after[i]).slice(0, 200)}`);
    });
    if (problems.length > 0) throw new Error(`HTTPS soak of ${options.durationSeconds} s: ${problems.join('; ')}`);
    const growth = flatness(samples);
    assertFlat(`the HTTPS server after ${result.requests.total} requests`, growth, limits);
    const first = samples[0];
    const last = samples.at(-1);
    return {
      durationSeconds: options.durationSeconds,
      connections,
      requests: result.requests.total,
      requestsPerSecond: round(result.requests.average),
      errors: result.errors,
      timeouts: result.timeouts,
      non2xx: result.non2xx,
      latencyP50Ms: result.latency.p50,
      latencyP90Ms: result.latency.p90,
      latencyP99Ms: result.latency.p99,
      latencyP999Ms: result.latency.p99_9,
      latencyMaxMs: result.latency.max,
      memorySamples: samples.length,
      heapAfterWarmUpMiB: round(first?.heapUsedMiB ?? 0, 2),
      heapAtEndMiB: round(last?.heapUsedMiB ?? 0, 2),
      heapGrowthMiB: round(growth.heapGrowthMiB, 2),
      rssAfterWarmUpMiB: round(first?.rssMiB ?? 0),
      rssAtEndMiB: round(last?.rssMiB ?? 0),
      activeHandlesAfterWarmUp: first?.activeResources ?? 0,
      activeHandlesAtEnd: last?.activeResources ?? 0,
    };
  } finally {
    await server.stop();
  }
}
