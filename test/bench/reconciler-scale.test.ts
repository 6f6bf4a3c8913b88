import { pastMeasuredScaleNotes, type ScaleFigures } from '../../scripts/bench/reconciler-scale.ts';

const figures = (perPodMs: number): ScaleFigures => ({ pods: 100_000, perPodMs, podBytes: 3_000, pageSize: 500, timeoutSeconds: 300 });

describe('section 4b notes past the measured size', () => {
  test('a resync that fits the minute is not said to outlast it', () => {
    const [first] = pastMeasuredScaleNotes(figures(0.27));
    expect(first).toContain('At 100,000 pods a resync fits its one-minute schedule (27 s)');
    expect(first).not.toContain('outlasts its one-minute schedule (');
  });

  test('a resync longer than the minute is said to outlast it', () => {
    const [first] = pastMeasuredScaleNotes(figures(0.718));
    expect(first).toContain('At 100,000 pods a resync already outlasts its one-minute schedule (72 s)');
  });

  test.each([
    [0.31, '5 minutes (past the configured 300 s timeout'],
    [0.27, '5 minutes (inside the configured 300 s timeout'],
    [0.2, '3 minutes (inside the configured 300 s timeout'],
    [1.0, "17 minutes (past Lambda's 15-minute ceiling)"],
  ])('a million pods at %s ms a pod are weighed against the real limits', (perPodMs, said) => {
    const notes = pastMeasuredScaleNotes(figures(perPodMs));
    expect(notes[3]).toContain(said);
  });
});
