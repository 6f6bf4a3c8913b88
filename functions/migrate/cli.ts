/**
 * `npm run -s migrate -- check [--kubeconfig FILE] [--kruise-namespace NS]
 * [--revision-namespace NS]`: the read-only preflight of docs/MIGRATION.md.
 * It reads the cluster (GET requests only: lib/adapters/kube-migrate.ts),
 * decides with lib/migrate/assess.ts and prints what it found, what blocks
 * the switch and the next step.
 *
 * `npm run -s migrate -- fence [--kubeconfig FILE] [--dry-run] [-n NS]`:
 * writes the rollout fence on the pods injected before it
 * (lib/migrate/fence-run.ts), as an administrator.
 *
 * Exit codes: 0 ready (nothing blocks the next step, and a switch now
 * restarts no pod) or every pod fenced or skipped; 1 not ready, with the
 * reasons, or some pods failed; 2 bad usage, no usable kubeconfig, or the
 * cluster cannot be read (unreachable, refused). Every failure is one line
 * on standard error.
 */
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { KubeconfigError } from '../../lib/adapters/kubeconfig-reader.ts';
import { dns1123LabelErrors } from '../../lib/kube/names.ts';
import { errorMessage } from '../../lib/errors.ts';
import { assessMigration } from '../../lib/migrate/assess.ts';
import { gatherSnapshot, type MigrationReads } from '../../lib/migrate/gather.ts';
import { KRUISE_NAMESPACE } from '../../lib/migrate/kruise-manager.ts';
import { formatFenceSummary, runFenceBackfill, type FenceCluster } from '../../lib/migrate/fence-run.ts';
import { formatReport } from '../../lib/migrate/report-text.ts';

export const MIGRATE_USAGE = `usage: npm run -s migrate -- check [--kubeconfig FILE] [--kruise-namespace NS] [--revision-namespace NS]
       npm run -s migrate -- fence [--kubeconfig FILE] [--dry-run] [-n NAMESPACE]
  check                    read the cluster (GET requests only) and report where a switch between OpenKruise's
                           SidecarSet and this project stands: Kruise's version, its webhook entries and controller,
                           the CRD's stored versions, the SidecarSets, their ControllerRevisions, pods whose
                           annotations cannot be read, whether a switch now would restart any pod, and the next
                           step of docs/MIGRATION.md
  fence                    as an administrator, write the rollout fence (serverless-sidecarset/rollout-containers and
                           rollout-annotations) on the pods injected before it (by Kruise or an earlier pod-inject):
                           the sidecars their kruise.io/sidecarset-hash lists and their sets' patchPodMetadata keys;
                           a pod already fenced, being deleted, or listing a sidecar it or its set lacks is skipped
  --dry-run                (fence) print what would be written, write nothing
  -n, --namespace NS       (fence) only the pods of this namespace (default: every namespace)
  --kubeconfig FILE        the cluster (default: $KUBECONFIG, else the cluster of a running npm start, else
                           ~/.kube/config)
  --kruise-namespace NS    where Kruise's manager runs (default kruise-system)
  --revision-namespace NS  where this project keeps ControllerRevisions (default $SIDECARSET_REVISION_NAMESPACE,
                           else kruise-system)
  -h, --help               this text
exit codes: 0 ready, or every pod fenced or skipped; 1 not ready (the reasons are listed), or some pods failed;
  2 bad usage, bad kubeconfig, or the cluster cannot be read`;

export interface MigrateOptions {
  kubeconfig?: string;
  kruiseNamespace: string;
  revisionNamespace?: string;
}

