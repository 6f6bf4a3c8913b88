import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { planRollout } from '../../lib/rollout/plan.ts';
import { LARGE_CASES, LARGE_SEED, largeCases, largeDecisionOf } from './plan-large-cases.ts';

/**
 * The plan's decisions over large random sets and pods (plan-large-cases.ts),
 * pinned: plan-large-golden.json was written by the plan as of commit
 * 9ae38c5, before the plan's walk read pods in list order and its order and
 * scatter read number columns (issue 23 §5, the plan's CPU for 100,000
 * pods). plan-golden.test.ts pins small lists; these are the lists where the
 * walk's order, the scatter of many values and the pods named per reason
 * can part from it. Each row holds the counts, the waiting reason, the
 * unavailable tally and the first updates, and a digest of the whole
 * decision (every update in order with its images, the not-upgradable,
 * flipped and set-aside pods). A deliberate change of a decision
 * regenerates the file and says why in its commit.
 */
const golden = JSON.parse(readFileSync(new URL('./plan-large-golden.json', import.meta.url), 'utf8')) as unknown[];

describe('the plan decides large lists as the golden table says', () => {
  const cases = largeCases(LARGE_SEED, LARGE_CASES);
  it('holds one row per case', () => {
    expect(golden).toHaveLength(cases.length);
  });
  it.each(cases.map((c, i) => [i, c] as const))('case %i', (i, { set, pods, options }) => {
    let decision: unknown;
    try {
      decision = largeDecisionOf(planRollout(set, pods, new Map(), options));
    } catch (e) {
      decision = { error: (e as Error).message };
    }
    expect(decision).toEqual(golden[i]);
  });
});
