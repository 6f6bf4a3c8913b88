import { timedRequests, type TimedRequest } from '../../testkit/bench/audit-count.ts';
import { slotFills, slotWait } from '../../testkit/bench/slot-wait.ts';

const request = (request: string, name: string | undefined, receivedMs: number, doneMs: number): TimedRequest => ({ request, name, receivedMs, doneMs });

describe("where the rollout bench's freed slot waits", () => {
  // One slot: pod a is written first and frees the slot at 3000; pod b's reconcile fills it.
  const pods = [
    { name: 'a', updatedAt: 1_000, availableAt: 3_000 },
    { name: 'b', updatedAt: 3_360, availableAt: 5_500 },
  ];

  test('times each step from the slot freeing to the next pod seen updated, through that pod\'s reconcile', () => {
    const requests = [
      request('get sidecarsets', undefined, 500, 520),
      request('patch sidecarsets/status', undefined, 600, 630),
      request('patch pods', 'a', 700, 740),
      request('get sidecarsets', undefined, 2_990, 3_010),
      request('get sidecarsets', undefined, 3_100, 3_120),
      request('patch sidecarsets/status', undefined, 3_200, 3_230),
      request('patch pods', 'b', 3_300, 3_340),
      request('patch pods/status', 'b', 3_400, 3_430),
      request('patch sidecarsets/status', undefined, 3_500, 3_530),
    ];
    expect(slotWait(requests, slotFills(pods, 1))).toEqual({ pods: 1, freedToRead: 100, readToStatus: 100, status: 30, statusToPatch: 70, patch: 40, patchToSeen: 20 });
  });

  test('a reconcile that read before the slot freed shows as a negative first step', () => {
    const requests = [request('get sidecarsets', undefined, 2_950, 2_960), request('patch sidecarsets/status', undefined, 3_050, 3_060), request('patch pods', 'b', 3_300, 3_340)];
    expect(slotWait(requests, slotFills(pods, 1))).toMatchObject({ pods: 1, freedToRead: -50 });
  });

  test('the k-th pod updated after the first batch fills the slot the k-th pod to become available freed', () => {
    const three = [
      { name: 'c', updatedAt: 4_000, availableAt: undefined },
      { name: 'a', updatedAt: 1_000, availableAt: 3_200 },
      { name: 'b', updatedAt: 1_100, availableAt: 3_000 },
      { name: 'd', updatedAt: 3_500, availableAt: 6_000 },
    ];
    expect(slotFills(three, 2).map(({ pod, freedAt }) => [pod.name, freedAt])).toEqual([['d', 3_000], ['c', 3_200]]);
    expect(slotFills(three, 3).map(({ pod, freedAt }) => [pod.name, freedAt])).toEqual([['c', 3_000]]);
    expect(slotFills([{ name: 'x', updatedAt: 1, availableAt: undefined }, { name: 'y', updatedAt: 2, availableAt: undefined }], 1)).toEqual([{ pod: { name: 'y', updatedAt: 2, availableAt: undefined }, freedAt: undefined }]);
  });

  test('no traceable pod after the first batch gives no figures', () => {
    expect(slotWait([request('patch pods', 'a', 700, 740)], slotFills(pods, 1))).toBeUndefined();
    expect(slotWait([request('get sidecarsets', undefined, 3_100, 3_120), request('patch pods', 'b', 3_300, 3_340)], slotFills(pods, 1))).toBeUndefined();
    expect(slotWait([], slotFills(pods, 2))).toBeUndefined();
  });

  test('reads the audit log\'s names and microsecond times, leaving watches out', () => {
    const text = [
      JSON.stringify({ verb: 'patch', objectRef: { resource: 'pods', name: 'b' }, requestReceivedTimestamp: '2026-12-07T10:00:00.000250Z', stageTimestamp: '2026-12-07T10:00:00.040500Z' }),
      JSON.stringify({ verb: 'watch', objectRef: { resource: 'pods' }, requestReceivedTimestamp: '2026-12-07T10:00:00Z', stageTimestamp: '2026-12-07T10:01:00Z' }),
    ].join('\n');
    const base = Date.parse('2026-12-07T10:00:00Z');
    const [only, ...rest] = timedRequests(text);
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ request: 'patch pods', name: 'b' });
    expect(only!.receivedMs - base).toBeCloseTo(0.25, 3);
    expect(only!.doneMs - base).toBeCloseTo(40.5, 3);
  });
});
