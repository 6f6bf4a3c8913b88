/**
 * An upgrade to v1beta1 restarts nothing: OpenKruise 1.9 hashes a v1beta1
 * set (encodeSidecarSetV1beta1) over its containers as 1.8 hashed the
 * v1alpha1 set (encodeSidecarSet), and v1beta1's SidecarContainer is
 * v1alpha1's field for field, so the same set hashes the same in both
 * versions; its revision records the same bytes under the same name. Shown
 * on generated sets (the fuzz suite's SidecarSet generator, with and
 * without a custom version), each written as v1alpha1 and converted to
 * v1beta1 as the API server stores it. The Go-printed vectors of the
 * v1beta1 type are in hash-kruise-1.9.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { internalSidecarSet } from '../../lib/conversion/internal-model.ts';
import { convertSidecarSet } from '../../lib/conversion/sidecarset-conversion.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { sidecarSetHashDocument, sidecarSetHashes } from '../../lib/sidecarset/hash.ts';
import { revisionData } from '../../lib/sidecarset/revision-data.ts';
import { currentRevisionName, LABEL_CUSTOM_VERSION, newRevision } from '../../lib/sidecarset/revisions.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { userSidecarSetArb } from '../../testkit/fuzz/arbitraries.ts';

const setWithVersion = fc.tuple(userSidecarSetArb, fc.option(fc.constantFrom('v1', 'canary-2', 'release.2026'), { nil: undefined })).map(([set, customVersion]): SidecarSet => {
  const defaulted = defaultSidecarSet(set);
  if (customVersion === undefined) return defaulted;
  return { ...defaulted, metadata: { ...defaulted.metadata, labels: { [LABEL_CUSTOM_VERSION]: customVersion } } };
});

function stored(set: SidecarSet): JsonObject {
  const converted = convertSidecarSet(set, 'v1beta1');
  if (!converted.ok) throw new Error(converted.error);
  return converted.object;
}

describe('the same set in v1alpha1 and in v1beta1', () => {
  it('hashes the same (with and without images), and its revision has the same data and name', () => {
    fc.assert(
      fc.property(setWithVersion, (alpha) => {
        const beta = stored(alpha);
        expect(beta.apiVersion).toBe('apps.kruise.io/v1beta1');
        expect(sidecarSetHashDocument(beta)).toBe(sidecarSetHashDocument(alpha));
        expect(sidecarSetHashes(beta)).toEqual(sidecarSetHashes(alpha));
        expect(revisionData(beta)).toBe(revisionData(alpha));
        expect(currentRevisionName(beta)).toBe(currentRevisionName(alpha));
      }),
      { numRuns: 300, seed: 26 },
    );
  });

  it('the revision of a v1beta1 set carries spec.customVersion as the custom-version label, as Kruise 1.9 writes it', () => {
    fc.assert(
      fc.property(setWithVersion, (alpha) => {
        const beta = stored(alpha);
        const customVersion = (beta.spec as JsonObject).customVersion;
        const revision = newRevision(internalSidecarSet(beta), 'kruise-system', 1, 0);
        expect(revision.metadata?.labels?.[LABEL_CUSTOM_VERSION]).toBe(customVersion);
        expect(revision).toEqual(newRevision(alpha, 'kruise-system', 1, 0));
      }),
      { numRuns: 200, seed: 27 },
    );
  });
});
