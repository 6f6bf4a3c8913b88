import { describe, expect, it } from '@jest/globals';
import { canaryFinding, canaryEvents, MAX_CANARIES_NAMED, takenMessage, recordCanaryEvents, type CanaryFinding } from '../../lib/status-sync/canary-events.ts';
import type { ReconcileError } from '../../lib/status-sync/errors.ts';
import type { SidecarSetEvent } from '../../lib/ports.ts';

const taken = (...canaries: [string, number][]): CanaryFinding => canaryFinding('u', new Map(canaries));

/** Runs the notices through a sequence of resyncs; returns the reasons emitted by each. */
function run(steps: { at: number; findings: [string, CanaryFinding][]; present?: string[] }[]): string[][] {
  let now = 0;
  const notices = canaryEvents({ refreshMs: 1000, nowMs: () => now });
  return steps.map((step) => {
    now = step.at;
    const findings = new Map(step.findings);
    const due = notices.due(findings, new Set(step.present ?? findings.keys()));
    for (const notice of due) notices.reported(notice);
    return due.map((n) => `${n.set}:${n.event.type}:${n.event.reason}`);
  });
}

const TOLD = 'base:Warning:PodsTakenByCanary';

describe('notices about canaries that took a set’s pods', () => {
  it.each<[string, Parameters<typeof run>[0], string[][]]>([
    ['warns once while nothing changes, not once per resync', [{ at: 0, findings: [['base', taken(['c', 2])]] }, { at: 10, findings: [['base', taken(['c', 2])]] }, { at: 20, findings: [['base', taken(['c', 2])]] }], [[TOLD], [], []]],
    ['warns again when a canary takes more pods', [{ at: 0, findings: [['base', taken(['c', 2])]] }, { at: 10, findings: [['base', taken(['c', 3])]] }], [[TOLD], [TOLD]]],
    ['warns again when another canary takes pods', [{ at: 0, findings: [['base', taken(['c', 2])]] }, { at: 10, findings: [['base', taken(['c', 2], ['d', 1])]] }], [[TOLD], [TOLD]]],
    ['warns again before the old event expires', [{ at: 0, findings: [['base', taken(['c', 2])]] }, { at: 999, findings: [['base', taken(['c', 2])]] }, { at: 1000, findings: [['base', taken(['c', 2])]] }], [[TOLD], [], [TOLD]]],
    ['says once when no canary holds a pod any more', [{ at: 0, findings: [['base', taken(['c', 2])]] }, { at: 10, findings: [['base', taken()]] }, { at: 20, findings: [['base', taken()]] }], [[TOLD], ['base:Normal:NoPodsTakenByCanary'], []]],
    ['says nothing about a set no canary took from', [{ at: 0, findings: [['base', taken()]] }], [[]]],
    ['forgets a deleted set', [{ at: 0, findings: [['base', taken(['c', 2])]] }, { at: 10, findings: [], present: [] }, { at: 20, findings: [['base', taken(['c', 2])]] }], [[TOLD], [], [TOLD]]],
  ])('%s', (_name, steps, expected) => {
    expect(run(steps)).toEqual(expected);
  });

  it('names each canary and how many pods it took, in name order', () => {
    expect(takenMessage('log-agent', canaryFinding('u', new Map([['trial', 1], ['log-agent-canary', 2]])))).toBe(
      "3 pods this SidecarSet selects run a canary's sidecars instead of its own (canary SidecarSets naming log-agent in apps.kruise.io/sidecarset-base: log-agent-canary took 2, trial took 1); this set's rollout does not reach them",
    );
    expect(takenMessage('b', taken(['c', 1]))).toMatch(/^1 pod this SidecarSet selects runs a canary's sidecars instead of its own \(.*: c took 1\)/);
  });

  it('names at most a few canaries and counts the others', () => {
    const many = taken(...Array.from({ length: MAX_CANARIES_NAMED + 3 }, (_, i): [string, number] => [`c${String(i).padStart(2, '0')}`, 1]));
    const message = takenMessage('b', many);
    expect(message).toContain(`c${String(MAX_CANARIES_NAMED - 1).padStart(2, '0')} took 1 and 3 more canaries`);
    expect(message).not.toContain(`c${MAX_CANARIES_NAMED} took`);
  });

  it('tells again next resync when the event could not be recorded, and says why in the errors', async () => {
    const notices = canaryEvents({ nowMs: () => 0 });
    const findings = new Map([['base', taken(['c', 2])]]);
    const recorded: SidecarSetEvent[] = [];
    let fail = true;
    const sink = { record: (event: SidecarSetEvent) => (fail ? Promise.reject(new Error('events is forbidden')) : (recorded.push(event), Promise.resolve())) };
    const errors: ReconcileError[] = [];
    await recordCanaryEvents(notices, findings, new Set(['base']), sink, errors);
    expect(errors).toEqual([{ sidecarSet: 'base', operation: 'record event', message: 'events is forbidden' }]);
    fail = false;
    await recordCanaryEvents(notices, findings, new Set(['base']), sink, errors);
    await recordCanaryEvents(notices, findings, new Set(['base']), sink, errors);
    expect(recorded.map((e) => [e.sidecarSet, e.reason])).toEqual([[{ name: 'base', uid: 'u' }, 'PodsTakenByCanary']]);
  });
});
