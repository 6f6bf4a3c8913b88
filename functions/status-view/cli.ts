/**
 * `npm run -s status -- [--kubeconfig FILE] [-w|--watch]`: the rollout view.
 * One table of every SidecarSet's counts, rollout state and why it waits
 * (lib/status-view/), once, or with --watch again at every change until
 * Ctrl-C.
 *
 * Exit codes: 0 shown (with --watch: stopped by SIGINT or SIGTERM); 1 the
 * cluster cannot be read (unreachable, forbidden, no SidecarSet CRD), or with
 * --watch the connection was lost; 2 bad usage or no usable kubeconfig.
 * Every failure is one line on standard error.
 */
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { KubeconfigError } from '../../lib/adapters/kubeconfig-reader.ts';
import { errorMessage } from '../../lib/errors.ts';
import { viewDisplay, type ViewOutput } from '../../lib/status-view/display.ts';
import { followLooks, type FollowOptions } from '../../lib/status-view/follow.ts';
import { lookOnce, type StatusViewDeps } from '../../lib/status-view/look.ts';
import { ConfigurationError } from '../shared/compose.ts';

export const STATUS_USAGE = `usage: npm run -s status -- [--kubeconfig FILE] [-w|--watch]
  --kubeconfig FILE  the cluster (default: $KUBECONFIG, else the cluster of a running npm start,
                     else ~/.kube/config)
  -w, --watch        keep the table current: redrawn in place on a terminal, appended when piped;
                     Ctrl-C stops
  -h, --help         this text
Columns: MATCHED, UPDATED, READY, UPDATED-READY as the reconciler counts them now from the pods (a * marks
one the stored status does not show yet); STATE the rollout's state (Progressing, Waiting, Paused, Blocked,
Finished, NotUpdate); PROGRESS while a rollout is under way (# updated and ready, + updated and restarting,
. not updated); WHY what the reconciler's pass says.
exit codes: 0 shown (--watch: stopped); 1 the cluster cannot be read, or the connection was lost; 2 bad usage
or kubeconfig.`;

export interface StatusOptions {
  kubeconfig?: string;
  watch: boolean;
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** @throws UsageError naming the problem. */
export function parseStatusOptions(argv: readonly string[]): StatusOptions | 'help' {
  let kubeconfig: string | undefined;
  let watch = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '-h' || arg === '--help') return 'help';
    if (arg === '-w' || arg === '--watch') {
      watch = true;
      continue;
    }
    if (arg === '--kubeconfig' || arg.startsWith('--kubeconfig=')) {
      const value = arg === '--kubeconfig' ? argv[++i] : arg.slice('--kubeconfig='.length);
      if (value === undefined || value === '') throw new UsageError('--kubeconfig needs a file');
      if (kubeconfig !== undefined) throw new UsageError('--kubeconfig given twice');
      kubeconfig = value;
      continue;
    }
    throw new UsageError(`unknown option ${arg}`);
  }
  return { ...(kubeconfig === undefined ? {} : { kubeconfig }), watch };
}

export interface StatusIo {
  out: ViewOutput;
  err(text: string): void;
  /** Calls `listener` whenever the terminal changes size; returns the unsubscribe. */
  onResize(listener: () => void): () => void;
  /** Ends --watch (SIGINT, SIGTERM). */
  signal: AbortSignal;
  follow?: FollowOptions;
}

/** One line for any failure: a read names its operation; kubeconfig and configuration errors say theirs. */
export function describeFailure(error: unknown): string {
  const line = error instanceof KubeApiError ? `${error.operation}: ${error.message}` : errorMessage(error);
  return line.replace(/\s*\n\s*/g, ' ');
}

/** Runs the view; the exit code. `connect` builds the cluster's sources for `--kubeconfig` (or the defaults). */
export async function runStatusView(argv: readonly string[], io: StatusIo, connect: (kubeconfig: string | undefined) => Promise<StatusViewDeps>): Promise<number> {
  let options;
  try {
    options = parseStatusOptions(argv);
  } catch (error) {
    io.err(`status: ${errorMessage(error)}\n${STATUS_USAGE}\n`);
    return 2;
  }
  if (options === 'help') {
    io.out.write(`${STATUS_USAGE}\n`);
    return 0;
  }
  let deps: StatusViewDeps;
  try {
    deps = await connect(options.kubeconfig);
  } catch (error) {
    io.err(`status: ${describeFailure(error)}\n`);
    return error instanceof KubeconfigError || error instanceof ConfigurationError ? 2 : 1;
  }
  let first;
  try {
    first = await lookOnce(deps, io.signal);
  } catch (error) {
    if (io.signal.aborted) return 0;
    io.err(`status: ${describeFailure(error)}\n`);
    return 1;
  }
  const display = viewDisplay(io.out, options.watch);
  display.show(first.rows);
  if (!options.watch) return 0;
  const unsubscribe = io.onResize(() => { display.resized(); });
  try {
    const ended = await followLooks(deps, first, (look) => { display.show(look.rows); }, io.follow ?? {}, io.signal);
    if (ended.end === 'stopped') return 0;
    // No answer at all is a lost connection; an answer (403, 404 after the CRD went) says itself what changed.
    const lost = ended.error instanceof KubeApiError && ended.error.code === undefined;
    io.err(`status: ${lost ? 'lost the connection to the API server' : 'the cluster can no longer be read'}: ${describeFailure(ended.error)}\n`);
    return 1;
  } finally {
    unsubscribe();
  }
}
