/**
 * The commands a Markdown page tells its reader to run, and the output it
 * promises, read from marks the page carries (HTML comments, which render as
 * nothing):
 *
 *   <!-- doctest -->                  before a fenced block: run its commands
 *   <!-- doctest: expect -->          before a fenced block: output the run
 *                                     block before it must print (a json block
 *                                     is compared as JSON with that block's
 *                                     whole output; any other, line by line,
 *                                     digits standing for any number, so a
 *                                     pid may differ)
 *   <!-- doctest: contains "a" "b" --> text the run block before it must print
 *
 * A mark that names no block, or a check with no run block before it, is an
 * error naming the page and line: a mark that silently checks nothing would
 * let the page drift.
 */

export interface RunStep {
  kind: 'run';
  /** 1-based line of the fence, for messages. */
  line: number;
  /** The block's commands, one per logical line (a backslash-continued command kept whole, blank lines and whole-line comments dropped). */
  commands: string[];
}

export interface ExpectStep {
  kind: 'expect';
  line: number;
  /** The fence's language (`json` compares structurally). */
  language: string;
  text: string;
}

export interface ContainsStep {
  kind: 'contains';
  line: number;
  texts: string[];
}

export type DocStep = RunStep | ExpectStep | ContainsStep;

export class DocMarkError extends Error {
  constructor(page: string, line: number, problem: string) {
    super(`${page}:${line}: ${problem}`);
    this.name = 'DocMarkError';
  }
}

const MARK = /^<!--\s*doctest(?::\s*(.*?))?\s*-->\s*$/;

/** The logical lines of a shell block: a command continued with backslashes kept whole (continuations and all), blank lines and comment lines dropped. */
export function commandsOf(block: string): string[] {
  const commands: string[] = [];
  let pending = '';
  for (const raw of block.split('\n')) {
    const line = raw.trimEnd();
    if (pending === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      // Kept as the shell reads it: the backslash and newline continue the command.
      pending += `${line}\n`;
      continue;
    }
    commands.push(`${pending}${line}`.trim());
    pending = '';
  }
  if (pending !== '') commands.push(pending.trim());
  return commands;
}

/** The quoted strings of a `contains` mark, with \" and \\ unescaped. */
function quotedTexts(args: string, page: string, line: number): string[] {
  const texts: string[] = [];
  const pattern = /\s*"((?:[^"\\]|\\.)*)"/gy;
  let match: RegExpExecArray | null;
  // A failed sticky match resets lastIndex, so the end of the last string is kept apart.
  let end = 0;
  while ((match = pattern.exec(args)) !== null) {
    texts.push((match[1] ?? '').replace(/\\(.)/g, '$1'));
    end = pattern.lastIndex;
  }
  if (texts.length === 0 || args.slice(end).trim() !== '') throw new DocMarkError(page, line, `"contains" takes one or more quoted strings: ${args}`);
  return texts;
}

/** The steps of a page, in order. Linear in the page's length. */
export function docSteps(markdown: string, page: string): DocStep[] {
  const lines = markdown.split('\n');
  const steps: DocStep[] = [];
  let sawRun = false;
  for (let i = 0; i < lines.length; i++) {
    const mark = MARK.exec((lines[i] ?? '').trim());
    if (mark === null) continue;
    const args = (mark[1] ?? '').trim();
    const markLine = i + 1;
    if (args.startsWith('contains')) {
      if (!sawRun) throw new DocMarkError(page, markLine, 'a "contains" mark with no doctest block before it');
      steps.push({ kind: 'contains', line: markLine, texts: quotedTexts(args.slice('contains'.length), page, markLine) });
      continue;
    }
    if (args !== '' && args !== 'expect') throw new DocMarkError(page, markLine, `unknown doctest mark "${args}" (doctest, doctest: expect, doctest: contains "...")`);
    const fence = /^(\s*)(```+)\s*([\w-]*)\s*$/.exec(lines[i + 1] ?? '');
    if (fence === null) throw new DocMarkError(page, markLine, 'a doctest mark must stand on the line before a fenced block');
    const [, indent = '', ticks = '```', language = ''] = fence;
    const body: string[] = [];
    let j = i + 2;
    for (; j < lines.length && (lines[j] ?? '').trim() !== ticks; j++) body.push((lines[j] ?? '').startsWith(indent) ? (lines[j] ?? '').slice(indent.length) : (lines[j] ?? ''));
    if (j >= lines.length) throw new DocMarkError(page, markLine + 1, 'the fenced block is never closed');
    if (args === 'expect') {
      if (!sawRun) throw new DocMarkError(page, markLine, 'an "expect" block with no doctest block before it');
      steps.push({ kind: 'expect', line: markLine + 1, language, text: body.join('\n') });
    } else {
      const commands = commandsOf(body.join('\n'));
      if (commands.length === 0) throw new DocMarkError(page, markLine + 1, 'a doctest block with no command');
      steps.push({ kind: 'run', line: markLine + 1, commands });
      sawRun = true;
    }
    i = j;
  }
  return steps;
}

/** An expected line as a pattern: runs of digits match any number, everything else literally, surrounding space ignored. */
export function linePattern(expected: string): RegExp {
  const parts = expected.trim().split(/\d+/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(parts.join('\\d+'));
}

/** The expected lines the output lacks (an empty list when it holds them all). */
export function missingLines(expected: string, output: string): string[] {
  return expected
    .split('\n')
    .filter((line) => line.trim() !== '')
    .filter((line) => !linePattern(line).test(output));
}
