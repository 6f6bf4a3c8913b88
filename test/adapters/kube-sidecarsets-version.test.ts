/**
 * Which version the functions read SidecarSets in: v1beta1 where the API
 * server serves it (it is then the stored version), v1alpha1 where only
 * Kruise 1.8's CRD is installed, found once and remembered.
 */
import { describe, expect, it } from '@jest/globals';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import type { KubeAnswer, KubeClient, KubeRequest } from '../../lib/adapters/kube-request.ts';
import { DEFAULT_REMEMBER_MS, discoveredSidecarSetVersion, sidecarSetsPath, versionFromDiscovery } from '../../lib/adapters/kube-sidecarsets-version.ts';

const betaServed = { kind: 'APIResourceList', groupVersion: 'apps.kruise.io/v1beta1', resources: [{ name: 'sidecarsets' }, { name: 'sidecarsets/status' }] };

/** A client answering every request with the next of `answers` (an Error is thrown), recording the paths. */
function clientAnswering(answers: (KubeAnswer | Error)[]): KubeClient & { paths: string[] } {
  const paths: string[] = [];
  return {
    server: 'https://127.0.0.1:1',
    paths,
    request(request: KubeRequest) {
      paths.push(request.path);
      const next = answers.shift();
      if (next === undefined) throw new Error('no more answers');
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
    list: () => Promise.reject(new Error('this test lists nothing')),
    watch: () => Promise.resolve(),
    requests: () => paths.length,
    close: () => undefined,
  };
}
const answer = (status: number, body: unknown = {}): KubeAnswer => ({ status, body, bytes: 0 });

describe('versionFromDiscovery', () => {
  it.each([
    ['v1beta1 lists sidecarsets (Kruise 1.9\'s CRD)', 200, betaServed, { version: 'v1beta1', definite: true }],
    ['v1beta1 is not served (Kruise 1.8\'s CRD)', 404, '404 page not found', { version: 'v1alpha1', definite: true }],
    ['v1beta1 serves other kinds only', 200, { resources: [{ name: 'statefulsets' }] }, { version: 'v1alpha1', definite: true }],
    ['a body that is no resource list', 200, 'nonsense', { version: 'v1alpha1', definite: true }],
    ['the API server in trouble', 503, {}, { version: 'v1alpha1', definite: false }],
    ['refused', 403, {}, { version: 'v1alpha1', definite: false }],
  ])('%s', (_name, status, body, expected) => {
    expect(versionFromDiscovery(status, body)).toEqual(expected);
  });
});

describe('discoveredSidecarSetVersion', () => {
  it('asks once, with one GET of the group version, and remembers the answer', async () => {
    const client = clientAnswering([answer(200, betaServed)]);
    const versions = discoveredSidecarSetVersion(client);
    expect(await Promise.all([versions.current(), versions.current()])).toEqual(['v1beta1', 'v1beta1']);
    expect(await versions.current()).toBe('v1beta1');
    expect(client.paths).toEqual(['/apis/apps.kruise.io/v1beta1']);
    expect(sidecarSetsPath(await versions.current())).toBe('/apis/apps.kruise.io/v1beta1/sidecarsets');
  });

  it('falls back to v1alpha1 without remembering it when there is no usable answer, and asks again next time', async () => {
    const client = clientAnswering([new KubeApiError('discover', 'connection refused'), answer(500), answer(200, betaServed)]);
    const versions = discoveredSidecarSetVersion(client);
    expect(await versions.current()).toBe('v1alpha1');
    expect(await versions.current()).toBe('v1alpha1');
    expect(await versions.current()).toBe('v1beta1');
    expect(client.paths).toHaveLength(3);
  });

  it('asks again once the answer is older than its lifetime, or forgotten (a CRD upgraded or downgraded under a running function)', async () => {
    let now = 0;
    const client = clientAnswering([answer(404), answer(200, betaServed), answer(404)]);
    const versions = discoveredSidecarSetVersion(client, { now: () => now });
    expect(await versions.current()).toBe('v1alpha1');
    now = DEFAULT_REMEMBER_MS - 1;
    expect(await versions.current()).toBe('v1alpha1');
    now = DEFAULT_REMEMBER_MS;
    expect(await versions.current()).toBe('v1beta1');
    versions.forget();
    expect(await versions.current()).toBe('v1alpha1');
    expect(client.paths).toHaveLength(3);
  });
});
