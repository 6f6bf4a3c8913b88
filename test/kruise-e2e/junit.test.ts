/**
 * Ginkgo's JUnit report of Kruise's e2e suite read into rows, and the table
 * and summary line written from them (testkit/kruise-e2e/junit.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { allPassed, decodeXmlText, formatResults, JunitReportError, parseJunitReport, specsThatRan } from '../../testkit/kruise-e2e/junit.ts';

// The shape Ginkgo v2.27's reporters/junit_report.go writes: a suite node, a
// passed spec with captured output, a failed one, one skipped by the focus.
const REPORT = `<?xml version="1.0" encoding="UTF-8"?>
  <testsuites tests="4" disabled="0" errors="0" failures="1" time="70.5">
      <testsuite name="Kruise e2e suite" package="/tmp" tests="4" disabled="0" skipped="1" errors="0" failures="1" time="70.5" timestamp="2026-12-06T04:00:00">
          <properties>
              <property name="SuiteSucceeded" value="false"></property>
          </properties>
          <testcase name="[SynchronizedBeforeSuite]" classname="Kruise e2e suite" status="passed" time="0.01"></testcase>
          <testcase name="[It] SidecarSet sidecarSet upgrade cold sidecar container image, and paused" classname="Kruise e2e suite" status="passed" time="41.2">
              <system-err>&gt; Enter [It] &lt;testcase name=&#34;fake&#34; status=&#34;failed&#34;&gt;</system-err>
          </testcase>
          <testcase name="[It] SidecarSet inject pod sidecar with canary sidecarSet" classname="Kruise e2e suite" status="failed" time="29.3">
              <failure message="Timed out after 300.001s.&#xA;Expected&#xA;    &lt;int32&gt;: 0&#xA;to equal | 1" type="failed">[FAILED] Timed out</failure>
              <system-err>long output</system-err>
          </testcase>
          <testcase name="[It] CloneSet scales" classname="Kruise e2e suite" status="skipped" time="0">
              <skipped message="skipped"></skipped>
          </testcase>
      </testsuite>
  </testsuites>`;

describe('the JUnit report of a Kruise e2e group', () => {
  it('reads every test case with its state, time and message, ignoring markup inside captured output', () => {
    const specs = parseJunitReport(REPORT, 'v1beta1.xml');
    expect(specs.map((s) => [s.name, s.state])).toEqual([
      ['[SynchronizedBeforeSuite]', 'passed'],
      ['[It] SidecarSet sidecarSet upgrade cold sidecar container image, and paused', 'passed'],
      ['[It] SidecarSet inject pod sidecar with canary sidecarSet', 'failed'],
      ['[It] CloneSet scales', 'skipped'],
    ]);
    expect(specs[1]?.seconds).toBe(41.2);
    expect(specs[2]?.message).toBe('Timed out after 300.001s.\nExpected\n    <int32>: 0\nto equal | 1');
    expect(specs[3]?.message).toBe('skipped');
  });

  it('counts only the [It] specs that ran: the focus skips the rest of the suite', () => {
    expect(specsThatRan(parseJunitReport(REPORT, 'r.xml')).map((s) => s.state)).toEqual(['passed', 'failed']);
  });

  it('writes a table per group and a summary line naming what did not pass', () => {
    const specs = parseJunitReport(REPORT, 'r.xml');
    const passing = specs.filter((s) => s.state !== 'failed');
    const text = formatResults([
      { group: 'v1alpha1', specs: passing },
      { group: 'v1beta1', specs },
    ]);
    expect(text).toContain('### v1alpha1: 1 of 1 passed');
    expect(text).toContain('### v1beta1: 1 of 2 passed');
    expect(text).toContain('| SidecarSet sidecarSet upgrade cold sidecar container image, and paused | passed | 41 |  |');
    // The first line of the failure, with the table's separator escaped.
    expect(text).toContain('| SidecarSet inject pod sidecar with canary sidecarSet | failed | 29 | Timed out after 300.001s. |');
    expect(text.split('\n').at(-1)).toBe('Kruise e2e: 2 of 3 specs passed (v1alpha1 1/1, v1beta1 1/2); not passed: v1beta1: SidecarSet inject pod sidecar with canary sidecarSet');
    expect(allPassed([{ group: 'v1alpha1', specs: passing }])).toBe(true);
    expect(allPassed([{ group: 'v1beta1', specs }])).toBe(false);
  });

  it('fails a run whose suite setup failed, or in which no spec ran', () => {
    const setupFailed = REPORT.replace('name="[SynchronizedBeforeSuite]" classname="Kruise e2e suite" status="passed"', 'name="[SynchronizedBeforeSuite]" classname="Kruise e2e suite" status="failed"');
    const specs = parseJunitReport(setupFailed, 'r.xml').filter((s) => s.state !== 'failed' || !s.name.startsWith('[It]'));
    expect(allPassed([{ group: 'v1beta1', specs }])).toBe(false);
    expect(formatResults([{ group: 'v1beta1', specs }])).toContain('| [SynchronizedBeforeSuite] | failed |');
    expect(allPassed([{ group: 'v1beta1', specs: specs.filter((s) => !s.name.startsWith('[It]')) }])).toBe(false);
  });

  it.each([
    ['something else', '<html><body>502</body></html>', /not a JUnit report/],
    ['an unclosed test case', '<testsuites><testsuite><testcase name="a" status="passed"', /not closed/],
    ['a test case without its end tag', '<testsuites><testsuite><testcase name="a" status="passed">', /has no <\/testcase>/],
    ['an unknown state', '<testsuites><testcase name="a" status="flaky"/></testsuites>', /status "flaky", not one of passed, failed/],
    ['a nameless test case', '<testsuites><testcase status="passed"/></testsuites>', /has no name/],
  ])('refuses %s, naming the report', (_what, xml, message) => {
    expect(() => parseJunitReport(xml, 'v1alpha1.xml')).toThrow(JunitReportError);
    expect(() => parseJunitReport(xml, 'v1alpha1.xml')).toThrow(message);
    expect(() => parseJunitReport(xml, 'v1alpha1.xml')).toThrow(/^v1alpha1\.xml: /);
  });

  it('decodes XML references and keeps unknown ones as written', () => {
    expect(decodeXmlText('&lt;a&gt; &amp;&quot;&apos; &#34;&#x41;&#xA; &nbsp; &#x110000;')).toBe('<a> &"\' "A\n &nbsp; &#x110000;');
  });

  it('reads a large report in time linear in its size', () => {
    const one = '<testcase name="[It] s" classname="c" status="passed" time="1"><system-err>' + '&lt;testcase '.repeat(50) + '</system-err></testcase>';
    const report = (n: number) => `<testsuites><testsuite>${one.repeat(n)}</testsuite></testsuites>`;
    const time = (n: number) => {
      const text = report(n);
      const started = performance.now();
      expect(parseJunitReport(text, 'big.xml')).toHaveLength(n);
      return performance.now() - started;
    };
    time(2_000);
    const small = Math.min(time(5_000), time(5_000));
    const large = Math.min(time(50_000), time(50_000));
    // Ten times the input: about ten times the time, far from the hundred a quadratic scan would take.
    expect(large / small).toBeLessThan(30);
  });

  describe('a documented difference', () => {
    const CANARY = '[It] SidecarSet SidecarSet Upgrade functionality [SidecarSetUpgrade] inject pod sidecar with canary sidecarSet [SidecarSet, workload]';
    // The failure as Ginkgo wrote it on 2026-12-06: the canary's status with both pods ready.
    const READY = 'Dec  6 07:45:21.724: Failed waiting for sidecarSet to upgrade complete: context deadline exceeded status({1 2 2 2 2 test-sidecarset-e2e-tests-sidecarset-v1beta1-82kch-xm5r2-66b4c77975 0x11362c6d49fc})';
    const spec = (message: string, state: 'failed' | 'passed' = 'failed') => ({ name: CANARY, state, seconds: 309, message });

    it('shows the canary spec failing on current ready counts as documented, and the run as passed', () => {
      const groups = [{ group: 'v1beta1', specs: [spec(READY)] }];
      const text = formatResults(groups);
      expect(text).toContain('| documented difference | 309 | readyPods stays current for NotUpdate sets: docs/DIFFERENCES-FROM-KRUISE-1.9.md');
      expect(text.split('\n').at(-1)).toBe('Kruise e2e: 0 of 1 specs passed (v1beta1 0/1); 1 differs as documented: v1beta1: SidecarSet SidecarSet Upgrade functionality [SidecarSetUpgrade] inject pod sidecar with canary sidecarSet [SidecarSet, workload] (readyPods stays current for NotUpdate sets)');
      expect(allPassed(groups)).toBe(true);
    });

    it.each([
      ['the base still counting the pods', READY.replace('{1 2 2 2 2 ', '{1 2 0 0 0 ')],
      ['the canary missing a pod', READY.replace('{1 2 2 2 2 ', '{1 1 1 1 1 ')],
      ['the canary with pods not updated', READY.replace('{1 2 2 2 2 ', '{1 2 0 2 0 ')],
      ['another failure of the spec', 'Expected <int>: 1 to equal <int>: 2'],
    ])('is a failure when the spec fails otherwise: %s', (_what, message) => {
      const groups = [{ group: 'v1beta1', specs: [spec(message)] }];
      expect(allPassed(groups)).toBe(false);
      expect(formatResults(groups)).toContain('; not passed: v1beta1:');
    });

    it('is recognised only in the group that has the spec', () => {
      expect(allPassed([{ group: 'v1alpha1', specs: [spec(READY)] }])).toBe(false);
    });
  });
});
