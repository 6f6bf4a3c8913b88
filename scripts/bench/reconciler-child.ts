/**
 * One run of the reconciler benchmark in a fresh process (so that its peak
 * RSS is its own): `pass` runs one status pass through the Lambda's own
 * composition; `floor` lists the same pods with the same page size and the
 * SidecarSets, through the same transport, parsing the JSON and nothing
 * else. Prints one JSON line: the duration, the result, maxRSS.
 *
 *   KUBECONFIG_CONTENT=... node scripts/bench/reconciler-child.ts pass|floor
 */
import { HttpMethod, IsomorphicFetchHttpLibrary, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { DEFAULT_POD_PAGE_SIZE } from '../../lib/adapters/kube-status-sync.ts';
import { clusterKubeConfig } from '../../functions/shared/cluster.ts';
import { composeStatusSync } from '../../functions/status-sync/compose.ts';

const mode = process.argv[2];

/** GET `path` through client-node's transport with the KubeConfig's authentication, parsed. */
async function getJson(kc: KubeConfig, http: IsomorphicFetchHttpLibrary, server: string, path: string): Promise<{ items?: unknown[]; metadata?: { continue?: string } }> {
  const context = new RequestContext(`${server}${path}`, HttpMethod.GET);
  context.setHeaderParam('Accept', 'application/json');
  await kc.applySecurityAuthentication(context);
  const response = await http.send(context).toPromise();
  const text = await response.body.text();
  if (response.httpStatusCode !== 200) throw new Error(`GET ${path}: ${response.httpStatusCode} ${text.slice(0, 300)}`);
  return JSON.parse(text) as { items?: unknown[]; metadata?: { continue?: string } };
}

async function floor(): Promise<{ podsSeen: number; setsSeen: number }> {
  const kc = await clusterKubeConfig(process.env);
  const server = (kc.getCurrentCluster()?.server ?? '').replace(/\/$/, '');
  const http = new IsomorphicFetchHttpLibrary();
  const sets = await getJson(kc, http, server, '/apis/apps.kruise.io/v1alpha1/sidecarsets');
  let podsSeen = 0;
  let next: string | undefined;
  do {
    const query = new URLSearchParams({ limit: String(DEFAULT_POD_PAGE_SIZE) });
    if (next !== undefined) query.set('continue', next);
    const page = await getJson(kc, http, server, `/api/v1/pods?${query.toString()}`);
    podsSeen += page.items?.length ?? 0;
    next = page.metadata?.continue === '' ? undefined : page.metadata?.continue;
  } while (next !== undefined);
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
