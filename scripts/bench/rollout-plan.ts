/**
 * The rollout plan's compute time for a large set (issue 16: a 100,000-pod
 * plan within 1 s), pure and in-process: prints the figures, asserts nothing.
 * `npm run bench`'s rollout section reports the same figures.
 *
 *   node scripts/bench/rollout-plan.ts [--pods N] [--runs N]
 */
import os from 'node:os';
import { planTimes } from '../../testkit/bench/rollout-plan.ts';

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n <= 0) {
    process.stderr.write(`--${name} needs a positive integer\n`);
    process.exit(2);
  }
  return n;
}

const POD_COUNT = flag('pods', 100_000);
const RUNS = flag('runs', 5);

process.stdout.write(`rollout plan, ${POD_COUNT} pods, ${RUNS} runs each (node ${process.version}, load average ${(os.loadavg()[0] ?? 0).toFixed(1)} on ${os.availableParallelism()} CPUs)\n`);
for (const { name, wall, cpu, updates } of planTimes(POD_COUNT, RUNS)) {
  process.stdout.write(`  ${name}: wall median ${wall.median.toFixed(0)} ms (min ${wall.min.toFixed(0)}), CPU median ${cpu.median.toFixed(0)} ms (min ${cpu.min.toFixed(0)}); ${updates} updates planned\n`);
}
