/**
 * The webhooks' reads of the cluster (functions/shared/cluster.ts
 * clusterReader) are sent once, but for a 429: the API server answers one
 * while a resource's storage re-initialises after its CRD changed (every
 * repoint of the SidecarSet CRD's conversion does it), and asks to be asked
 * again, as client-go always does. A refused or failing server is not asked
 * again: the cache's last list serves instead, within the review's deadline.
 */
import { describe, expect, it } from '@jest/globals';
import { clusterReader } from '../../functions/shared/cluster.ts';
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { apiStatus, fakeApiServerForSuite } from './fake-api-server.ts';

const fake = fakeApiServerForSuite();
const SETS = '/apis/apps.kruise.io/v1alpha1/sidecarsets';

async function reader() {
  return clusterReader({ KUBECONFIG_CONTENT: fake.kubeconfig() }, jsonLogger({ function: 'test' }, () => undefined));
}

/** Answers discovery as a cluster with Kruise 1.8's CRD (no v1beta1), and the set list by `list`, counting its calls. */
function routeSets(list: (call: number) => { status: number; body: unknown }): void {
  let calls = 0;
  fake.route = (req) => (req.url.startsWith(SETS) ? list(++calls) : apiStatus(404, 'NotFound', 'the server could not find the requested resource'));
}

const listed = { status: 200, body: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSetList', metadata: { resourceVersion: '9' }, items: [] } };

describe("the webhooks' reads", () => {
  it('ask again after a 429 (storage re-initialising), and get the list', async () => {
    routeSets((call) => (call === 1 ? apiStatus(429, 'TooManyRequests', 'storage is (re)initializing') : listed));
    await expect((await reader()).listSidecarSets(AbortSignal.timeout(5_000))).resolves.toMatchObject({ kind: 'SidecarSetList' });
    expect(fake.seen.filter((r) => r.url.startsWith(SETS))).toHaveLength(2);
  });

  it('do not ask again after a 503: the cache serves its last list instead', async () => {
    routeSets((call) => (call === 1 ? apiStatus(503, 'ServiceUnavailable', 'etcd is down') : listed));
    await expect((await reader()).listSidecarSets(AbortSignal.timeout(5_000))).rejects.toThrow(/503/);
    expect(fake.seen.filter((r) => r.url.startsWith(SETS))).toHaveLength(1);
  });

  it('stop asking when the review\'s time is up', async () => {
    routeSets(() => apiStatus(429, 'TooManyRequests', 'storage is (re)initializing'));
    const started = Date.now();
    await expect((await reader()).listSidecarSets(AbortSignal.timeout(400))).rejects.toThrow(/429/);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(fake.seen.filter((r) => r.url.startsWith(SETS))).toHaveLength(2);
  });
});
