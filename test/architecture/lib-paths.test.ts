/**
 * lib/ holds the domain: it may not carry what belongs to the entry points,
 * such as the path of a Lambda entry file or of a script (those live in
 * functions/entry-points.ts and beside the CLIs). Every string and template
 * literal of lib/ is read with TypeScript's parser (comments do not count)
 * and none may name a file under another layer's directory.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OTHER_LAYER_PATH = /^\.{0,2}\/?(functions|infra|scripts|control-plane|testkit|test)\/[\w./-]+\.(ts|mts|js|mjs)\b/;

function libFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return libFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The text of every string and template literal (each piece of a template) of a source file. */
export function literalsOf(source: string): string[] {
  const file = ts.createSourceFile('x.ts', source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node)) found.push(node.text);
    else if (ts.isTemplateExpression(node)) found.push(node.head.text, ...node.templateSpans.map((span) => span.literal.text));
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('lib/', () => {
  it('finds the literals it checks (a parse that saw nothing would pass anything)', () => {
    expect(literalsOf("const a = 'functions/x/handler.ts'; // 'infra/y.ts'\nconst b = `scripts/z.ts`;")).toEqual(['functions/x/handler.ts', 'scripts/z.ts']);
    expect(['functions/pod-inject/handler.ts', './scripts/bundle.ts', 'lib/kube/names.ts', 'functions are'].map((text) => OTHER_LAYER_PATH.test(text))).toEqual([true, true, false, false]);
  });

  it('names no file of the entry points, scripts or tests in its strings', () => {
    const named = libFiles(join(projectRoot, 'lib')).flatMap((file) =>
      literalsOf(readFileSync(file, 'utf8'))
        .filter((text) => OTHER_LAYER_PATH.test(text))
        .map((text) => `${relative(projectRoot, file)}: '${text}'`),
    );
    expect(named).toEqual([]);
  });
});
