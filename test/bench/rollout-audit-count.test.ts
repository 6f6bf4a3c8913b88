import { countAudit, serverTimes } from '../../testkit/bench/audit-count.ts';

const line = (event: object) => JSON.stringify(event);

describe("the rollout bench's count of the functions' requests", () => {
  test('counts resource requests by verb, resource and subresource', () => {
    const text = [
      line({ verb: 'patch', objectRef: { resource: 'pods' } }),
      line({ verb: 'patch', objectRef: { resource: 'pods', subresource: 'status' } }),
      line({ verb: 'patch', objectRef: { resource: 'pods' } }),
      '',
    ].join('\n');
    expect(countAudit(text)).toEqual([
      ['patch pods', 2],
      ['patch pods/status', 1],
    ]);
  });

  test('names a request for no resource by its path, without the query', () => {
    const text = line({ verb: 'get', requestURI: '/apis/apps.kruise.io?timeout=10s' });
    expect(countAudit(text)).toEqual([['get /apis/apps.kruise.io', 1]]);
  });
});

describe("the rollout bench's API server time per kind of request", () => {
  const timed = (verb: string, resource: string, received: string, done: string) => line({ verb, objectRef: { resource }, requestReceivedTimestamp: received, stageTimestamp: done });

  test('takes each request from its arrival to its response, to the microsecond, with nearest-rank p50 and p90', () => {
    const text = [
      timed('patch', 'pods', '2026-12-07T10:00:00.000100Z', '2026-12-07T10:00:00.010600Z'),
      timed('patch', 'pods', '2026-12-07T10:00:00.000000Z', '2026-12-07T10:00:00.020000Z'),
      timed('patch', 'pods', '2026-12-07T10:00:00.999000Z', '2026-12-07T10:00:01.029000Z'),
      timed('get', 'sidecarsets', '2026-12-07T10:00:00.000000Z', '2026-12-07T10:00:00.004250Z'),
    ].join('\n');
    expect(serverTimes(text)).toEqual([
      { request: 'patch pods', count: 3, p50Ms: 20, p90Ms: 30 },
      { request: 'get sidecarsets', count: 1, p50Ms: 4.25, p90Ms: 4.25 },
    ]);
  });

  test('leaves watches out: they last as long as they are open', () => {
    const text = timed('watch', 'pods', '2026-12-07T10:00:00.000000Z', '2026-12-07T10:00:30.000000Z');
    expect(serverTimes(text)).toEqual([]);
  });
});
