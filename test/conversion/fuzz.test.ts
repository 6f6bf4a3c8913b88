/**
 * The seeded, short run of the conversion fuzzer (the long one is
 * `npm run fuzz -- --only conversion-alpha-round-trip,...`): exact round
 * trips both ways, Kruise's mapping on what a reader sees, and
 * ConversionReviews damaged anywhere answered without a throw.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { conversionProperties } from '../../testkit/fuzz/conversion.ts';

/** Fixed, so that a failure here reproduces: `npm run fuzz -- --seed 20261201 --only <name>`. */
const SEED = 20261201;

describe('the conversion fuzzer, seeded', () => {
  it.each(conversionProperties().map((p) => [p.name, p] as const))('%s', async (_name, p) => {
    const details = await fc.check(p.property, { seed: SEED, numRuns: p.quickRuns });
    expect(details.failed ? `${String(details.errorInstance)}\ncounterexample: ${fc.stringify(details.counterexample).slice(0, 3000)}` : 'ok').toBe('ok');
  }, 120_000);
});
