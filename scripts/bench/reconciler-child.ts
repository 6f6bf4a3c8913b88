/**
 * One run of the reconciler benchmark in a fresh process (so that its peak
 * RSS is its own): `resync` runs one resync through the Lambda's own
 * composition; `floor` lists the same pods with the same page size and the
 * SidecarSets, through the same transport, parsing the JSON and nothing
 * else. Prints one JSON line: the duration, the CPU time this process spent
 * in it (user and system: less sensitive to a busy machine than the
 * duration), the load average at its end, the result, maxRSS.
 *
 *   KUBECONFIG_CONTENT=... node scripts/bench/reconciler-child.ts resync|floor [FLOOR_PAGE_SIZE]
 */
import { loadavg } from 'node:os';
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { DEFAULT_POD_PAGE_SIZE } from '../../lib/adapters/kube-pods.ts';
import type { KubeClient } from '../../lib/adapters/kube-request.ts';
import { kubeConfigClient } from '../../lib/adapters/kubeconfig.ts';
import { clusterKubeConfig } from '../../functions/shared/cluster.ts';
import { composeStatusSync } from '../../functions/status-sync/compose.ts';

const mode = process.argv[2];
const floorPageSize = Number(process.argv[3] ?? DEFAULT_POD_PAGE_SIZE);

/** GET `path` through the project's one transport with the KubeConfig's authentication, parsed. */
async function getJson(client: KubeClient, path: string, query: Record<string, string> = {}): Promise<{ items?: unknown[]; metadata?: { continue?: string } }> {
  const answer = await client.request({ method: 'GET', path, query, operation: `GET ${path}` });
  if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
  return answer.body as { items?: unknown[]; metadata?: { continue?: string } };
}

async function floor(): Promise<{ podsSeen: number; setsSeen: number }> {
  const client = kubeConfigClient(await clusterKubeConfig(process.env));
  const sets = await getJson(client, '/apis/apps.kruise.io/v1alpha1/sidecarsets');
  let podsSeen = 0;
  let next: string | undefined;
  do {
    const page = await getJson(client, '/api/v1/pods', { limit: String(floorPageSize), ...(next === undefined ? {} : { continue: next }) });
    podsSeen += page.items?.length ?? 0;
    next = page.metadata?.continue === '' ? undefined : page.metadata?.continue;
  } while (next !== undefined);
  client.close();
  return { podsSeen, setsSeen: sets.items?.length ?? 0 };
}

let result: unknown;
let durationMs: number;
let cpu: NodeJS.CpuUsage;
if (mode === 'resync') {
  const runtime = await composeStatusSync(process.env, { logger: jsonLogger({}, () => undefined) });
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  result = await runtime.resync();
  durationMs = performance.now() - started;
  cpu = process.cpuUsage(cpuBefore);
} else if (mode === 'floor') {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  result = await floor();
  durationMs = performance.now() - started;
  cpu = process.cpuUsage(cpuBefore);
} else {
  throw new Error(`usage: reconciler-child.ts resync|floor [FLOOR_PAGE_SIZE] (got ${mode ?? 'nothing'})`);
}
const cpuMs = (cpu.user + cpu.system) / 1000;
process.stdout.write(`${JSON.stringify({ durationMs, cpuMs, load1: loadavg()[0], result, maxRssKiB: process.resourceUsage().maxRSS })}\n`);
