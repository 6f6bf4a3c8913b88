import { describe, expect, it } from '@jest/globals';
import { notInjectedNotices, type NotInjectedFinding } from '../../lib/status-sync/not-injected.ts';

const finding = (count: number, samples: string[] = count > 0 ? ['shop/a'] : []): NotInjectedFinding => ({ uid: 'u', count, samples });

/** Runs the notices through a sequence of passes; returns the reasons emitted by each. */
function run(steps: { at: number; findings: [string, NotInjectedFinding][]; present?: string[] }[]): string[][] {
  let now = 0;
  const notices = notInjectedNotices({ refreshMs: 1000, nowMs: () => now });
  return steps.map((step) => {
    now = step.at;
    const findings = new Map(step.findings);
    const due = notices.due(findings, new Set(step.present ?? findings.keys()));
    for (const notice of due) notices.reported(notice);
    return due.map((n) => `${n.set}:${n.event.reason}`);
  });
}

describe('notices about uninjected pods', () => {
  it.each<[string, Parameters<typeof run>[0], string[][]]>([
    ['warns once while nothing changes', [{ at: 0, findings: [['s', finding(2)]] }, { at: 10, findings: [['s', finding(2)]] }], [['s:PodsNotInjected'], []]],
    ['warns again when the count changes', [{ at: 0, findings: [['s', finding(2)]] }, { at: 10, findings: [['s', finding(3)]] }], [['s:PodsNotInjected'], ['s:PodsNotInjected']]],
    ['warns again when other pods are named', [{ at: 0, findings: [['s', finding(1, ['shop/a'])]] }, { at: 10, findings: [['s', finding(1, ['shop/b'])]] }], [['s:PodsNotInjected'], ['s:PodsNotInjected']]],
    ['warns again before the old event expires', [{ at: 0, findings: [['s', finding(2)]] }, { at: 999, findings: [['s', finding(2)]] }, { at: 1000, findings: [['s', finding(2)]] }], [['s:PodsNotInjected'], [], ['s:PodsNotInjected']]],
    ['says once when they are gone', [{ at: 0, findings: [['s', finding(2)]] }, { at: 10, findings: [['s', finding(0)]] }, { at: 20, findings: [['s', finding(0)]] }], [['s:PodsNotInjected'], ['s:PodsInjected'], []]],
    ['says nothing about a set that never had any', [{ at: 0, findings: [['s', finding(0)]] }], [[]]],
    ['keeps what it knows about a set the pass could not compute', [{ at: 0, findings: [['s', finding(2)]] }, { at: 10, findings: [], present: ['s'] }, { at: 20, findings: [['s', finding(2)]] }], [['s:PodsNotInjected'], [], []]],
    ['forgets a deleted set, so a new one of the same name is told about', [{ at: 0, findings: [['s', finding(2)]] }, { at: 10, findings: [], present: [] }, { at: 20, findings: [['s', finding(2)]] }], [['s:PodsNotInjected'], [], ['s:PodsNotInjected']]],
  ])('%s', (_name, steps, expected) => {
    expect(run(steps)).toEqual(expected);
  });

  it('is due again next pass when an event could not be recorded', () => {
    const notices = notInjectedNotices({ nowMs: () => 0 });
    const findings = new Map([['s', finding(1)]]);
    expect(notices.due(findings, new Set(['s']))).toHaveLength(1);
    expect(notices.due(findings, new Set(['s']))).toHaveLength(1);
  });

  it('words one pod in the singular', () => {
    const [notice] = notInjectedNotices().due(new Map([['s', finding(1)]]), new Set(['s']));
    expect(notice?.event.message).toMatch(/^1 pod matches this SidecarSet but was created without its sidecars .*recreate them to inject: shop\/a$/);
  });
});
