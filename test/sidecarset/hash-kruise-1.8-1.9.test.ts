/**
 * An unchanged set hashes the same under OpenKruise 1.8.2, 1.9.0 and here:
 * generated sets against vectors printed by each version's own code (the
 * vectors file says how; 1.9.0's by scripts/hash-vectors.ts). So a cluster moving from Kruise 1.8 to 1.9, or
 * to this project, restarts no sidecar: every pod's recorded hash still
 * equals its set's.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { sidecarSetHash, sidecarSetHashWithoutImage } from '../../lib/sidecarset/hash.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

interface Hashes {
  hash: string;
  withoutImage: string;
}
interface Vector {
  set: SidecarSet;
  'kruise-1.8.2': Hashes;
  'kruise-1.9.0': Hashes;
}

const { cases } = JSON.parse(readFileSync(new URL('./hash-kruise-1.8-1.9.vectors.json', import.meta.url), 'utf8')) as { cases: Vector[] };

describe('hashes of generated sets under Kruise 1.8.2 and 1.9.0', () => {
  it('has the generated sets', () => {
    expect(cases.length).toBe(40);
  });

  it.each(cases.map((c, i) => [i, c] as const))('set %i: the same hashes as Kruise 1.8.2 and 1.9.0', (_i, c) => {
    const ours = { hash: sidecarSetHash(c.set), withoutImage: sidecarSetHashWithoutImage(c.set) };
    expect(ours).toEqual(c['kruise-1.8.2']);
    expect(ours).toEqual(c['kruise-1.9.0']);
  });
});
