import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { planRollout } from '../../lib/rollout/plan.ts';
import { GOLDEN_CASES, GOLDEN_SEED, decisionOf, planCases } from './plan-cases.ts';

/**
 * The plan's decisions over random sets and pods (plan-cases.ts), pinned:
 * plan-golden.json was written by the plan as of commit 3e28049, before its
 * per-pod work was cut (issue 23 §5: the one-sort order, the standing of a
 * consistent pod without a check per sidecar, the scatter counts). Any
 * change of an order, a count or a waiting reason shows here as the case
 * that differs. A deliberate change of a decision regenerates the file and
 * says why in its commit.
 */
const golden = JSON.parse(readFileSync(new URL('./plan-golden.json', import.meta.url), 'utf8')) as unknown[];

describe('the plan decides as the golden table says', () => {
  const cases = planCases(GOLDEN_SEED, GOLDEN_CASES);
  it('holds one row per case', () => {
    expect(golden).toHaveLength(cases.length);
  });
  it.each(cases.map((c, i) => [i, c] as const))('case %i', (i, { set, pods, options }) => {
    let decision: unknown;
    try {
      decision = decisionOf(planRollout(set, pods, new Map(), options));
    } catch (e) {
      decision = { error: (e as Error).message };
    }
    expect(decision).toEqual(golden[i]);
  });
});
