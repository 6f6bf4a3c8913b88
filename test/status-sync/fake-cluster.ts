/**
 * The fake API server the status-sync Lambda suites share: started for the
 * suite, closed after it, and before each test answering afresh (its record
 * of requests cleared) as a cluster holding one SidecarSet and the given
 * pods. It answers the set listed and read by name, the pod list, the
 * revisions (none at first; a new one stored as sent), the status patch,
 * Events in any namespace and the heartbeat Lease (none at first; stored as
 * created or updated); anything else is a 404.
 */
import { beforeEach } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { apiStatus, fakeApiServerForSuite, type FakeApiServer, type Route } from '../adapters/fake-api-server.ts';

const SETS = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
const REVISIONS = '/apis/apps/v1/namespaces/kruise-system/controllerrevisions';
/** The reconciler's heartbeat Lease's collection (lib/adapters/kube-lease.ts). */
export const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kruise-system/leases';

/** The heartbeat Lease's requests: the reconcile's own are the others. */
export const isLeaseRequest = (req: { url: string }): boolean => req.url.startsWith(LEASES);

/** The answers of a cluster holding `set` and `pods`. */
export function oneSetRoute(set: SidecarSet, pods: readonly Pod[]): Route {
  let lease: unknown;
  return (req) => {
    const path = req.url.split('?')[0] ?? '';
    if (path.startsWith(LEASES)) {
      if (req.method === 'GET') return lease === undefined ? apiStatus(404, 'NotFound', 'not found') : { status: 200, body: lease };
      lease = req.body;
      return { status: req.method === 'POST' ? 201 : 200, body: lease };
    }
    if (req.method === 'GET' && path === SETS) return { status: 200, body: { kind: 'SidecarSetList', metadata: {}, items: [set] } };
    if (req.method === 'GET' && path === `${SETS}/${set.metadata?.name ?? ''}`) return { status: 200, body: set };
    if (req.method === 'GET' && path.startsWith('/api/v1/pods')) return { status: 200, body: { kind: 'PodList', metadata: {}, items: pods } };
    if (req.method === 'GET' && path.startsWith(REVISIONS)) return { status: 200, body: { kind: 'ControllerRevisionList', metadata: {}, items: [] } };
    if (req.method === 'POST' && path === REVISIONS) return { status: 201, body: req.body };
    if (req.method === 'PATCH') return { status: 200, body: set };
    // The set's Event in default, the pods' in their namespaces.
    if (req.method === 'POST' && /^\/api\/v1\/namespaces\/[a-z0-9-]+\/events$/.test(path)) return { status: 201, body: req.body };
    return apiStatus(404, 'NotFound', 'not found');
  };
}

/** The suite's fake API server, answering as {@link oneSetRoute} at the start of each test (a test may change its route). */
export function fakeOneSetCluster(set: SidecarSet, pods: readonly Pod[]): FakeApiServer {
  const server = fakeApiServerForSuite();
  beforeEach(() => {
    server.route = oneSetRoute(set, pods);
  });
  return server;
}
