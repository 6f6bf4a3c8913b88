/**
 * Short versions of the load runs that `npm run reliability` runs for
 * minutes (docs/RELIABILITY.md): a warm Lambda handler invoked thousands of
 * times, and the HTTPS server under autocannon, both reading a real API
 * server holding 50 SidecarSets. Each run throws when an answer is wrong, a
 * request fails, or memory, handles or listeners grow.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { benchControlPlane, seedAdmissionCluster } from '../../testkit/bench/cluster.ts';
import { httpsSoak } from '../../testkit/load/https-soak.ts';
import { lambdaSoak } from '../../testkit/load/lambda-soak.ts';

describeWithControlPlane('under sustained load', () => {
  let cp: ControlPlane;

  beforeAll(async () => {
    cp = await benchControlPlane();
    await seedAdmissionCluster(cp);
  }, 180_000);

  afterAll(async () => {
    await cp.stop();
  }, 60_000);

  it('a warm pod-inject Lambda answers 10,000 reviews in a row with the same injection, its memory flat', async () => {
    const figures = await lambdaSoak({ cp, fn: 'pod-inject', invocations: 10_000 });
    expect(figures).toMatchObject({ invocations: 10_000, wrongAnswers: 0, allowed: 'true' });
    expect(figures.patchBase64Bytes).toBeGreaterThan(1000);
  }, 180_000);

  it('warm validate and default Lambdas answer 3,000 reviews each, their memory flat', async () => {
    await expect(lambdaSoak({ cp, fn: 'sidecarset-validate', invocations: 3_000 })).resolves.toMatchObject({ allowed: 'true', wrongAnswers: 0 });
    const defaulted = await lambdaSoak({ cp, fn: 'sidecarset-default', invocations: 3_000 });
    expect(defaulted).toMatchObject({ allowed: 'true', wrongAnswers: 0 });
    expect(defaulted.patchBase64Bytes).toBeGreaterThan(100);
  }, 180_000);

  it('the HTTPS server answers every request of 10 s of autocannon with a 200, its memory flat', async () => {
    const figures = await httpsSoak({ cp, durationSeconds: 10, warmUpSeconds: 3 });
    expect(figures).toMatchObject({ errors: 0, timeouts: 0, non2xx: 0 });
    expect(figures.requests).toBeGreaterThan(100);
  }, 180_000);
});
