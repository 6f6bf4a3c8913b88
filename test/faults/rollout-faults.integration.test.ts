/**
 * The in-place rollout under real faults on a real API server (issue 16),
 * the short version: each fault on a few seeds and sizes, one control plane
 * with the test kubelet (containers ready 300 ms after a restart), the
 * reconciler composed as the Lambda runs it. Every scenario throws, naming
 * the rule, when more updated pods than maxUnavailable were unavailable at
 * any stored moment, a pod's sidecar was written twice, or the rollout did
 * not converge (every pod updated and Ready, the status {N, N, N, N});
 * the figures checked here say the fault really happened.
 * `npm run reliability` runs more seeds and larger sets (rollout-faults.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { brokenHotSwapIsCaught, brokenRolloutIsCaught, rolloutUnderFault } from '../../testkit/faults/rollout-faults.ts';
import { startRolloutCluster, type RolloutCluster } from '../../testkit/faults/rollout-fixture.ts';

// Seeding, restarts and the rollout itself take tens of seconds on a busy two-core machine.
const SCENARIO_TIMEOUT_MS = 300_000;

let cluster: RolloutCluster | undefined;

function theCluster(): RolloutCluster {
  if (cluster === undefined) throw new Error('the cluster did not start');
  return cluster;
}

describeWithControlPlane('the in-place rollout under faults, on a real API server', () => {
  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    cluster = await startRolloutCluster({ readyDelayMs: 300 });
  }, 10 * 60_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('catches a rollout over maxUnavailable and a sidecar written twice, so that the other checks can fail', async () => {
    const figures = await brokenRolloutIsCaught(theCluster());
    expect(figures.podsWritten).toBe(8);
    expect(figures.maxUnavailableSeen).toBeGreaterThan(2);
    expect(figures.overBudgetCaught).toBeGreaterThan(0);
    expect(figures.writtenTwiceCaught).toBeGreaterThan(0);
  }, SCENARIO_TIMEOUT_MS);

  it('rolls out without a fault within maxUnavailable, each pod written once', async () => {
    const figures = await rolloutUnderFault(theCluster(), { fault: 'none', pods: 24, maxUnavailable: '25%', seed: 1 });
    // Six at a time: the budget is used in full and never exceeded.
    expect(figures).toMatchObject({ budget: 6, maxUnavailableSeen: 6, imageWrites: 24, repeatedImageWrites: 0, podsUpdated: 24, errorsReported: 0 });
  }, SCENARIO_TIMEOUT_MS);

  it.each([
    { pods: 30, maxUnavailable: '20%', seed: 11 },
    { pods: 17, maxUnavailable: 2, seed: 12 },
  ])('survives an API server restart mid-rollout ($pods pods, maxUnavailable $maxUnavailable, seed $seed)', async (size) => {
    const figures = await rolloutUnderFault(theCluster(), { fault: 'api-server-restarts', ...size });
    expect(figures).toMatchObject({ restarts: 1, repeatedImageWrites: 0 });
    // The restart struck with the rollout under way, not before or after it.
    expect(figures.restartAtUpdated).toBeGreaterThan(0);
    expect(figures.restartAtUpdated).toBeLessThan(size.pods);
    // Failed requests are retried at the requeue-after interval, not at once: a loop woken by each failure reported 1,000-2,000.
    expect(figures.errorsReported).toBeLessThan(200);
  }, SCENARIO_TIMEOUT_MS);

  it.each([
    { pods: 30, maxUnavailable: '20%', seed: 21 },
    { pods: 20, maxUnavailable: 3, seed: 22 },
  ])('survives its connections being reset mid-rollout ($pods pods, maxUnavailable $maxUnavailable, seed $seed)', async (size) => {
    const figures = await rolloutUnderFault(theCluster(), { fault: 'connection-resets', ...size });
    expect(figures).toMatchObject({ resetWindows: 2, repeatedImageWrites: 0 });
    expect(figures.connectionsReset).toBeGreaterThan(0);
  }, SCENARIO_TIMEOUT_MS);

  it.each([
    { pods: 30, maxUnavailable: '20%', seed: 31 },
    { pods: 12, maxUnavailable: 1, seed: 32 },
  ])('skips pods another writer changed and updates them later ($pods pods, maxUnavailable $maxUnavailable, seed $seed)', async (size) => {
    const figures = await rolloutUnderFault(theCluster(), { fault: 'concurrent-writer', ...size });
    expect(figures).toMatchObject({ repeatedImageWrites: 0, imageWrites: size.pods });
    // The other writer's patches really made the reconciler's guarded writes fail.
    expect(figures.conflicts).toBeGreaterThan(0);
  }, SCENARIO_TIMEOUT_MS);

  it.each([
    { pods: 30, maxUnavailable: '20%', seed: 41 },
    { pods: 15, maxUnavailable: 2, seed: 42 },
  ])('finishes with the remaining pods when pods are deleted mid-rollout ($pods pods, maxUnavailable $maxUnavailable, seed $seed)', async (size) => {
    const figures = await rolloutUnderFault(theCluster(), { fault: 'pods-deleted', ...size });
    expect(figures).toMatchObject({ podsDeleted: 2, repeatedImageWrites: 0 });
  }, SCENARIO_TIMEOUT_MS);

  describe('HotUpgrade: upgrade, then flip, each pod', () => {
    it('catches a working container given the empty image and a pod with nothing serving, so that the hot checks can fail', async () => {
      // Each stored version while the fault lasts is one violation (the test kubelet restarts the emptied container meanwhile).
      const figures = await brokenHotSwapIsCaught(theCluster());
      expect(figures.workingEmptyCaught).toBeGreaterThan(0);
      expect(figures.nothingServingCaught).toBeGreaterThan(0);
    }, SCENARIO_TIMEOUT_MS);

    it('swaps every pod without a fault: one write into the empty container, one flip, within maxUnavailable', async () => {
      const figures = await rolloutUnderFault(theCluster(), { fault: 'none', pods: 12, maxUnavailable: 3, seed: 51, hot: true });
      expect(figures).toMatchObject({ budget: 3, imageWrites: 12, repeatedImageWrites: 0, podsUpdated: 12, podsFlipped: 12, flipsSeen: 12, errorsReported: 0 });
    }, SCENARIO_TIMEOUT_MS);

    it.each([
      { pods: 16, maxUnavailable: 4, seed: 52 },
      { pods: 9, maxUnavailable: 1, seed: 53 },
    ])('survives an API server restart between pods’ upgrade and flip ($pods pods, maxUnavailable $maxUnavailable, seed $seed)', async (size) => {
      const figures = await rolloutUnderFault(theCluster(), { fault: 'api-server-restarts', hot: true, ...size });
      expect(figures).toMatchObject({ restarts: 1, repeatedImageWrites: 0, flipsSeen: size.pods });
      expect(figures.restartAtSwapping).toBeGreaterThan(0);
    }, SCENARIO_TIMEOUT_MS);

    it('skips upgrades and flips another writer got in the way of, and does them later', async () => {
      const figures = await rolloutUnderFault(theCluster(), { fault: 'concurrent-writer', pods: 16, maxUnavailable: 4, seed: 54, hot: true });
      expect(figures).toMatchObject({ repeatedImageWrites: 0, imageWrites: 16, flipsSeen: 16 });
      expect(figures.conflicts).toBeGreaterThan(0);
    }, SCENARIO_TIMEOUT_MS);
  });
});
