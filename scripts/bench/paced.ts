/**
 * An open-loop load at a fixed rate: request i is sent at start + i/rate
 * whatever happened to the ones before, over a pool of kept-alive HTTPS
 * connections, and its latency runs from that planned moment to the last
 * byte of the answer. autocannon's rate limit instead sends each second's
 * quota in a burst at the start of the second, which measures queueing
 * behind the burst, not the server at that rate.
 */
import { Agent, request } from 'node:https';

export interface PacedLoad {
  url: string;
  body: string;
  /** Requests per second. */
  rate: number;
  durationSeconds: number;
  /** Kept-alive connections the requests share. */
  connections: number;
}

export interface PacedResult {
  /** Answered requests per second of the run. */
  rps: number;
  p50: number;
  p99: number;
  max: number;
  failures: number;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export async function pacedLoad(load: PacedLoad): Promise<PacedResult> {
  // The benchmark's own server, whose certificate is made for it; the TLS work is the same either way.
  const agent = new Agent({ keepAlive: true, maxSockets: load.connections, rejectUnauthorized: false });
  const latencies: number[] = [];
  let failures = 0;
  const send = (plannedAt: number): Promise<void> =>
    new Promise((resolve) => {
      const req = request(load.url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(load.body) } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) latencies.push(performance.now() - plannedAt);
          else failures++;
          resolve();
        });
      });
      req.on('error', () => {
        failures++;
        resolve();
      });
      req.end(load.body);
    });
  const total = Math.round(load.rate * load.durationSeconds);
  const interval = 1000 / load.rate;
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const plannedAt = started + i * interval;
    const wait = plannedAt - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(send(plannedAt));
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  return { rps: latencies.length / elapsed, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN, failures };
}
