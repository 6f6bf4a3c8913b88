/**
 * One run of the reconciler benchmark in a fresh process (so that its peak
 * RSS is its own): `pass` runs one status pass through the Lambda's own
 * composition; `floor` lists the same pods with the same page size and the
 * SidecarSets, through the same transport, parsing the JSON and nothing
 * else. Prints one JSON line: the duration, the result, maxRSS.
 *
 *   KUBECONFIG_CONTENT=... node scripts/bench/reconciler-child.ts pass|floor
 */
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { DEFAULT_POD_PAGE_SIZE } from '../../lib/adapters/kube-pods.ts';
import type { KubeClient } from '../../lib/adapters/kube-request.ts';
import { kubeConfigClient } from '../../lib/adapters/kubeconfig.ts';
import { clusterKubeConfig } from '../../functions/shared/cluster.ts';
import { composeStatusSync } from '../../functions/status-sync/compose.ts';

const mode = process.argv[2];

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
    const page = await getJson(client, '/api/v1/pods', { limit: String(DEFAULT_POD_PAGE_SIZE), ...(next === undefined ? {} : { continue: next }) });
    podsSeen += page.items?.length ?? 0;
    next = page.metadata?.continue === '' ? undefined : page.metadata?.continue;
  } while (next !== undefined);
  client.close();
  return { podsSeen, setsSeen: sets.items?.length ?? 0 };
}

let result: unknown;
let durationMs: number;
if (mode === 'pass') {
  const runtime = await composeStatusSync(process.env, { logger: jsonLogger({}, () => undefined) });
  const started = performance.now();
  result = await runtime.runPass();
  durationMs = performance.now() - started;
} else if (mode === 'floor') {
  const started = performance.now();
  result = await floor();
  durationMs = performance.now() - started;
} else {
  throw new Error(`usage: reconciler-child.ts pass|floor (got ${mode ?? 'nothing'})`);
}
process.stdout.write(`${JSON.stringify({ durationMs, result, maxRssKiB: process.resourceUsage().maxRSS })}\n`);
