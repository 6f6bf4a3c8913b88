/**
 * `npx node scripts/bench/pass-memory.ts [PODS] [BYTES]`: the peak memory of
 * one status pass over pods of a megabyte (issue 25 §4), on the real control
 * plane. PODS pods (default 200) of about BYTES bytes each (default
 * 1,000,000: a 200 kB annotation, the rest a container argument, as
 * annotations may hold 256 KiB in all), none selected by the one SidecarSet,
 * as the pass meets them anywhere in the cluster. The pass runs in a fresh
 * process through the Lambda's own composition (reconciler-child.ts `pass`);
 * so does the floor, which reads the same pods in pages of 500 whole objects
 * and parses them (the way the pass read them before pages were bounded by
 * bytes). Prints one JSON line per run, then a summary line.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { reconcilerSidecarSets } from './reconciler-cluster.ts';
import { runChild } from './child.ts';
import { benchControlPlane, create, forCreate, inParallel, SIDECARSETS_PATH } from '../../testkit/bench/cluster.ts';

const pods = Number(process.argv[2] ?? 200);
const bytes = Number(process.argv[3] ?? 1_000_000);
if (!Number.isInteger(pods) || pods < 1 || !Number.isInteger(bytes) || bytes < 210_000 || bytes > 1_400_000) {
  process.stderr.write('usage: pass-memory.ts [PODS ≥ 1] [BYTES 210000–1400000]\n');
  process.exit(2);
}
const childFile = join(dirname(fileURLToPath(import.meta.url)), 'reconciler-child.ts');

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
  process.stderr.write(`${pods} pods of ~${bytes} bytes created in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  const env = { ...process.env, KUBECONFIG_CONTENT: cp.kubeconfig('functions') };
  const runs: Record<string, { durationMs: number; maxRssKiB: number; result: unknown }> = {};
  // Unbounded, V8 lets garbage pile up before collecting; with the old-space heap capped (as Lambda's memory
  // setting makes V8 size it), the run shows what the pass needs: it fails if it needs more.
  const variants = [
    { name: 'pass', mode: 'pass', nodeArgs: [] },
    { name: 'pass, heap capped at 128 MiB', mode: 'pass', nodeArgs: ['--max-old-space-size=128'] },
    { name: 'floor (pages of 500 whole pods)', mode: 'floor', nodeArgs: [] },
  ];
  for (const variant of variants) {
    const run = await runChild<{ durationMs: number; maxRssKiB: number; result: unknown }>(childFile, [variant.mode], env, variant.nodeArgs).catch((error: unknown) => ({ durationMs: Number.NaN, maxRssKiB: Number.NaN, result: { failed: String(error).slice(0, 300) } }));
    runs[variant.name] = run;
    process.stdout.write(`${JSON.stringify({ run: variant.name, peakRssMiB: Math.round(run.maxRssKiB / 1024), durationMs: Math.round(run.durationMs), podsSeen: (run.result as { podsSeen?: number }).podsSeen, ...((run.result as { failed?: string }).failed === undefined ? {} : { failed: (run.result as { failed: string }).failed }) })}\n`);
  }
} finally {
  await cp.stop();
}
