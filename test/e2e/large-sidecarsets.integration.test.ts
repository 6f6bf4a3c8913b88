/**
 * 40 MiB of SidecarSets on a real kube-apiserver (issue 36, item 3): a cold
 * pod-inject injects the small set's sidecar within the review's deadline
 * and a cold resync completes and counts the small set's pods, each in
 * a process of its own whose peak RSS is printed (the scenario:
 * testkit/load/large-sidecarsets.ts; its long form in `npm run reliability`).
 *
 * Before the SidecarSet lists were paged: the pod-inject answered 503
 * ("cannot list SidecarSets: the answer is larger than 33554432 bytes;
 * nothing cached") and the resync failed at its SidecarSet list.
 */
import { CONTEXT_DEFAULTS } from '../../infra/aws/config.ts';
import { heapNodeOptions } from '../../infra/aws/heap.ts';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { startRolloutCluster, type RolloutCluster } from '../../testkit/faults/rollout-fixture.ts';
import { LARGE_SET_BYTES, largeSidecarSets } from '../../testkit/load/large-sidecarsets.ts';

describeWithControlPlane('40 MiB of SidecarSets on a real API server', () => {
  let cluster: RolloutCluster;

  beforeAll(async () => {
    // The API server's watch cache serves the lists, as in a real cluster.
    cluster = await startRolloutCluster({ readyDelayMs: 300, listsFromEtcd: false });
  }, 30 * 60_000);

  afterAll(async () => {
    await cluster.stop();
  });

  it('a cold pod-inject injects within the review’s deadline, and a cold resync completes and counts the small set’s pods', async () => {
    const rows = await largeSidecarSets(cluster.cp, { largeSets: 41, bytesPerSet: LARGE_SET_BYTES, statusSyncHeapOption: heapNodeOptions(CONTEXT_DEFAULTS.statusSyncMemoryMb) });
    process.stdout.write(`40 MiB of SidecarSets: ${JSON.stringify(rows)}\n`);
    expect(rows.map((r) => r.run)).toEqual([expect.stringMatching(/^cold pod-inject/), expect.stringMatching(/^cold resync/)]);
    expect(Number(rows[0]?.listMiB)).toBeGreaterThanOrEqual(40);
  }, 15 * 60_000);
});
