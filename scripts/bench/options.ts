/** The command line of `npm run bench`. */
import { resolve } from 'node:path';
import { OPT_IN_SECTIONS, SECTIONS, type SectionId } from './report.ts';

export interface BenchOptions {
  sections: SectionId[];
  quick: boolean;
  out: string;
  /** Exit 1 when any target is missed, so a CI job can fail on it; off by default, as the report is the product. */
  strict: boolean;
  help: boolean;
}

export class BenchUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BenchUsageError';
  }
}

export const USAGE = `npm run bench -- [--only ${SECTIONS.join('|')}[,...]] [--quick] [--out FILE] [--strict] [--help]

  --only SECTIONS  run these sections only (comma-separated), in their usual order;
                   ${OPT_IN_SECTIONS.join(', ')} run only when named here (they take many minutes)
  --quick          fewer repetitions and shorter runs: a smoke test, not figures to quote
  --out FILE       write the report to FILE instead of docs/BENCHMARKS.md
  --strict         exit 1 when any target is missed (MISS); without it a run exits 0 either way
  --help           print this and exit`;

function isSection(name: string): name is SectionId {
  return (SECTIONS as readonly string[]).includes(name);
}

/** Parses the arguments; `root` resolves the default output, docs/BENCHMARKS.md. */
export function parseBenchOptions(args: readonly string[], root: string): BenchOptions {
  const options: BenchOptions = { sections: SECTIONS.filter((s) => !OPT_IN_SECTIONS.includes(s)), quick: false, out: resolve(root, 'docs', 'BENCHMARKS.md'), strict: false, help: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = () => {
      const v = args[++i];
      if (v === undefined || v.startsWith('--')) throw new BenchUsageError(`${arg ?? ''} needs a value`);
      return v;
    };
    if (arg === '--quick') options.quick = true;
    else if (arg === '--strict') options.strict = true;
    else if (arg === '--help' || arg === '-h') options.help = true;
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
