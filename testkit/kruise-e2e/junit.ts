/**
 * Ginkgo's JUnit report (`-ginkgo.junit-report=FILE`) of Kruise's e2e suite,
 * read into one row per spec and written back as a table a person reads.
 * Pure: text in, rows and text out.
 *
 * Only the parts of the format Ginkgo v2 writes are read
 * (reporters/junit_report.go): `<testcase name= status= time=>` elements,
 * each with at most one `<failure>`, `<error>` or `<skipped>` child whose
 * `message` attribute says why. Everything else (properties, captured
 * output) is skipped over. One pass over the text: the cost is linear in
 * its size, whatever it holds.
 */
import { documentedDifferenceOf } from './documented.ts';

/** Ginkgo's spec states (types.SpecState's strings). */
export const SPEC_STATES = ['passed', 'failed', 'skipped', 'pending', 'timedout', 'interrupted', 'aborted', 'panicked'] as const;
export type SpecState = (typeof SPEC_STATES)[number];

export interface SpecResult {
  /** Ginkgo's name: the node type in brackets, then the full text (`[It] SidecarSet ... inject pod sidecar`). */
  name: string;
  state: SpecState;
  seconds: number;
  /** Why it failed or was skipped, when the report says ('' otherwise). */
  message: string;
}

export class JunitReportError extends Error {
  constructor(source: string, message: string) {
    super(`${source}: ${message}`);
    this.name = 'JunitReportError';
  }
}

const ENTITIES: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** XML character and entity references decoded; an unknown one is kept as written. */
export function decodeXmlText(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-z]{2,4});/g, (whole, ref: string) => {
    if (ref.startsWith('#')) {
      const code = ref[1] === 'x' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
      return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[ref] ?? whole;
  });
}

/** The attributes of a start tag's text (`name="a" status="b"`); XML's two quote styles. */
function attributesOf(tag: string): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const match of tag.matchAll(/([A-Za-z_:][-\w.:]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    attributes.set(match[1] ?? '', decodeXmlText(match[2] ?? match[3] ?? ''));
  }
  return attributes;
}

/** The end of the start tag opened at `from` (the index of its `>`), or -1. */
function tagEnd(xml: string, from: number): number {
  // Attribute values may hold '>' only when quoted; Go's encoder escapes it anyway, but the scan respects quotes.
  let quote = '';
  for (let i = from; i < xml.length; i++) {
    const c = xml[i];
    if (quote !== '') {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '>') {
      return i;
    }
  }
  return -1;
}

function isState(text: string): text is SpecState {
  return (SPEC_STATES as readonly string[]).includes(text);
}

/** Every `<testcase>` of a report, in order. `source` names the report in errors. */
export function parseJunitReport(xml: string, source: string): SpecResult[] {
  if (!/<testsuites[\s>]/.test(xml.slice(0, 4096))) throw new JunitReportError(source, 'not a JUnit report (no <testsuites> element at its start)');
  const results: SpecResult[] = [];
  let at = 0;
  for (;;) {
    const start = xml.indexOf('<testcase', at);
    if (start < 0) break;
    const end = tagEnd(xml, start);
    if (end < 0) throw new JunitReportError(source, `the <testcase> at offset ${start} is not closed`);
    const tag = xml.slice(start + '<testcase'.length, end);
    const attributes = attributesOf(tag);
    let body = '';
    if (tag.trimEnd().endsWith('/')) {
      at = end + 1;
    } else {
      const close = xml.indexOf('</testcase>', end);
      if (close < 0) throw new JunitReportError(source, `the <testcase> at offset ${start} has no </testcase>`);
      body = xml.slice(end + 1, close);
      at = close + '</testcase>'.length;
    }
    const name = attributes.get('name');
    const state = attributes.get('status') ?? '';
    if (name === undefined) throw new JunitReportError(source, `the <testcase> at offset ${start} has no name`);
    if (!isState(state)) throw new JunitReportError(source, `the <testcase> ${JSON.stringify(name)} has status ${JSON.stringify(state)}, not one of ${SPEC_STATES.join(', ')}`);
    const seconds = Number(attributes.get('time') ?? '0');
    results.push({ name, state, seconds: Number.isFinite(seconds) ? seconds : 0, message: messageOf(body) });
  }
  return results;
}

