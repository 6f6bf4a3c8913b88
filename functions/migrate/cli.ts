/**
 * `npm run -s migrate -- check [--kubeconfig FILE] [--kruise-namespace NS]
 * [--revision-namespace NS]`: the read-only preflight of docs/MIGRATION.md.
 * It reads the cluster (GET requests only: lib/adapters/kube-migrate.ts),
 * decides with lib/migrate/assess.ts and prints what it found, what blocks
 * the switch and the next step.
 *
 * Exit codes: 0 ready (nothing blocks the next step, and a switch now
 * restarts no pod); 1 not ready, with the reasons; 2 bad usage, no usable
 * kubeconfig, or the cluster cannot be read (unreachable, refused). Every
 * failure is one line on standard error.
 */
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { KubeconfigError } from '../../lib/adapters/kubeconfig-reader.ts';
import { dns1123LabelErrors } from '../../lib/kube/names.ts';
import { errorMessage } from '../../lib/errors.ts';
import { assessMigration } from '../../lib/migrate/assess.ts';
import { gatherSnapshot, type MigrationReads } from '../../lib/migrate/gather.ts';
import { KRUISE_NAMESPACE } from '../../lib/migrate/kruise-manager.ts';
import { formatReport } from '../../lib/migrate/report-text.ts';

export const MIGRATE_USAGE = `usage: npm run -s migrate -- check [--kubeconfig FILE] [--kruise-namespace NS] [--revision-namespace NS]
  check                    read the cluster (GET requests only) and report where a switch between OpenKruise's
                           SidecarSet and this project stands: Kruise's version, its webhook entries and controller,
                           the CRD's stored versions, the SidecarSets, their ControllerRevisions, pods whose
                           annotations cannot be read, whether a switch now would restart any pod, and the next
                           step of docs/MIGRATION.md
  --kubeconfig FILE        the cluster (default: $KUBECONFIG, else the cluster of a running npm start, else
                           ~/.kube/config)
  --kruise-namespace NS    where Kruise's manager runs (default kruise-system)
  --revision-namespace NS  where this project keeps ControllerRevisions (default $SIDECARSET_REVISION_NAMESPACE,
                           else kruise-system)
  -h, --help               this text
exit codes: 0 ready; 1 not ready (the reasons are listed); 2 bad usage, bad kubeconfig, or the cluster cannot be read`;

export interface MigrateOptions {
  kubeconfig?: string;
  kruiseNamespace: string;
  revisionNamespace?: string;
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const VALUE_FLAGS = ['--kubeconfig', '--kruise-namespace', '--revision-namespace'] as const;

/** @throws UsageError naming the problem. */
export function parseMigrateOptions(argv: readonly string[]): MigrateOptions | 'help' {
  if (argv.includes('-h') || argv.includes('--help')) return 'help';
  const [command, ...rest] = argv;
  if (command === undefined) throw new UsageError('give a command: check');
  if (command !== 'check') throw new UsageError(`unknown command ${command} (the only one is check)`);
  const values = new Map<string, string>();
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? '';
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (!(VALUE_FLAGS as readonly string[]).includes(flag)) throw new UsageError(`unknown option ${arg}`);
    const value = eq > 0 ? arg.slice(eq + 1) : rest[++i];
    if (value === undefined || value === '') throw new UsageError(`${flag} needs a value`);
    if (values.has(flag)) throw new UsageError(`${flag} given twice`);
    if (flag !== '--kubeconfig') {
      const problems = dns1123LabelErrors(value);
      if (problems.length > 0) throw new UsageError(`${flag} must be a namespace name (${problems.join('; ')}); got ${JSON.stringify(value)}`);
    }
    values.set(flag, value);
  }
  const kubeconfig = values.get('--kubeconfig');
  const revisionNamespace = values.get('--revision-namespace');
  return {
    ...(kubeconfig === undefined ? {} : { kubeconfig }),
    kruiseNamespace: values.get('--kruise-namespace') ?? KRUISE_NAMESPACE,
    ...(revisionNamespace === undefined ? {} : { revisionNamespace }),
  };
}

export interface MigrateIo {
  out(text: string): void;
  err(text: string): void;
  signal?: AbortSignal;
}

/** What `connect` gives: the reads, and where this project keeps revisions when --revision-namespace did not say. */
export interface Connected {
  reads: MigrationReads;
  revisionNamespace: string;
  /** The API server's URL, to name it when it cannot be reached. */
  server: string;
}

/** One line for a failure to read the cluster: what was read, and what came back (or that nothing did). */
export function describeReadFailure(error: unknown, server: string): string {
  if (error instanceof KubeApiError) {
    if (error.code === undefined) return `cannot reach the API server at ${server}: ${error.operation}: ${error.message}`.replace(/\s*\n\s*/g, ' ');
    if (error.code === 401) return `the API server at ${server} did not accept the kubeconfig's credentials (${error.operation}: ${error.message})`;
    if (error.code === 403) return `the kubeconfig's user may not read what the check needs (${error.operation}: ${error.message}); it needs get and list on Deployments, webhook configurations, CRDs, SidecarSets, ControllerRevisions, pods and namespaces`;
    return `${error.operation}: ${error.message}`;
  }
  return errorMessage(error).replace(/\s*\n\s*/g, ' ');
}

/** Runs the command; the exit code. */
export async function runMigrate(argv: readonly string[], io: MigrateIo, connect: (kubeconfig: string | undefined) => Promise<Connected>): Promise<number> {
  let options;
  try {
    options = parseMigrateOptions(argv);
  } catch (error) {
    io.err(`migrate: ${errorMessage(error)}\n${MIGRATE_USAGE}\n`);
    return 2;
  }
  if (options === 'help') {
    io.out(`${MIGRATE_USAGE}\n`);
    return 0;
  }
  let connected: Connected;
  try {
    connected = await connect(options.kubeconfig);
  } catch (error) {
    // KubeconfigError, ConfigurationError, SourceOptionsError: each message names its origin.
    io.err(`migrate: ${error instanceof KubeconfigError ? error.message : describeReadFailure(error, '(no server)')}\n`);
    return 2;
  }
  let report;
  try {
    const snapshot = await gatherSnapshot(connected.reads, { kruiseNamespace: options.kruiseNamespace, revisionNamespace: options.revisionNamespace ?? connected.revisionNamespace }, io.signal);
    report = assessMigration(snapshot);
  } catch (error) {
    io.err(`migrate: ${describeReadFailure(error, connected.server)}\n`);
    return 2;
  }
  io.out(formatReport(report));
  return report.blockers.length === 0 ? 0 : 1;
}
