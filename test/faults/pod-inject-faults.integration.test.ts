/**
 * Short runs of the pod injection fault scenarios against the real control
 * plane (the longer ones: npm run reliability). One stack serves both: the
 * scenarios throw, naming every broken invariant, and return their figures,
 * which are checked here for the outcomes each run must have produced.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { injectionUnderApiFaults, podCreationUnderApiFaults, SHORT_CACHE, startFaultStack, type FaultStack } from '../../testkit/faults/pod-inject-faults.ts';

let stack: FaultStack;

describeWithControlPlane('pod injection while the API server is slow or unreachable', () => {
  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    stack = await startFaultStack({ cache: SHORT_CACHE, webhookTimeoutSeconds: 3 });
  }, 10 * 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  it('answers every review in time: read fresh while the API server is reachable, from the last list (within max staleness) or with a failed call while it is not, and the new list after recovery', async () => {
    const figures = await injectionUnderApiFaults({ stack, pastStalenessMs: 600 });
    process.stdout.write(`injectionUnderApiFaults ${JSON.stringify(figures)}\n`);
    expect(figures.answeredInTime).toBe(figures.requests);
    for (const fault of ['slow', 'reset', 'blackhole', 'proxy-stopped', 'apiserver-stopped']) {
      expect(figures[`${fault}.servedFromCache`]).toBeGreaterThan(0);
      expect(figures[`${fault}.failedCalls`]).toBeGreaterThan(0);
    }
    expect(figures.recoveries).toBe(5);
  }, 120_000);

  it('creates pods with exactly their sidecars, or refuses them (Fail) or creates them bare (Ignore), never denies', async () => {
    const figures = await podCreationUnderApiFaults({
      stack,
      // One fault per policy keeps npm test short; the slow path (a read cut
      // at the per-call cap) under Fail, the fast one (a reset) under Ignore.
      faults: { Fail: ['blackhole'], Ignore: ['reset'] },
      pastStalenessMs: 600,
    });
    process.stdout.write(`podCreationUnderApiFaults ${JSON.stringify(figures)}\n`);
    expect(figures.podsInjected).toBeGreaterThan(0);
    expect(figures.podsRefused).toBeGreaterThan(0);
    expect(figures.podsNotInjected).toBeGreaterThan(0);
  }, 120_000);
});