/** The message attribute of a test case's `<failure>`, `<error>` or `<skipped>` child ('' when none). */
function messageOf(body: string): string {
  // The captured output comes after these children, and is escaped, so the first such tag is the child.
  const match = /<(failure|error|skipped)[\s/>]/.exec(body);
  if (match === null) return '';
  const end = tagEnd(body, match.index);
  if (end < 0) return '';
  return attributesOf(body.slice(match.index + match[0].length - 1, end)).get('message') ?? '';
}

/** A run of one group: its name (`v1beta1`) and its specs. */
export interface GroupResult {
  group: string;
  specs: readonly SpecResult[];
}

/** The specs that ran: `[It]` nodes neither skipped nor pending (the focus skips the suite's other specs). */
export function specsThatRan(specs: readonly SpecResult[]): SpecResult[] {
  return specs.filter((s) => s.name.startsWith('[It]') && s.state !== 'skipped' && s.state !== 'pending');
}

/** Suite-level nodes ([BeforeSuite], [SynchronizedAfterSuite], ...) that did not pass: they fail the run too. */
export function failedSetupNodes(specs: readonly SpecResult[]): SpecResult[] {
  return specs.filter((s) => !s.name.startsWith('[It]') && s.state !== 'passed' && s.state !== 'skipped' && s.state !== 'pending');
}

const MESSAGE_WIDTH = 160;

/** The first line of a message, shortened to fit a table cell. */
function firstLine(message: string): string {
  const line = message.trim().split('\n', 1)[0]?.trim() ?? '';
  return line.length > MESSAGE_WIDTH ? `${line.slice(0, MESSAGE_WIDTH - 1)}…` : line;
}

/** Markdown cells hold no `|` or line break. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s+/g, ' ');
}

/**
 * One Markdown table per group (spec, result, seconds, and the first line of
 * a failure's message), then a summary line:
 * `Kruise e2e: 66 of 67 specs passed (v1alpha1 33/33, v1beta1 33/34); 1 differs as documented: ...; not passed: ...`.
 * A failure that is a documented difference (documented.ts) is shown as
 * such, with where it is written down, and counted apart from the passes.
 */
export function formatResults(groups: readonly GroupResult[]): string {
  const out: string[] = [];
  let passed = 0;
  let ran = 0;
  const perGroup: string[] = [];
  const failedNames: string[] = [];
  const documentedNames: string[] = [];
  for (const { group, specs } of groups) {
    const rows = specsThatRan(specs);
    const setup = failedSetupNodes(specs);
    const groupPassed = rows.filter((s) => s.state === 'passed').length;
    passed += groupPassed;
    ran += rows.length;
    perGroup.push(`${group} ${groupPassed}/${rows.length}`);
    out.push(`### ${group}: ${groupPassed} of ${rows.length} passed`, '', '| spec | result | s | why |', '| --- | --- | ---: | --- |');
    for (const spec of [...setup, ...rows]) {
      const text = spec.name.replace(/^\[It\]\s*/, '');
      const documented = documentedDifferenceOf(group, spec);
      const result = documented === undefined ? spec.state : 'documented difference';
      const why = spec.state === 'passed' ? '' : documented === undefined ? firstLine(spec.message) : `${documented.name}: ${documented.doc}; ${firstLine(spec.message)}`;
      out.push(`| ${cell(text)} | ${result} | ${spec.seconds.toFixed(0)} | ${cell(why)} |`);
      if (documented !== undefined) documentedNames.push(`${group}: ${text} (${documented.name})`);
      else if (spec.state !== 'passed') failedNames.push(`${group}: ${text}`);
    }
    out.push('');
  }
  const documented = documentedNames.length === 0 ? '' : `; ${documentedNames.length} ${documentedNames.length === 1 ? 'differs' : 'differ'} as documented: ${documentedNames.join('; ')}`;
  const failures = failedNames.length === 0 ? '' : `; not passed: ${failedNames.join('; ')}`;
  out.push(`Kruise e2e: ${passed} of ${ran} specs passed (${perGroup.join(', ')})${documented}${failures}`);
  return out.join('\n');
}

/**
 * Whether every spec that ran passed or failed exactly as a documented
 * difference, no suite node failed, and something ran at all.
 */
export function allPassed(groups: readonly GroupResult[]): boolean {
  return groups.every(({ group, specs }) => {
    const rows = specsThatRan(specs);
    return rows.length > 0 && rows.every((s) => s.state === 'passed' || documentedDifferenceOf(group, s) !== undefined) && failedSetupNodes(specs).length === 0;
  });
}
