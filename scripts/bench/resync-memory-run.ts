/**
 * The peak memory of one resync over pods of about a megabyte (issue 25
 * §4), on the real control plane: what `scripts/bench/resync-memory.ts` prints
 * and `npm run reliability` reports. `pods` pods of about `bytes` bytes each
 * (a 200 kB annotation, the rest a container argument, as annotations may
 * hold 256 KiB in all), none selected by the one SidecarSet, as the resync
 * meets them anywhere in the cluster. Each run is a fresh process
 * (reconciler-child.ts): the resync through the Lambda's own composition, as
 * Node starts by default and with the NODE_OPTIONS the stack gives
 * status-sync (infra/aws/heap.ts); and the floor, which reads the same pods
 * in pages of the resync's size, each page whole and then parsed (the way the
 * resync read them before items were parsed as they arrive).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONTEXT_DEFAULTS } from '../../infra/aws/config.ts';
import { heapNodeOptions } from '../../infra/aws/heap.ts';
import { nextPageSize } from '../../lib/adapters/pod-page-size.ts';
import { benchControlPlane, create, forCreate, inParallel, SIDECARSETS_PATH } from '../../testkit/bench/cluster.ts';
import { runChild } from './child.ts';
import { reconcilerSidecarSets } from './reconciler-cluster.ts';

/** Issue 25's bound on a resync over 200 pods of 1 MB. */
export const RESYNC_MEMORY_TARGET_MB = 256;
/** The run judged against it: the resync as the stack deploys it. */
export const STACK_RESYNC = "resync (the stack's NODE_OPTIONS";

export interface ResyncMemoryRow {
  run: string;
  pods: number;
  bytesPerPod: number;
  peakRssMiB: number;
  peakRssMB: number;
  durationMs: number;
  podsSeen: number | string;
}

const childFile = join(dirname(fileURLToPath(import.meta.url)), 'reconciler-child.ts');

/** Seeds a fresh control plane, runs the resync (twice) and the floor, and returns one row per run. */
export async function resyncMemory(pods: number, bytes: number, log: (line: string) => void): Promise<ResyncMemoryRow[]> {
  const cp = await benchControlPlane();
  try {
    await create(cp, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'big' } });
    const [set] = reconcilerSidecarSets(1);
    if (set !== undefined) await create(cp, SIDECARSETS_PATH, forCreate(set));
    const started = performance.now();
    await inParallel(Array.from({ length: pods }, (_, i) => i), 4, (i) =>
      create(cp, '/api/v1/namespaces/big/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `big-${String(i).padStart(4, '0')}`, labels: { app: 'unselected' }, annotations: { 'example.com/blob': 'a'.repeat(200_000) } },
        spec: { containers: [{ name: 'app', image: 'app:1', args: ['b'.repeat(bytes - 200_000)] }] },
      }),
    );
    log(`${pods} pods of ~${bytes} bytes created in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    const env = { PATH: process.env.PATH ?? '', KUBECONFIG_CONTENT: cp.kubeconfig('functions') };
    const stackOptions = heapNodeOptions(CONTEXT_DEFAULTS.statusSyncMemoryMb);
    // The floor's pages hold as many pods as the resync's do once it has seen one page.
    const floorPage = nextPageSize(bytes * 4, 4);
    const variants = [
      { name: 'resync (Node as it starts)', args: ['resync'], env },
      { name: `resync (the stack's NODE_OPTIONS, ${stackOptions})`, args: ['resync'], env: { ...env, NODE_OPTIONS: stackOptions } },
      { name: `floor (pages of ${floorPage} pods read whole, then parsed)`, args: ['floor', String(floorPage)], env },
    ];
    const rows: ResyncMemoryRow[] = [];
    for (const variant of variants) {
      const run = await runChild<{ durationMs: number; maxRssKiB: number; result: { podsSeen?: number } }>(childFile, variant.args, variant.env);
      rows.push({
        run: variant.name,
        pods,
        bytesPerPod: bytes,
        peakRssMiB: Math.round(run.maxRssKiB / 1024),
        peakRssMB: Math.round((run.maxRssKiB * 1024) / 1e6),
        durationMs: Math.round(run.durationMs),
        podsSeen: run.result.podsSeen ?? 'unknown',
      });
    }
    return rows;
  } finally {
    await cp.stop();
  }
}
