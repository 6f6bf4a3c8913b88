/**
 * The command line of the Kruise e2e run
 * (`npm run conformance -- --kruise-e2e [options]`), parsed without I/O.
 */
import { parseArgs } from 'node:util';

/** Kruise's two SidecarSet spec groups: test/e2e/apps/<group>/sidecarset*.go. */
export const KRUISE_E2E_GROUPS = ['v1alpha1', 'v1beta1'] as const;
export type KruiseE2eGroup = (typeof KRUISE_E2E_GROUPS)[number];

export const KRUISE_E2E_FLAG = '--kruise-e2e';

export const KRUISE_E2E_USAGE = `usage: npm run conformance -- --kruise-e2e [--group v1alpha1|v1beta1|both] [--focus REGEX] [--report-dir DIR]
  Builds kube-controller-manager and OpenKruise v1.9.0's e2e test binary from Go modules (once, into .cache),
  starts the embedded cluster with this project and the test kubelet (as npm start -- --test-kubelet does) and
  the controller manager, runs Kruise's SidecarSet specs of each group (both at once by default, then the specs
  that write a cluster-wide object one group at a time; with --focus, one group at a time) and prints a table
  per spec and a summary line. A spec failing exactly as a documented difference says so and fails nothing.
  --group G        one group only (default both)
  --focus REGEX    only the specs whose text matches (Ginkgo's -ginkgo.focus), within the groups' files
  --report-dir DIR where the JUnit reports, the tables and the logs go (default: a new directory under the
                   system's temporary directory, printed at the start)
Exit status: 0 when every spec that ran passed (or differed as documented), 1 when one did not, 2 on a usage error or when the run could
not be made (a build, the cluster or the controller manager failed).`;

export class KruiseE2eUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KruiseE2eUsageError';
  }
}

export interface KruiseE2eOptions {
  groups: KruiseE2eGroup[];
  /** A Ginkgo focus regular expression, when given. */
  focus?: string;
  /** Where reports go, when given. */
  reportDir?: string;
}

/** The options after `--kruise-e2e` (which may appear anywhere in argv and is dropped). */
export function parseKruiseE2eArgs(argv: readonly string[]): KruiseE2eOptions {
  const rest = argv.filter((arg) => arg !== KRUISE_E2E_FLAG);
  let values;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: { group: { type: 'string' }, focus: { type: 'string' }, 'report-dir': { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    // parseArgs names the option; the differential run's options (--runs, --seed, --kruise) land here too.
    throw new KruiseE2eUsageError(`${KRUISE_E2E_FLAG}: ${(error as Error).message}`);
  }
  const group = values.group ?? 'both';
  let groups: KruiseE2eGroup[];
  if (group === 'both') groups = [...KRUISE_E2E_GROUPS];
  else if ((KRUISE_E2E_GROUPS as readonly string[]).includes(group)) groups = [group as KruiseE2eGroup];
  else throw new KruiseE2eUsageError(`--group must be ${KRUISE_E2E_GROUPS.join(', ')} or both, got ${JSON.stringify(group)}`);
  const focus = values.focus;
  if (focus !== undefined) {
    if (focus === '') throw new KruiseE2eUsageError('--focus needs a regular expression');
    try {
      // Go's RE2 is not JavaScript's, but what neither accepts is a typo worth refusing before minutes of building.
      new RegExp(focus);
    } catch (error) {
      throw new KruiseE2eUsageError(`--focus is not a regular expression: ${(error as Error).message}`);
    }
  }
  const reportDir = values['report-dir'];
  if (reportDir === '') throw new KruiseE2eUsageError('--report-dir needs a directory');
  return { groups, ...(focus !== undefined ? { focus } : {}), ...(reportDir !== undefined ? { reportDir } : {}) };
}
