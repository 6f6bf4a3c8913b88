/**
 * The status reconciler under real faults on a real API server (issue 7),
 * the short version: each scenario once, on one cluster of 240 pods listed
 * 20 to a page (12 pages), lists read from etcd so that a compaction expires
 * a continue token. `npm run reliability` runs the same scenarios longer
 * (status-sync-faults.ts). Every scenario throws, naming the invariant, when
 * a stored status was computed from part of the pods or the next resync does
 * not converge; the figures checked here say the fault really happened.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { apiServerRestarts, continueTokenExpires, partialStatusIsCaught, podListFailsHalfway, writeConflicts } from '../../testkit/faults/status-sync-faults.ts';
import { startFaultCluster, type FaultCluster } from '../../testkit/faults/status-sync-fixture.ts';

const PODS = 240;
const options = { pageSize: 20, repetitions: 1 };
// Restarts of the API server take seconds each on a busy two-core machine.
const SCENARIO_TIMEOUT_MS = 180_000;

let cluster: FaultCluster | undefined;

function theCluster(): FaultCluster {
  if (cluster === undefined) throw new Error('the cluster did not start');
  return cluster;
}

describeWithControlPlane('the status reconciler under faults, on a real API server', () => {
  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    cluster = await startFaultCluster({ pods: PODS, listsFromEtcd: true });
  }, 10 * 60_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('catches a status written from a pod list cut short, so that the other checks can fail', async () => {
    const figures = await partialStatusIsCaught(theCluster(), options);
    expect(figures.caught).toMatch(/SidecarSet log-agent was stored .* count fewer pods than exist/);
  }, SCENARIO_TIMEOUT_MS);

  it('writes no status when the pod list fails halfway (API server stopped, connection reset mid-page), and the next resync converges', async () => {
    const figures = await podListFailsHalfway(theCluster(), options);
    expect(figures).toMatchObject({ errorsReported: 2, convergedAfterResyncs: 1, minObservedMatched: figures.expectedMatched });
    // Both faulted resyncs wrote nothing: the 8 observed statuses are the 2 converging resyncs' 4 each.
    expect(figures).toMatchObject({ statusesWritten: 8, statusObservations: 8 });
  }, SCENARIO_TIMEOUT_MS);

  it('starts an expired list over and writes complete statuses; writes nothing when it expires every time', async () => {
    const figures = await continueTokenExpires(theCluster(), options);
    // 2 attempts for the resync that recovered, 3 for the one that gave up, 1 for each of 3 later resyncs.
    expect(figures).toMatchObject({ podListAttempts: 8, errorsReported: 1, statusesWritten: 8, minObservedMatched: figures.expectedMatched });
  }, SCENARIO_TIMEOUT_MS);

  it('re-reads a set changed before its status write (409), leaves a set whose selector changed to the next resync, and converges', async () => {
    const figures = await writeConflicts(theCluster(), options);
    // Labelled: 1 conflict; new hash: 1; selector changed: 1; changing before every write: 4.
    expect(figures).toMatchObject({ conflicts: 7, errorsReported: 2, convergedAfterResyncs: 1 });
  }, SCENARIO_TIMEOUT_MS);

  it('writes nothing partial when the API server restarts mid-resync (between pages, in the background, between writes), and converges', async () => {
    const figures = await apiServerRestarts(theCluster(), options);
    expect(figures).toMatchObject({ convergedAfterResyncs: 1, minObservedMatched: figures.expectedMatched });
    // The writes after the stop failed and were reported; the resyncs that converged wrote the rest.
    expect(figures.errorsReported).toBeGreaterThanOrEqual(3);
  }, SCENARIO_TIMEOUT_MS);
});
