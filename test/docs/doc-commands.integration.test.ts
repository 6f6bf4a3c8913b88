/**
 * The commands the README and the pages a newcomer follows tell them to run,
 * run as they would run them (testkit/doc-commands/): in a copy of the
 * project as a fresh clone has it, with the real package scripts, kubectl
 * and the embedded cluster `npm start` boots, one cluster per page; and the
 * output each page promises (its `doctest: expect` blocks and `doctest:
 * contains` marks) checked. A page whose commands or output drift fails here.
 *
 * kubectl is the one on PATH, or DOCTEST_KUBECTL (a path to another kubectl,
 * to try the pages with another version). Plain `kubectl` (no --kubeconfig)
 * reaches the page's embedded cluster through KUBECONFIG, as a reader's
 * kubectl reaches the cluster they point it at.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { docSteps, missingLines } from '../../testkit/doc-commands/blocks.ts';
import { DocSession, type CommandRun } from '../../testkit/doc-commands/session.ts';
import { projectCopy } from '../../testkit/project-copy.ts';
import { TESTED_PAGES } from '../../testkit/doc-commands/pages.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** One page's commands take minutes on a loaded 2-core machine (an embedded cluster's boot, a rollout, the demo's own cluster). */
const PAGE_MS = 12 * 60_000;

let dir = '';
let home = '';
let bin = '';

beforeAll(async () => {
  dir = await projectCopy(projectRoot, 'doc-commands-', 'copied');
  home = await mkdtemp(join(tmpdir(), 'doc-commands-home-'));
  bin = join(home, 'bin');
  await mkdir(bin);
  const kubectl = process.env.DOCTEST_KUBECTL;
  if (kubectl !== undefined && kubectl !== '') await symlink(kubectl, join(bin, 'kubectl'));
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

/** The output a check reads: the last run block's, every part of it. */
function outputOf(runs: readonly CommandRun[]): string {
  return runs.map((run) => run.output).join('');
}

describeWithControlPlane('the commands of the docs', () => {
  it.each(TESTED_PAGES.map((page) => [page]))('%s: every marked command runs and prints what the page promises', async (page) => {
    const steps = docSteps(await readFile(join(projectRoot, page), 'utf8'), page);
    expect(steps.some((step) => step.kind === 'run')).toBe(true);
    const session = new DocSession(dir, {
      PATH: [bin, join(dir, 'node_modules', '.bin'), process.env.PATH ?? ''].join(delimiter),
      HOME: home,
      KUBECONFIG: join(dir, '.cache', 'local-cluster', 'kubeconfig'),
      LANG: 'C.UTF-8',
    });
    let last: CommandRun[] = [];
    try {
      for (const step of steps) {
        const where = `${page}:${step.line}`;
        if (step.kind === 'run') {
          last = await session.run(step);
        } else if (step.kind === 'contains') {
          const output = outputOf(last);
          expect({ where, missing: step.texts.filter((text) => !output.includes(text)), output }).toMatchObject({ where, missing: [] });
        } else if (step.language === 'json') {
          const output = outputOf(last);
          expect({ where, equal: isDeepStrictEqual(JSON.parse(output), JSON.parse(step.text)), output }).toMatchObject({ where, equal: true });
        } else {
          const output = outputOf(last);
          expect({ where, missing: missingLines(step.text, output), output }).toMatchObject({ where, missing: [] });
        }
      }
    } finally {
      await session.stop();
    }
  }, PAGE_MS);
});
