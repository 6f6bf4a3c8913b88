import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Pod } from '../../lib/kube/types.ts';
import { podStanding } from '../../lib/rollout/candidates.ts';
import { isPodStateConsistent, sidecarContainerNames } from '../../lib/sidecarset/pod-state.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

/**
 * The plan hands podStanding the pod's consistency over all of the set's
 * sidecars, which spares the check per sidecar for a consistent pod whose
 * sidecars run tag images. Whatever the pod, the standing must be the one
 * the check per sidecar gives.
 */
const SET: SidecarSet = {
  metadata: { name: 's', annotations: { 'kruise.io/sidecarset-hash': 'h2', 'kruise.io/sidecarset-hash-without-image': 'w' } },
  spec: { selector: { matchLabels: {} }, containers: [{ name: 'a', image: 'a:2' }, { name: 'b', image: 'b:2' }, { name: 'c', image: 'c:2' }] },
};
const DIGEST = `sha256:${'1'.repeat(64)}`;
const OTHER_DIGEST = `sha256:${'2'.repeat(64)}`;
const images = ['x:1', 'x:2', `x@${DIGEST}`, `x@${OTHER_DIGEST}`, 'docker.io/library/x:1'];
const imageIds = ['', 'id-1', 'id-2', `docker.io/library/x@${DIGEST}`, `docker.io/library/x@${OTHER_DIGEST}`];

const container = fc.record({
  name: fc.constantFrom('a', 'b', 'c', 'app'),
  image: fc.constantFrom(...images),
  statusImage: fc.constantFrom(...images),
  imageID: fc.constantFrom(...imageIds),
  ready: fc.boolean(),
});
const state = fc.constantFrom(
  undefined,
  'garbage',
  'null',
  '{"s":{"lastContainerStatuses":{"a":{"imageID":"id-1"},"b":{"imageID":"id-2"}}}}',
  '{"s":{"lastContainerStatuses":{"c":{"imageID":"id-1"}}}}',
);

describe('the standing of a pod whose consistency the plan knows', () => {
  it('is the standing the check per sidecar gives, over random containers, images, statuses and in-place states', () => {
    const names = sidecarContainerNames(SET);
    fc.assert(
      fc.property(fc.array(container, { maxLength: 5 }), state, fc.boolean(), (containers, inPlace, dropStatus) => {
        const statuses = containers.map((c) => ({ name: c.name, image: c.statusImage, imageID: c.imageID, ready: c.ready }));
        const pod: Pod = {
          metadata: {
            name: 'p',
            namespace: 'default',
            annotations: {
              'kruise.io/sidecarset-hash-without-image': '{"s":{"hash":"w"}}',
              ...(inPlace === undefined ? {} : { 'kruise.io/sidecarset-inplace-update-state': inPlace }),
            },
          },
          spec: { containers: containers.map((c) => ({ name: c.name, image: c.image })) },
          status: { containerStatuses: dropStatus ? statuses.slice(1) : statuses },
        };
        const consistent = isPodStateConsistent(pod, SET, names);
        expect(podStanding(pod, SET, 'w', false, names, { consistent })).toBe(podStanding(pod, SET, 'w', false, names));
      }),
      { numRuns: 5000, seed: 23 },
    );
  });
});
