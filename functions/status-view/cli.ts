/**
 * `npm run -s status -- [--kubeconfig FILE] [-w|--watch] [--pods SET]`: the
 * rollout view. One table of every SidecarSet's counts, rollout state and
 * why it waits (lib/status-view/), or with --pods one set's line and a table
 * of the pods it matches (lib/status-view/pod-rows.ts), once, or with
 * --watch again at every change until Ctrl-C.
 *
 * Exit codes: 0 shown (with --watch: stopped by SIGINT or SIGTERM); 1 the
 * cluster cannot be read (unreachable, forbidden, no SidecarSet CRD), the
 * set of --pods does not exist, or with --watch the connection was lost; 2
 * bad usage or no usable kubeconfig. Every failure is one line on standard
 * error.
 */
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { KubeconfigError } from '../../lib/adapters/kubeconfig-reader.ts';
import { errorMessage } from '../../lib/errors.ts';
import { viewDisplay, type ViewOutput } from '../../lib/status-view/display.ts';
import { renderTable } from '../../lib/status-view/table.ts';
import { followLooks, type FollowEnd, type FollowOptions } from '../../lib/status-view/follow.ts';
import { lookAtPods, lookOnce, type Look, type StatusViewDeps } from '../../lib/status-view/look.ts';
import type { PodView } from '../../lib/status-view/pod-rows.ts';
import { renderPodView, setNotFound } from '../../lib/status-view/pod-table.ts';
import { ConfigurationError } from '../shared/compose.ts';

export const STATUS_USAGE = `usage: npm run -s status -- [--kubeconfig FILE] [-w|--watch] [--pods SET]
  --kubeconfig FILE  the cluster (default: $KUBECONFIG, else the cluster of a running npm start,
                     else ~/.kube/config)
  -w, --watch        keep the table current: redrawn in place on a terminal, appended when piped;
                     Ctrl-C stops
  --pods SET         the SidecarSet SET's line, then each pod it matches
  -h, --help         this text
Columns: MATCHED, UPDATED, READY, UPDATED-READY as the reconciler counts them now from the pods (a * marks
one the stored status does not show yet); STATE the rollout's state (Progressing, Waiting, Paused, Blocked,
Stalled, Finished, NotUpdate: what the reconciler's Events and metrics say); PROGRESS while a rollout is under way (# updated and ready, + updated and restarting,
. not updated); WHY what the reconciler says.
With --pods, per pod: UPDATED (runs the set's current sidecars), READY (as READY counts it), STATE (Updated,
Updating, NotReady, Swapping, FlipDue, Due, Waiting, InFlight, NotUpgradable, NotSelected), KUBELET (the
kubelet's waiting reason of each sidecar container that waits, e.g. ImagePullBackOff), WORKING (HotUpgrade: the
container serving), WHY.
exit codes: 0 shown (--watch: stopped); 1 the cluster cannot be read, the set of --pods does not exist, or the
connection was lost; 2 bad usage or kubeconfig.`;

export interface StatusOptions {
  kubeconfig?: string;
  watch: boolean;
  /** --pods: the SidecarSet whose pods to show. */
  pods?: string;
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
  let pods: string | undefined;
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
    if (arg === '--pods' || arg.startsWith('--pods=')) {
      const value = arg === '--pods' ? argv[++i] : arg.slice('--pods='.length);
      if (value === undefined || value === '' || value.startsWith('-')) throw new UsageError('--pods needs the name of a SidecarSet');
      if (pods !== undefined) throw new UsageError('--pods given twice');
      pods = value;
      continue;
    }
    throw new UsageError(`unknown option ${arg}`);
  }
  return { ...(kubeconfig === undefined ? {} : { kubeconfig }), watch, ...(pods === undefined ? {} : { pods }) };
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
  const ended = options.pods === undefined ? await showSets(deps, io, options.watch) : await showPods(deps, io, options.watch, options.pods);
  if (typeof ended === 'number') return ended;
  if (ended.end === 'stopped') return 0;
  // No answer at all is a lost connection; an answer (403, 404 after the CRD went) says itself what changed.
  const lost = ended.error instanceof KubeApiError && ended.error.code === undefined;
  io.err(`status: ${lost ? 'lost the connection to the API server' : 'the cluster can no longer be read'}: ${describeFailure(ended.error)}\n`);
  return 1;
}

/** The first look, or the exit code when it failed (said on standard error). */
async function firstLook<Rows>(io: StatusIo, look: () => Promise<Look<Rows>>): Promise<Look<Rows> | number> {
  try {
    return await look();
  } catch (error) {
    if (io.signal.aborted) return 0;
    io.err(`status: ${describeFailure(error)}\n`);
    return 1;
  }
}

/** Shows `first`, then with --watch each later look until stopped or lost; the exit code when not watching. */
async function showAndFollow<Rows>(
  deps: StatusViewDeps,
  io: StatusIo,
  watch: boolean,
  first: Look<Rows>,
  render: (rows: Rows, options: { width?: number }) => string[],
  again: (signal: AbortSignal) => Promise<Look<Rows>>,
): Promise<FollowEnd | number> {
  const display = viewDisplay(io.out, watch, render);
  display.show(first.rows);
  if (!watch) return 0;
  const unsubscribe = io.onResize(() => { display.resized(); });
  try {
    return await followLooks(deps, first, (look) => { display.show(look.rows); }, io.follow ?? {}, io.signal, again);
  } finally {
    unsubscribe();
  }
}

/** Every set's line. */
async function showSets(deps: StatusViewDeps, io: StatusIo, watch: boolean): Promise<FollowEnd | number> {
  const first = await firstLook(io, () => lookOnce(deps, io.signal));
  if (typeof first === 'number') return first;
  return showAndFollow(deps, io, watch, first, renderTable, (signal) => lookOnce(deps, signal));
}

/** One set's line and its pods; a set that is not there at first is an error (later, --watch says it went). */
async function showPods(deps: StatusViewDeps, io: StatusIo, watch: boolean, name: string): Promise<FollowEnd | number> {
  const first = await firstLook<PodView>(io, () => lookAtPods(deps, name, io.signal));
  if (typeof first === 'number') return first;
  if (first.rows.summary === undefined) {
    io.err(`status: ${setNotFound(name)} (npm run -s status lists them)\n`);
    return 1;
  }
  return showAndFollow(deps, io, watch, first, renderPodView, (signal) => lookAtPods(deps, name, signal));
}
