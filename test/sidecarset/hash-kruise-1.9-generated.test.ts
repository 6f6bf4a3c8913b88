/**
 * The SidecarSet hashes of sets that use OpenKruise 1.9's fields
 * (resourcesPolicy, shareVolumeDevicePolicy, the custom version), in
 * v1alpha1 and in v1beta1, against vectors computed by Kruise v1.9.0's own
 * code (scripts/hash-vectors.ts; the vectors file says how): ours equal the
 * hashes its defaulting webhook writes on the set as sent and those its
 * controller computes over the stored v1beta1 set, whether hashed as sent or
 * in the internal model the functions read sets in.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { internalSidecarSet } from '../../lib/conversion/internal-model.ts';
import { sidecarSetHash, sidecarSetHashes, sidecarSetHashWithoutImage } from '../../lib/sidecarset/hash.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

interface Hashes {
  hash: string;
  withoutImage: string;
}
interface Vector {
  set: SidecarSet;
  'kruise-1.9.0': { asWritten: Hashes; stored: Hashes };
}

const { cases } = JSON.parse(readFileSync(new URL('./hash-kruise-1.9.vectors.json', import.meta.url), 'utf8')) as { cases: Vector[] };
const versionOf = (c: Vector): string | undefined => c.set.apiVersion;

describe('hashes of generated sets with Kruise 1.9 fields, in both versions, as Kruise 1.9.0 computes them', () => {
  it('has sets in both versions that use each new field', () => {
    expect(cases.length).toBe(128);
    expect(cases.filter((c) => versionOf(c) === 'apps.kruise.io/v1alpha1').length).toBe(64);
    expect(cases.filter((c) => versionOf(c) === 'apps.kruise.io/v1beta1').length).toBe(64);
    for (const field of ['"resourcesPolicy"', '"shareVolumeDevicePolicy"', '"customVersion"', '"restartPolicy":"Always"']) {
      expect([field, cases.filter((c) => JSON.stringify(c.set).includes(field)).length]).not.toEqual([field, 0]);
    }
  });

  it.each(cases.map((c, i) => [i, versionOf(c), c] as const))('set %i (%s): the hashes Kruise 1.9.0 writes and computes', (_i, _version, c) => {
    const kruise = c['kruise-1.9.0'];
    const asSent = { hash: sidecarSetHash(c.set), withoutImage: sidecarSetHashWithoutImage(c.set) };
    expect(asSent).toEqual(kruise.asWritten);
    expect(asSent).toEqual(kruise.stored);
    expect(sidecarSetHashes(internalSidecarSet(c.set))).toEqual(kruise.stored);
  });
});
