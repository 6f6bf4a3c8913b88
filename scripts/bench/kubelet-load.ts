/**
 * The test kubelet's throughput on the real control plane (not part of
 * `npm run bench`'s report): N new pods until all are Ready, then one image
 * change in each until all are Ready again.
 *
 *   node scripts/bench/kubelet-load.ts [PODS] [READY_DELAY_MS]    (default 1000 2000)
 */
import { benchControlPlane } from '../../testkit/bench/cluster.ts';
import { kubeletLoad } from '../../testkit/bench/kubelet-load.ts';

const [podsText = '1000', delayText = '2000'] = process.argv.slice(2);
const pods = /^\d{1,6}$/.test(podsText) ? Number(podsText) : 0;
const readyDelayMs = /^\d{1,7}$/.test(delayText) ? Number(delayText) : -1;
if (pods < 1 || readyDelayMs < 0) {
  process.stderr.write(`usage: node scripts/bench/kubelet-load.ts [PODS (1-999999)] [READY_DELAY_MS]; got ${JSON.stringify(process.argv.slice(2))}\n`);
  process.exit(2);
}

const cp = await benchControlPlane();
try {
  const result = await kubeletLoad(cp, { pods, readyDelayMs });
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  process.stdout.write(
    [
      `test kubelet, ${result.pods} pods, readyDelayMs ${result.readyDelayMs}`,
      `  creating them:                  ${s(result.createMs)}`,
      `  all Ready, from the first creation: ${s(result.allReadyMs)}`,
      `  patching one image in each:     ${s(result.patchMs)}`,
      `  all updated and Ready, from the first patch: ${s(result.allUpdatedMs)} (the delay alone: ${s(result.readyDelayMs)})`,
      `  kubelet: ${JSON.stringify(result.counters)}`,
      '',
    ].join('\n'),
  );
} finally {
  await cp.stop();
}
