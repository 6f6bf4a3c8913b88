import { countAudit } from '../../testkit/bench/audit-count.ts';

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
