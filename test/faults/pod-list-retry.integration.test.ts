import { expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { podListRetry } from '../../testkit/faults/pod-list-retry.ts';

describeWithControlPlane('the pod list over dropped connections', () => {
  it('carries on from the same page after a brief outage, missing no pod, and fails with the reason when the outage lasts', async () => {
    const figures = await podListRetry({ pods: 45, pageSize: 10, lists: 2 });
    expect(figures).toMatchObject({ podsMissedOrRepeated: 0, listsWithOutage: 2 });
    expect(String(figures.persistentOutage)).toMatch(/^the request failed: /);
  }, 180_000);
});
