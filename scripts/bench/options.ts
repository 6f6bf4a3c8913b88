/** The command line of `npm run bench`. */
import { resolve } from 'node:path';
import { SECTIONS, type SectionId } from './report.ts';

export interface BenchOptions {
  sections: SectionId[];
  quick: boolean;
  out: string;
}

export class BenchUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BenchUsageError';
  }
}

export const USAGE = `npm run bench -- [--only ${SECTIONS.join('|')}[,...]] [--quick] [--out FILE]`;

function isSection(name: string): name is SectionId {
  return (SECTIONS as readonly string[]).includes(name);
}

/** Parses the arguments; `root` resolves the default output, docs/BENCHMARKS.md. */
export function parseBenchOptions(args: readonly string[], root: string): BenchOptions {
  const options: BenchOptions = { sections: [...SECTIONS], quick: false, out: resolve(root, 'docs', 'BENCHMARKS.md') };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = () => {
      const v = args[++i];
      if (v === undefined || v.startsWith('--')) throw new BenchUsageError(`${arg ?? ''} needs a value`);
      return v;
    };
    if (arg === '--quick') options.quick = true;
    else if (arg === '--out') options.out = resolve(value());
    else if (arg === '--only') {
      const names = value().split(',').map((s) => s.trim()).filter((s) => s !== '');
      const unknown = names.filter((n) => !isSection(n));
      if (unknown.length > 0) throw new BenchUsageError(`unknown section ${unknown.join(', ')}; sections are ${SECTIONS.join(', ')}`);
      options.sections = SECTIONS.filter((s) => names.includes(s));
    } else throw new BenchUsageError(`unknown argument ${arg ?? ''}`);
  }
  return options;
}
