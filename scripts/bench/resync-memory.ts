/**
 * `npx node scripts/bench/resync-memory.ts [PODS] [BYTES]`: the peak memory of
 * one resync over PODS pods (default 200) of about BYTES bytes each
 * (default 1,000,000) on the real control plane (resync-memory-run.ts). Prints
 * one JSON line per run, then a summary line: the resync as the stack deploys
 * it against issue 25's 256 MB.
 */
import { resyncMemory, RESYNC_MEMORY_TARGET_MB, STACK_RESYNC } from './resync-memory-run.ts';

const pods = Number(process.argv[2] ?? 200);
const bytes = Number(process.argv[3] ?? 1_000_000);
if (!Number.isInteger(pods) || pods < 1 || !Number.isInteger(bytes) || bytes < 210_000 || bytes > 1_400_000) {
  process.stderr.write('usage: resync-memory.ts [PODS ≥ 1] [BYTES 210000–1400000]\n');
  process.exit(2);
}
const rows = await resyncMemory(pods, bytes, (line) => process.stderr.write(`${line}\n`));
for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
const resyncs = rows.filter((r) => r.run.startsWith('resync'));
const worst = Math.max(...rows.filter((r) => r.run.startsWith(STACK_RESYNC)).map((r) => r.peakRssMB));
process.stdout.write(`${JSON.stringify({ summary: `peak RSS of a resync over ${pods} pods of ${bytes} bytes: ${resyncs.map((r) => `${r.peakRssMiB} MiB (${r.peakRssMB} MB) ${r.run}`).join('; ')}`, targetMB: RESYNC_MEMORY_TARGET_MB, met: worst < RESYNC_MEMORY_TARGET_MB })}\n`);
