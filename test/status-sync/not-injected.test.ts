import { describe, expect, it } from '@jest/globals';
import { MAX_NAMESPACES_RECORDED, notInjectedEvents, type NotInjectedFinding } from '../../lib/status-sync/not-injected.ts';

/** `count` pods, `samples` of them named as `namespace/name`, grouped by namespace in order. */
const finding = (count: number, samples: string[] = count > 0 ? ['shop/a'] : []): NotInjectedFinding => {
  const namespaces: { namespace: string; count: number; pods: { name: string; uid: string }[] }[] = [];
  for (const sample of samples) {
    const [namespace = '', name = ''] = sample.split('/');
    let found = namespaces.find((n) => n.namespace === namespace);
    if (found === undefined) namespaces.push((found = { namespace, count: 0, pods: [] }));
    found.pods.push({ name, uid: `uid-${name}` });
  }
  // The pods not named are counted in the first namespace.
  namespaces.forEach((n, i) => (n.count = n.pods.length + (i === 0 ? count - samples.length : 0)));
  return { uid: 'u', count, namespaceCount: namespaces.length, namespaces };
};

/** Runs the notices through a sequence of reconciles; returns the reasons emitted by each. */
function run(steps: { at: number; findings: [string, NotInjectedFinding][]; present?: string[] }[]): string[][] {
  let now = 0;
  const notices = notInjectedEvents({ refreshMs: 1000, nowMs: () => now });
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
    ['keeps what it knows about a set the resync could not compute', [{ at: 0, findings: [['s', finding(2)]] }, { at: 10, findings: [], present: ['s'] }, { at: 20, findings: [['s', finding(2)]] }], [['s:PodsNotInjected'], [], []]],
    ['forgets a deleted set, so a new one of the same name gets the Event again', [{ at: 0, findings: [['s', finding(2)]] }, { at: 10, findings: [], present: [] }, { at: 20, findings: [['s', finding(2)]] }], [['s:PodsNotInjected'], [], ['s:PodsNotInjected']]],
  ])('%s', (_name, steps, expected) => {
    expect(run(steps)).toEqual(expected);
  });

  it('is due again next resync when an event could not be recorded', () => {
    const notices = notInjectedEvents({ nowMs: () => 0 });
    const findings = new Map([['s', finding(1)]]);
    expect(notices.due(findings, new Set(['s']))).toHaveLength(1);
    expect(notices.due(findings, new Set(['s']))).toHaveLength(1);
  });

  it('words one pod in the singular', () => {
    const [notice] = notInjectedEvents().due(new Map([['s', finding(1)]]), new Set(['s']));
    expect(notice?.event.message).toMatch(/^1 pod matches this SidecarSet but was created without its sidecars .*, in 1 namespace; recreate them to inject\. /);
    expect(notice?.podEvents.map((e) => e.message)).toEqual([expect.stringMatching(/^1 pod in this namespace matches SidecarSet s but was created without its sidecars .*; recreate them to inject: a$/)]);
  });

  it('names no pod on the SidecarSet (its events live in default), and tells each namespace of its own pods only, on one of them', () => {
    const [notice] = notInjectedEvents().due(new Map([['s', finding(4, ['shop/alpha', 'shop/beta', 'bank/xray', 'bank/yank'])]]), new Set(['s']));
    expect(notice?.event).toEqual({
      sidecarSet: { name: 's', uid: 'u' },
      type: 'Warning',
      reason: 'PodsNotInjected',
      message: expect.stringMatching(/^4 pods match this SidecarSet but were created without its sidecars .*, in 2 namespaces; recreate them to inject\. Each namespace is told of its own pods by a PodNotInjected event \(kubectl get events -A --field-selector reason=PodNotInjected\)$/) as unknown,
    });
    for (const name of ['shop', 'bank', 'alpha', 'beta', 'xray', 'yank']) expect(notice?.event.message).not.toContain(name);
    expect(notice?.podEvents).toEqual([
      { pod: { namespace: 'shop', name: 'alpha', uid: 'uid-alpha' }, type: 'Warning', reason: 'PodNotInjected', message: expect.stringMatching(/^2 pods in this namespace match SidecarSet s .*: alpha, beta$/) as unknown },
      { pod: { namespace: 'bank', name: 'xray', uid: 'uid-xray' }, type: 'Warning', reason: 'PodNotInjected', message: expect.stringMatching(/^2 pods in this namespace match SidecarSet s .*: xray, yank$/) as unknown },
    ]);
  });

  it('says how many namespaces were left untold when there are more than it tells', () => {
    const many: NotInjectedFinding = { uid: 'u', count: 30, namespaceCount: 30, namespaces: Array.from({ length: MAX_NAMESPACES_RECORDED }, (_, i) => ({ namespace: `ns-${i}`, count: 1, pods: [{ name: 'p', uid: `u-${i}` }] })) };
    const [notice] = notInjectedEvents().due(new Map([['s', many]]), new Set(['s']));
    expect(notice?.event.message).toMatch(/in 30 namespaces; .*Each namespace \(the first 20 namespaces\) is told/);
    expect(notice?.podEvents).toHaveLength(MAX_NAMESPACES_RECORDED);
  });
});