/** `migrate fence`'s options. */
export interface FenceOptions {
  command: 'fence';
  kubeconfig?: string;
  namespace?: string;
  dryRun: boolean;
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const CHECK_FLAGS = ['--kubeconfig', '--kruise-namespace', '--revision-namespace'] as const;
const FENCE_FLAGS = ['--kubeconfig', '--namespace'] as const;
const COMMANDS = 'check, fence';

/** The command's value flags (`--flag V` or `--flag=V`, each once) and whether `--dry-run` was given. */
function parseFlags(rest: readonly string[], allowed: readonly string[], dryRun: boolean): { values: Map<string, string>; dryRun: boolean } {
  const values = new Map<string, string>();
  let dry = false;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? '';
    if (dryRun && arg === '--dry-run') {
      dry = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const given = eq > 0 ? arg.slice(0, eq) : arg;
    const flag = given === '-n' ? '--namespace' : given;
    if (!allowed.includes(flag)) throw new UsageError(`unknown option ${arg}`);
    const value = eq > 0 ? arg.slice(eq + 1) : rest[++i];
    if (value === undefined || value === '') throw new UsageError(`${given} needs a value`);
    if (values.has(flag)) throw new UsageError(`${flag} given twice`);
    if (flag !== '--kubeconfig') {
      const problems = dns1123LabelErrors(value);
      if (problems.length > 0) throw new UsageError(`${given} must be a namespace name (${problems.join('; ')}); got ${JSON.stringify(value)}`);
    }
    values.set(flag, value);
  }
  return { values, dryRun: dry };
}

/** @throws UsageError naming the problem. */
export function parseMigrateOptions(argv: readonly string[]): MigrateOptions | FenceOptions | 'help' {
  if (argv.includes('-h') || argv.includes('--help')) return 'help';
  const [command, ...rest] = argv;
  if (command === undefined) throw new UsageError(`give a command: ${COMMANDS}`);
  if (command === 'fence') {
    const { values, dryRun } = parseFlags(rest, FENCE_FLAGS, true);
    const kubeconfig = values.get('--kubeconfig');
    const namespace = values.get('--namespace');
    return { command, ...(kubeconfig === undefined ? {} : { kubeconfig }), ...(namespace === undefined ? {} : { namespace }), dryRun };
  }
  if (command !== 'check') throw new UsageError(`unknown command ${command} (the commands are ${COMMANDS})`);
  const { values } = parseFlags(rest, CHECK_FLAGS, false);
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
  /** What `fence` reads and writes (absent: this connection is for the preflight alone). */
  fence?: FenceCluster;
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
  if ('command' in options) return runFence(options, connected, io);
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

/** `migrate fence`: 0 when every pod was fenced or skipped, 1 when a write failed, 2 when the cluster cannot be read. */
async function runFence(options: FenceOptions, connected: Connected, io: MigrateIo): Promise<number> {
  if (connected.fence === undefined) {
    io.err('migrate: this connection cannot write pods (fence needs one made by functions/migrate/compose.ts)\n');
    return 2;
  }
  const runOptions = { dryRun: options.dryRun, ...(options.namespace === undefined ? {} : { namespace: options.namespace }) };
  let summary;
  try {
    summary = await runFenceBackfill(connected.fence, runOptions, (line) => {
      io.out(`${line}\n`);
    }, io.signal);
  } catch (error) {
    io.err(`migrate: ${describeFenceReadFailure(error, connected.server)}\n`);
    return 2;
  }
  io.out(`${formatFenceSummary(summary, options.dryRun)}\n`);
  return summary.failed === 0 ? 0 : 1;
}

/** As {@link describeReadFailure}, naming what `fence` needs when refused. */
function describeFenceReadFailure(error: unknown, server: string): string {
  if (error instanceof KubeApiError && error.code === 403) {
    return `the kubeconfig's user may not read what fence needs (${error.operation}: ${error.message}); it needs list on pods and SidecarSets, and get and patch on pods`;
  }
  if (error instanceof KubeApiError && error.code === 404 && /SidecarSet/i.test(error.operation)) {
    return `${error.operation}: the SidecarSet CRD is not installed in this cluster (${error.message})`;
  }
  return describeReadFailure(error, server);
}
