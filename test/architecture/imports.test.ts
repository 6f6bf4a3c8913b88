/**
 * The project's import arrows (docs/ARCHITECTURE.md): every relative import of
 * every TypeScript and JavaScript file is read and checked against the layer
 * rules, so an arrow into a forbidden layer fails here, naming the file and
 * the import, instead of growing unnoticed.
 *
 * It also checks the split of the suites: a suite that needs the real control
 * plane (it reaches control-plane/ through test/ and testkit/ modules) must be
 * named `*.integration.test.ts`, so that `npm run test:fast` never starts one
 * and `npm run test:integration` never misses one.
 */
import { describe, expect, it } from '@jest/globals';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { relativeImports, sourceFiles } from '../../scripts/layout.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

type Layer = 'lib' | 'functions' | 'control-plane' | 'testkit' | 'scripts' | 'infra' | 'test' | 'root';

/** Which layers each layer may import (its own always included). */
const allowed: Record<Layer, readonly Layer[]> = {
  lib: ['lib'],
  'control-plane': ['control-plane', 'lib'],
  functions: ['functions', 'lib', 'control-plane'],
  testkit: ['testkit', 'lib', 'functions', 'control-plane'],
  scripts: ['scripts', 'testkit', 'control-plane', 'functions', 'infra', 'lib'],
  infra: ['infra', 'lib', 'functions'],
  test: ['test', 'testkit', 'control-plane', 'scripts', 'infra', 'functions', 'lib'],
  root: ['root', 'lib', 'functions', 'control-plane', 'testkit', 'scripts', 'infra'],
};

function layerOf(file: string): Layer {
  const top = relative(projectRoot, file).split(sep);
  if (top.length === 1) return 'root';
  const name = top[0] as Layer;
  if (name in allowed) return name;
  throw new Error(`${relative(projectRoot, file)} lies in a directory no layer rule names: add it to test/architecture/imports.test.ts and docs/ARCHITECTURE.md`);
}

const files = sourceFiles(projectRoot);
const importsOf = new Map(files.map((file) => [file, relativeImports(file)]));
const show = (file: string): string => relative(projectRoot, file).split(sep).join('/');

describe('the import arrows', () => {
  it('finds the files it checks (a broken walk would check nothing)', () => {
    const layers = new Set(files.map(layerOf));
    expect([...layers].sort()).toEqual(expect.arrayContaining(['control-plane', 'functions', 'lib', 'scripts', 'test', 'testkit']));
    expect(files.length).toBeGreaterThan(200);
  });

  it('every import runs along an allowed arrow (nothing imports test/; lib/ imports nothing of ours outside lib/)', () => {
    const broken = files.flatMap((file) => {
      const from = layerOf(file);
      return (importsOf.get(file) ?? []).filter((target) => !allowed[from].includes(layerOf(target))).map((target) => `${show(file)} (${from}) imports ${show(target)} (${layerOf(target)})`);
    });
    expect(broken).toEqual([]);
  });

  it('every import names a file that exists', () => {
    const known = new Set(files);
    const missing = files.flatMap((file) => (importsOf.get(file) ?? []).filter((target) => !known.has(target) && /\.(ts|mts|js|mjs)$/.test(target)).map((target) => `${show(file)} imports missing ${show(target)}`));
    expect(missing).toEqual([]);
  });
});

/**
 * The order inside lib/ (docs/ARCHITECTURE.md, "The order inside lib/"): its
 * folders and its two top-level files, in tiers from top to bottom. A file
 * may import its own folder and any folder of a lower tier; an import of its
 * own tier or of one above is an arrow back up (and every circle between
 * folders holds one), so it fails here, naming the file and the import.
 */
const libTiers: readonly (readonly string[])[] = [
  ['adapters'],
  ['webhook-config'],
  ['webhooks', 'migrate', 'explain', 'doctor'],
  ['metrics', 'status-view'],
  ['status-sync'],
  ['auth'],
  ['ports.ts'],
  ['ports'],
  ['rollout', 'crd', 'conversion'],
  ['sidecarset', 'admission'],
  ['kube', 'errors.ts'],
];

const libRoot = join(projectRoot, 'lib');
const tierOf = new Map(libTiers.flatMap((tier, index) => tier.map((room) => [room, libTiers.length - index] as const)));

/** The lib/ folder (or top-level file) a lib/ file lies in. */
function libRoomOf(file: string): string {
  return relative(libRoot, file).split(sep)[0] ?? '';
}

describe('the order inside lib/', () => {
  const libFiles = files.filter((file) => layerOf(file) === 'lib');

  it('names every folder and top-level file of lib/, and nothing else', () => {
    const rooms = new Set(libFiles.map(libRoomOf));
    expect([...rooms].filter((room) => !tierOf.has(room)).map((room) => `lib/${room} is in no tier: add it to libTiers in test/architecture/imports.test.ts and to docs/ARCHITECTURE.md`)).toEqual([]);
    expect([...tierOf.keys()].filter((room) => !rooms.has(room)).map((room) => `libTiers names lib/${room}, which holds no source file`)).toEqual([]);
  });

  it('every import inside lib/ runs down the order (none to its own tier or above)', () => {
    const back = libFiles.flatMap((file) => {
      const from = libRoomOf(file);
      return (importsOf.get(file) ?? [])
        .filter((target) => layerOf(target) === 'lib')
        .map((target) => ({ target, to: libRoomOf(target) }))
        .filter(({ to }) => to !== from && (tierOf.get(to) ?? Infinity) >= (tierOf.get(from) ?? -Infinity))
        .map(({ target, to }) => `${show(file)} imports ${show(target)}: lib/${from} (tier ${tierOf.get(from) ?? '?'}) may not import lib/${to} (tier ${tierOf.get(to) ?? '?'})`);
    });
    expect(back).toEqual([]);
  });
});

/** Whether a suite reaches control-plane/ through test/, testkit/ and control-plane/ modules (product code that can start a control plane on demand is not followed). */
function needsControlPlane(suite: string): boolean {
  const seen = new Set<string>();
  const walk = (file: string): boolean => {
    if (seen.has(file)) return false;
    seen.add(file);
    const layer = layerOf(file);
    if (layer === 'control-plane') return true;
    if (layer !== 'test' && layer !== 'testkit') return false;
    return (importsOf.get(file) ?? []).some(walk);
  };
  return walk(suite);
}

describe('the split of the suites', () => {
  const suites = files.filter((file) => file.endsWith('.test.ts'));

  it('every suite is under test/', () => {
    expect(suites.filter((file) => layerOf(file) !== 'test').map(show)).toEqual([]);
  });

  it('a suite is named *.integration.test.ts exactly when it needs the control plane', () => {
    const misnamed = suites.filter((file) => needsControlPlane(file) !== file.endsWith('.integration.test.ts')).map((file) => (needsControlPlane(file) ? `${show(file)} needs the control plane: name it *.integration.test.ts` : `${show(file)} does not need the control plane: drop .integration from its name`));
    expect(misnamed).toEqual([]);
  });
});
