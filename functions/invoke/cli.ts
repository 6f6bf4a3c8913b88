/**
 * The local invoke command: one function on files, no cluster.
 *
 *   invoke <function> [--event FILE] [--sidecarsets FILE] [--namespaces FILE] [--pods FILE]
 *   invoke status-sync --sidecarsets FILE --pods FILE [--namespaces FILE]
 *
 * Exit codes: 0 with the AdmissionReview response on stdout (allowed or
 * denied), or for status-sync the statuses that would change; 1 when the
 * function could not decide (what a webhook answers with HTTP 500/503, or a
 * set whose status cannot be computed); 2 for bad input (usage, unreadable
 * file, not an AdmissionReview).
 */
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { memoryEventSink, memoryPodPages, memoryStatusWriter } from '../../lib/adapters/memory-status-sync.ts';
import { ManifestError, parseObjects, parseSingleObject, requireKind } from '../../lib/kube/yaml-objects.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { systemClock, type Clock } from '../../lib/ports.ts';
import { notInjectedNotices } from '../../lib/status-sync/not-injected.ts';
import { runStatusPass, STATUS_SYNC } from '../../lib/status-sync/pass.ts';
import { ADMISSION_FUNCTIONS, isAdmissionFunction, runReview } from '../../lib/webhooks/registry.ts';

export const USAGE = `usage: invoke <function> [--event FILE] [--sidecarsets FILE] [--namespaces FILE] [--pods FILE]
       invoke ${STATUS_SYNC} --sidecarsets FILE --pods FILE [--namespaces FILE]
functions: ${ADMISSION_FUNCTIONS.join(', ')}, ${STATUS_SYNC}
The event (an AdmissionReview v1 request, JSON or YAML) is read from standard input when --event is absent.
${STATUS_SYNC} prints [{"name": <SidecarSet>, "status": <its new status>}] for the sets whose status would change.`;

export interface CliIo {
  readFile(path: string): Promise<string>;
  readStdin(): Promise<string>;
  stdout(text: string): void;
  stderr(text: string): void;
  clock?: Clock;
}

const FILE_FLAGS = ['--event', '--sidecarsets', '--namespaces', '--pods'] as const;
type FileFlag = (typeof FILE_FLAGS)[number];

/** A problem with the command line or its input: one line on stderr, exit 2. */
class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

interface Args {
  fn: string;
  files: Partial<Record<FileFlag, string>>;
}

function parseArgs(argv: readonly string[]): Args {
  let fn: string | undefined;
  const files: Partial<Record<FileFlag, string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const flag = (arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg) as FileFlag;
    if ((FILE_FLAGS as readonly string[]).includes(flag)) {
      const value = arg.startsWith('--') && eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined || value === '') throw new UsageError(`${flag} needs a file path`);
      if (files[flag] !== undefined) throw new UsageError(`${flag} given twice`);
      files[flag] = value;
    } else if (arg.startsWith('-')) {
      throw new UsageError(`unknown option ${arg}`);
    } else if (fn === undefined) {
      fn = arg;
    } else {
      throw new UsageError(`unexpected argument ${arg}`);
    }
  }
  if (fn === undefined) throw new UsageError('missing <function>');
  return { fn, files };
}

async function readText(io: CliIo, path: string, what: string): Promise<string> {
  try {
    return await io.readFile(path);
  } catch (error) {
    if (error instanceof ManifestError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${what} file ${path}: ${code ?? (error as Error).message}`);
  }
}

async function readObjects(io: CliIo, path: string | undefined, kind: string, what: string): Promise<JsonObject[]> {
  if (path === undefined) return [];
  const objects = parseObjects(await readText(io, path, what), path);
  requireKind(objects, kind, path);
  return objects;
}

/**
 * One reconciler pass over the files, nothing written anywhere: prints the
 * statuses that would change, and on stderr the sets that apply to pods
 * they never injected.
 */
async function runStatusSync(files: Partial<Record<FileFlag, string>>, io: CliIo): Promise<number> {
  if (files['--event'] !== undefined) throw new UsageError(`${STATUS_SYNC} takes no --event`);
  for (const flag of ['--sidecarsets', '--pods'] as const) {
    if (files[flag] === undefined) throw new UsageError(`${STATUS_SYNC} needs ${flag} FILE`);
  }
  const sidecarSets = await readObjects(io, files['--sidecarsets'], 'SidecarSet', 'SidecarSets');
  const namespaces = await readObjects(io, files['--namespaces'], 'Namespace', 'Namespaces');
  const pods = await readObjects(io, files['--pods'], 'Pod', 'Pods');
  const statuses = memoryStatusWriter(sidecarSets);
  const result = await runStatusPass({
    sidecarSets: memorySidecarSetSource(sidecarSets),
    pods: memoryPodPages(pods),
    namespaces: memoryNamespaceSource(namespaces),
    statuses,
    events: memoryEventSink(),
    notices: notInjectedNotices(),
  });
  if (result.errors.length > 0) {
    const problems = result.errors.map((e) => `${e.sidecarSet === undefined ? '' : `SidecarSet ${e.sidecarSet}: `}${e.operation}: ${e.message}`);
    io.stderr(`invoke: ${STATUS_SYNC} could not compute every status: ${problems.join('; ')}\n`);
    return 1;
  }
  for (const [name, count] of Object.entries(result.notInjected)) {
    io.stderr(`invoke: SidecarSet ${name} applies to ${count} pod${count === 1 ? '' : 's'} it never injected\n`);
  }
  io.stdout(`${JSON.stringify(statuses.writes.map(({ name, status }) => ({ name, status })), null, 2)}\n`);
  return 0;
}

/** Runs the command; returns the exit code. Never throws. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      io.stdout(`${USAGE}\n`);
      return 0;
    }
    const { fn, files } = parseArgs(argv);
    if (fn === STATUS_SYNC) return await runStatusSync(files, io);
    if (!isAdmissionFunction(fn)) throw new UsageError(`unknown function ${JSON.stringify(fn)}; expected one of ${[...ADMISSION_FUNCTIONS, STATUS_SYNC].join(', ')}`);
    const eventPath = files['--event'];
    const eventText = eventPath === undefined ? await io.readStdin() : await readText(io, eventPath, 'event');
    const event = parseSingleObject(eventText, eventPath ?? 'standard input');
    const sidecarSets = await readObjects(io, files['--sidecarsets'], 'SidecarSet', 'SidecarSets');
    const namespaces = await readObjects(io, files['--namespaces'], 'Namespace', 'Namespaces');
    // Pods are read (and so checked) for every function; status-sync is their user.
    await readObjects(io, files['--pods'], 'Pod', 'Pods');

    const outcome = await runReview(fn, event, {
      sidecarSets: memorySidecarSetSource(sidecarSets),
      namespaces: memoryNamespaceSource(namespaces),
      clock: io.clock ?? systemClock,
    });
    switch (outcome.kind) {
      case 'review':
        io.stdout(`${JSON.stringify(outcome.review, null, 2)}\n`);
        return 0;
      case 'invalid':
        io.stderr(`invoke: ${outcome.message}\n`);
        return 2;
      case 'failed':
        io.stderr(`invoke: ${fn} could not decide (a webhook answers HTTP ${outcome.status}): ${outcome.message}\n`);
        return 1;
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof ManifestError) {
      io.stderr(`invoke: ${error.message}\n`);
      return 2;
    }
    io.stderr(`invoke: internal error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
