/** The figures docs/ARCHITECTURE.md quotes are those `npm run -s layout` (scripts/layout.ts) counts from the tree as it is. */
import { describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { circles, libFigures, projectRoot } from '../../scripts/layout.ts';

describe('circles', () => {
  it('finds each group of nodes that reach each other, and no lone node', () => {
    const edges = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', ['e']],
      ['e', ['d']],
      ['f', ['a']],
    ]);
    expect(circles(['a', 'b', 'c', 'd', 'e', 'f'], edges).map((c) => c.join(''))).toEqual(['de', 'abc']);
    expect(circles(['x', 'y'], new Map([['x', ['y']]]))).toEqual([]);
  });
});

describe('libFigures', () => {
  it('counts rooms, the arrows between them and those on a circle, in a tree of its own', () => {
    const root = mkdtempSync(join(tmpdir(), 'layout-'));
    try {
      const write = (path: string, text: string) => {
        mkdirSync(dirname(join(root, 'lib', path)), { recursive: true });
        writeFileSync(join(root, 'lib', path), text);
      };
      write('kube/a.ts', "import './b.ts';\n");
      write('kube/b.ts', "import './a.ts';\n");
      write('sidecarset/s.ts', "import '../kube/a.ts';\nimport '../rollout/r.ts';\n");
      write('rollout/r.ts', "import '../sidecarset/s.ts';\n");
      write('ports.ts', "import './kube/a.ts';\n");
      expect(libFigures(root)).toEqual({
        rooms: ['kube', 'ports.ts', 'rollout', 'sidecarset'],
        arrows: 4,
        arrowsOnCircles: 2,
        fileCircles: [
          ['lib/kube/a.ts', 'lib/kube/b.ts'],
          ['lib/rollout/r.ts', 'lib/sidecarset/s.ts'],
        ],
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('gives the figures docs/ARCHITECTURE.md quotes', () => {
    const doc = readFileSync(join(projectRoot, 'docs', 'ARCHITECTURE.md'), 'utf8');
    const quoted = /<!-- layout-figures -->\n(lib\/: .*)\n/.exec(doc)?.[1];
    const f = libFigures();
    expect(quoted).toBe(`lib/: ${f.rooms.length} rooms, ${f.arrows} arrows between them, ${f.arrowsOnCircles} on a circle of rooms, ${f.fileCircles.length} circles of files`);
  });
});
