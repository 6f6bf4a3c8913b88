/** explain says a stalled rollout as the reconciler and `npm run status` say it. */
import { describe, expect, it } from '@jest/globals';
import { explainPod } from '../../lib/explain/explain.ts';
import { explanationText } from '../../lib/explain/text.ts';
import { viewRow } from '../../lib/status-view/rows.ts';
import { NO_NAMESPACES, rolloutPod, rolloutSet } from '../rollout/fixtures.ts';

const set = rolloutSet({ name: 'logs', strategy: { type: 'RollingUpdate', maxUnavailable: 1 } });
// Updated on 2025-01-01 (the fixture's update time), not ready since.
const stuck = rolloutPod(set, { name: 'a', updated: true, ready: false });
const waiting = rolloutPod(set, { name: 'b' });
const pods = [stuck, waiting];
const explain = (stall?: { nowMs: number; stallMs: number }) =>
  explainPod({ pod: stuck, namespace: 'default', sets: [set], namespaceLabels: NO_NAMESPACES, scopePods: new Map([['logs', pods]]), ...(stall === undefined ? {} : { stall }) });

describe('explain and a stalled rollout', () => {
  it('says the set\'s rollout is stalled, in the words of the status view\'s row', () => {
    const stall = { nowMs: Date.parse('2025-01-01T01:00:00Z'), stallMs: 60_000 };
    const row = viewRow(set, pods, NO_NAMESPACES, stall);
    expect(row.state).toBe('Stalled');
    const rollout = explain(stall).sets[0]?.rollout;
    expect(rollout?.stalled).toBe(row.why);
    expect(explanationText(explain(stall), true)).toContain(`  the set's rollout: ${row.why}`);
  });

  it('says nothing of it before the threshold, nor without a clock', () => {
    expect(explain({ nowMs: Date.parse('2025-01-01T00:00:30Z'), stallMs: 60_000 }).sets[0]?.rollout?.stalled).toBeUndefined();
    expect(explain().sets[0]?.rollout?.stalled).toBeUndefined();
  });
});
