/** Reading a page's doctest marks: what is run, what is checked, and marks that would check nothing refused. */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandsOf, DocMarkError, docSteps, linePattern, missingLines } from '../../testkit/doc-commands/blocks.ts';
import { TESTED_PAGES } from '../../testkit/doc-commands/pages.ts';
import { checkedScript, isNpmStart, isWatch, withPort } from '../../testkit/doc-commands/session.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('docSteps', () => {
  it('reads run blocks, expect blocks and contains marks in order, and leaves unmarked blocks alone', () => {
    const page = [
      '```sh',
      'not run',
      '```',
      '<!-- doctest -->',
      '```sh',
      '# a comment line',
      'kubectl get pods \\',
      '  -o yaml',
      '',
      'npm start   # exit 0',
      '```',
      '<!-- doctest: contains "a \\"quoted\\" word" "b" -->',
      '1. a list item:',
      '   <!-- doctest: expect -->',
      '   ```json',
      '   {"a": 1}',
      '   ```',
    ].join('\n');
    expect(docSteps(page, 'p.md')).toEqual([
      { kind: 'run', line: 5, commands: ['kubectl get pods \\\n  -o yaml', 'npm start   # exit 0'] },
      { kind: 'contains', line: 12, texts: ['a "quoted" word', 'b'] },
      { kind: 'expect', line: 15, language: 'json', text: '{"a": 1}' },
    ]);
  });

  it.each<[string, string, RegExp]>([
    ['a mark before no block', '<!-- doctest -->\ntext', /p\.md:1: a doctest mark must stand on the line before a fenced block/],
    ['a check before any run', '<!-- doctest: contains "x" -->', /p\.md:1: a "contains" mark with no doctest block before it/],
    ['an expect before any run', '<!-- doctest: expect -->\n```\nx\n```', /p\.md:1: an "expect" block with no doctest block before it/],
    ['an unknown mark', '<!-- doctest: maybe -->\n```\nx\n```', /unknown doctest mark "maybe"/],
    ['a contains mark without strings', '<!-- doctest -->\n```\nx\n```\n<!-- doctest: contains -->', /"contains" takes one or more quoted strings/],
    ['an unclosed block', '<!-- doctest -->\n```sh\nx', /p\.md:2: the fenced block is never closed/],
    ['an empty run block', '<!-- doctest -->\n```sh\n# only a comment\n```', /a doctest block with no command/],
  ])('refuses %s, naming the page and line', (_, page, message) => {
    expect(() => docSteps(page, 'p.md')).toThrow(DocMarkError);
    expect(() => docSteps(page, 'p.md')).toThrow(message);
  });

  it('costs time linear in the page (a long page of marks and blocks)', () => {
    const page = '<!-- doctest -->\n```sh\necho x\n```\n<!-- doctest: contains "x" -->\n'.repeat(20_000);
    const started = performance.now();
    expect(docSteps(page, 'p.md')).toHaveLength(40_000);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('commandsOf', () => {
  it('keeps a continued command whole, as the shell reads it, and drops blank and comment lines', () => {
    expect(commandsOf('a \\\n  b\n\n# c\nd # e\n')).toEqual(['a \\\n  b', 'd # e']);
  });
});

describe('expected output', () => {
  it('lets digits stand for any number and matches the rest literally', () => {
    expect(linePattern('serving (pid 9559): sleep 600').test('x serving (pid 12): sleep 7 y')).toBe(true);
    expect(linePattern('a.b (c)').test('aXb (c)')).toBe(false);
    expect(missingLines('one 1\n\ntwo', 'one 22\nthree')).toEqual(['two']);
  });
});

describe('the session\'s reading of commands', () => {
  it('tells npm start and watches from the rest', () => {
    expect(isNpmStart('npm start -- --test-kubelet=2000')).toBe(true);
    expect(isNpmStart('npm run demo')).toBe(false);
    expect(isWatch('kubectl get sidecarset log-agent -w')).toBe(true);
    expect(isWatch('npm run -s status -- --watch                 # finds the embedded cluster by itself')).toBe(true);
    expect(isWatch('kubectl get pods -o wide')).toBe(false);
    expect(isWatch('ls # see -w')).toBe(false);
  });

  it('gives npm start a port after npm\'s --, adding one when absent', () => {
    expect(withPort('npm start', 5)).toBe('npm start -- --port 5');
    expect(withPort('npm start -- --test-kubelet=2000', 5)).toBe('npm start -- --port 5 --test-kubelet=2000');
  });

  it('runs a backslash-continued command as one command', () => {
    const run = spawnSync('bash', ['-c', checkedScript(commandsOf('echo a \\\n  b\necho c\n'))], { encoding: 'utf8' });
    expect({ code: run.status, stdout: run.stdout }).toEqual({ code: 0, stdout: 'a b\nc\n' });
  });

  it('checks each command\'s exit status against the one its line names', () => {
    const script = checkedScript(['true', 'false   # exit 1, not ready yet', 'sleep 1 &']);
    expect(script).toContain('true\n__rc=$?; if [ "$__rc" -ne 0 ]');
    expect(script).toContain('false   # exit 1, not ready yet\n__rc=$?; if [ "$__rc" -ne 1 ]');
    expect(script).toMatch(/sleep 1 &$/);
  });
});

describe('the tested pages', () => {
  it.each(TESTED_PAGES.map((page) => [page]))('%s carries doctest marks that read', (page) => {
    const steps = docSteps(readFileSync(join(projectRoot, page), 'utf8'), page);
    expect(steps.filter((step) => step.kind === 'run').length).toBeGreaterThan(0);
    expect(steps.filter((step) => step.kind !== 'run').length).toBeGreaterThan(0);
  });
});
