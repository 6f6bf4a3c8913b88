/**
 * The bound pod-inject refuses oversize answers with before building them
 * must be a lower bound: whenever injection stops with InjectionTooLargeError,
 * the patch it would have answered is at least that large, whatever the pod
 * holds (containers named like the sidecars or their HotUpgrade containers,
 * sidecars injected earlier, HotUpgrade sidecars,
 * repeated mount paths, sidecars using some of the paths themselves).
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { createPatchSharingValues, patchText } from '../../lib/admission/json-patch.ts';
import { injectPod, InjectionTooLargeError } from '../../lib/sidecarset/inject.ts';
import { NOW, pod, sidecar, sidecarSet } from '../../testkit/sidecarset-objects.ts';

// Paths repeat (the first mount at a path is the one shared), and are long enough for the bound to matter.
const mountPath = fc.integer({ min: 0, max: 40 }).map((i) => `/mnt/volume-${i}/with/a/longer/path`);
const mount = fc.record({ name: fc.constantFrom('v', 'data'), mountPath, readOnly: fc.boolean() }, { requiredKeys: ['name', 'mountPath'] });
const env = fc.array(fc.record({ name: fc.constantFrom('A', 'B', 'IS_INJECTED'), value: fc.constantFrom('x', 'true') }), { maxLength: 3 });

describe('the answer-size bound of injection', () => {
  it('is never more than the patch injection answers', () => {
    const sharingSets = fc.integer({ min: 1, max: 4 }).chain((n) =>
      fc.tuple(
        ...Array.from({ length: n }, (_, i) =>
          // Some HotUpgrade: their two containers each carry the copies.
          fc.tuple(fc.array(mount, { maxLength: 2 }), fc.boolean()).map(([own, hot]) =>
            sidecarSet(`s${i}`, {
              containers: [
                sidecar(`s${i}-sidecar`, {
                  shareVolumePolicy: { type: 'enabled' },
                  volumeMounts: own,
                  ...(hot ? { upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } } : {}),
                }),
              ],
            }),
          ),
        ),
      ),
    );
    const container = fc.record({
      name: fc.constantFrom('app', 'web', 's0-sidecar', 's1-sidecar', 's0-sidecar-1', 's1-sidecar-2'),
      image: fc.constant('app:1'),
      env,
      volumeMounts: fc.array(mount, { maxLength: 30 }),
    });
    let refusals = 0;
    fc.assert(
      fc.property(sharingSets, fc.array(container, { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 1_500 }), fc.boolean(), (sets, containers, limit, reinvoke) => {
        const input = { namespace: 'default', sidecarSets: sets, namespaceLabels: new Map(), now: NOW };
        let received = pod({ containers: containers });
        // A reinvocation sees the first pass's sidecars where the named containers were.
        if (reinvoke) received = injectPod({ ...input, pod: received }).pod;
        let growth: number | undefined;
        try {
          injectPod({ ...input, pod: received, maxGrowthBytes: limit });
        } catch (error) {
          if (!(error instanceof InjectionTooLargeError)) throw error;
          growth = error.growthBytes;
        }
        if (growth === undefined) return;
        refusals++;
        expect(growth).toBeGreaterThan(limit);
        const patch = patchText(createPatchSharingValues(received, injectPod({ ...input, pod: received }).pod));
        expect(Buffer.byteLength(patch)).toBeGreaterThanOrEqual(growth);
      }),
      { numRuns: 1_000, seed: 1212 },
    );
    // The property is only worth something if the bound fired.
    expect(refusals).toBeGreaterThan(50);
  });
});
