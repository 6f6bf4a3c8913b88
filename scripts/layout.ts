/**
 * `npm run -s layout`: the figures docs/ARCHITECTURE.md quotes, counted from
 * the tree as it is, so that anyone can check them. For each top-level
 * directory its TypeScript files and lines; inside lib/, its rooms (a folder
 * or a top-level file), the arrows between rooms (a room importing another),
 * the arrows that lie on a circle of rooms (an order of the rooms exists
 * exactly when there is none), and the circles of files (groups of files
 * that import each other round).
 *
 * The file walk and the import reading are the ones
 * test/architecture/imports.test.ts checks the arrows with.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const skippedDirectories = new Set(['node_modules', '.git', '.cache', 'dist', 'cdk.out', 'coverage']);

/** Every TypeScript and JavaScript source file under `directory` (declaration files and build output left out). */
export function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return skippedDirectories.has(entry.name) ? [] : sourceFiles(path);
    return /\.(ts|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The relative imports of a file (static, re-exports and dynamic import()), comments ignored, resolved to paths. */
export function relativeImports(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles.map((i) => i.fileName).filter((name) => name.startsWith('./') || name.startsWith('../')).map((name) => resolve(dirname(file), name));
}

/** The strongly connected components of a graph with more than one node (Tarjan's algorithm, iterative: linear in nodes and edges). */
export function circles(nodes: readonly string[], edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const lowOf = (node: string): number => low.get(node) ?? Number.POSITIVE_INFINITY;
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  const enter = (node: string, work: { node: string; child: number }[]): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    work.push({ node, child: 0 });
  };
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: { node: string; child: number }[] = [];
    enter(root, work);
    for (let frame = work.at(-1); frame !== undefined; frame = work.at(-1)) {
      const target = (edges.get(frame.node) ?? [])[frame.child];
      if (target !== undefined) {
        frame.child++;
        const seen = index.get(target);
        if (seen === undefined) enter(target, work);
        else if (onStack.has(target)) low.set(frame.node, Math.min(lowOf(frame.node), seen));
        continue;
      }
      work.pop();
      const parent = work.at(-1);
      if (parent !== undefined) low.set(parent.node, Math.min(lowOf(parent.node), lowOf(frame.node)));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
        onStack.delete(member);
        component.push(member);
        if (member === frame.node) break;
      }
      if (component.length > 1) found.push(component.sort());
    }
  }
  return found;
}

export interface LibFigures {
  rooms: string[];
  /** Room-to-room imports, each once. */
  arrows: number;
  /** Arrows between two rooms of one circle of rooms: 0 exactly when the rooms can be put in an order. */
  arrowsOnCircles: number;
  fileCircles: string[][];
}

/** The figures of lib/ under `root`. */
export function libFigures(root: string = projectRoot): LibFigures {
  const libRoot = join(root, 'lib');
  const files = sourceFiles(libRoot);
  const roomOf = (file: string): string => relative(libRoot, file).split(sep)[0] ?? '';
  const fileEdges = new Map(files.map((file) => [file, relativeImports(file).filter((target) => target.startsWith(libRoot + sep))]));
  const roomEdges = new Map<string, Set<string>>();
  for (const [file, targets] of fileEdges) {
    for (const target of targets) {
      if (roomOf(target) === roomOf(file)) continue;
      const set = roomEdges.get(roomOf(file)) ?? new Set<string>();
      set.add(roomOf(target));
      roomEdges.set(roomOf(file), set);
    }
  }
  const rooms = [...new Set(files.map(roomOf))].sort();
  const roomGraph = new Map([...roomEdges].map(([room, targets]) => [room, [...targets]]));
  const circleOf = new Map(circles(rooms, roomGraph).flatMap((component, i) => component.map((room) => [room, i] as const)));
  let arrows = 0;
  let arrowsOnCircles = 0;
  for (const [room, targets] of roomGraph) {
    for (const target of targets) {
      arrows++;
      if (circleOf.has(room) && circleOf.get(room) === circleOf.get(target)) arrowsOnCircles++;
    }
  }
  return { rooms, arrows, arrowsOnCircles, fileCircles: circles(files, fileEdges)
      .map((c) => c.map((file) => relative(root, file)))
      .sort((x, y) => (x[0] ?? '').localeCompare(y[0] ?? '')) };
}

/** Files and lines of TypeScript per top-level directory. */
export function directorySizes(root: string = projectRoot): { directory: string; files: number; lines: number }[] {
  const sizes = new Map<string, { files: number; lines: number }>();
  for (const file of sourceFiles(root)) {
    const top = relative(root, file).split(sep);
    const directory = top.length === 1 ? '.' : `${top[0] ?? ''}/`;
    const size = sizes.get(directory) ?? { files: 0, lines: 0 };
    size.files++;
    size.lines += readFileSync(file, 'utf8').split('\n').length - 1;
    sizes.set(directory, size);
  }
  return [...sizes].map(([directory, size]) => ({ directory, ...size })).sort((a, b) => a.directory.localeCompare(b.directory));
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const lines = directorySizes().map(({ directory, files, lines: count }) => `${directory.padEnd(15)}${String(files).padStart(5)} files ${String(count).padStart(7)} lines`);
  const lib = libFigures();
  process.stdout.write(
    [
      ...lines,
      '',
      `lib/: ${lib.rooms.length} rooms, ${lib.arrows} arrows between them, ${lib.arrowsOnCircles} on a circle of rooms, ${lib.fileCircles.length} circles of files`,
      `rooms: ${lib.rooms.join(' ')}`,
      ...lib.fileCircles.map((circle) => `circle: ${circle.join(' -> ')}`),
      '',
    ].join('\n'),
  );
}
