/**
 * The injection policy on a real kube-apiserver (no webhook registered): the
 * conformance generator's inject cases, one set at a time (each set the rule
 * sends to the policy, with the case's pod relabelled so that it selects it),
 * created with server-side dryRun through the policy, equal field for field
 * to pod-inject's core answer for the same pod and set, `updateTimestamp`
 * aside (the policy writes null: it has no clock).
 */
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD } from '../../lib/sidecarset/policy-record.ts';
import { comparable, dryRunPod, podInjectAnswer, policyCases, preparePolicyCluster, storeSet, type PolicyCase } from './injection-policy-differential.ts';

const RUNS = 23_000;
const SEED = 20261207;

describeWithControlPlane('the injection policy against pod-inject, one set per pod', () => {
  let cp: ControlPlane;
  const cases: PolicyCase[] = policyCases(RUNS, SEED);
  const stored: SidecarSet[] = [];

  beforeAll(async () => {
    cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await preparePolicyCluster(cp);
    for (const c of cases) stored.push(await storeSet(cp, c.set));
    // The policy reads its params from an informer: give it the sets just stored.
    await new Promise((resolve) => setTimeout(resolve, 3000));
  }, 600_000);

  afterAll(async () => {
    await cp.stop();
  });

  it('injects every case as pod-inject does, with no webhook in the path, or marks it for pod-inject and changes nothing else', async () => {
    const differences: string[] = [];
    let injected = 0;
    for (const [i, c] of cases.entries()) {
      const viaPolicy = await dryRunPod(cp, c.pod);
      const annotations = viaPolicy.pod?.metadata?.annotations ?? {};
      // Marked: the pod came with Kruise's bookkeeping (copied from a live pod), or a container the policy cannot place exactly.
      if (viaPolicy.pod !== undefined && annotations[ANNOTATION_INJECT_MARK] === 'webhook' && annotations[ANNOTATION_POLICY_RECORD] === undefined) {
        if (viaPolicy.pod.spec?.containers.length !== c.pod.spec?.containers.length) differences.push(`case ${i}: marked, yet injected`);
        continue;
      }
      if (viaPolicy.pod === undefined || annotations[ANNOTATION_POLICY_RECORD] === undefined) {
        differences.push(`case ${i}: not injected by the policy (${viaPolicy.status} ${viaPolicy.message ?? JSON.stringify(annotations)})`);
        continue;
      }
      injected++;
      const answer = await podInjectAnswer(cp, c.pod, stored[i] as SidecarSet);
      if (answer.pod === undefined || !isDeepStrictEqual(comparable(viaPolicy.pod), comparable(answer.pod))) {
        differences.push(`case ${i} (set ${c.set.metadata?.name}): the policy's pod differs from pod-inject's`);
      }
    }
    expect(differences).toEqual([]);
    expect(injected).toBeGreaterThanOrEqual(200);
  }, 600_000);
});
