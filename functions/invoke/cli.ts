/**
 * The local invoke command: one function on files, no cluster (its help
 * texts are in usage.ts).
 *
 *   invoke <function> [-f|--event FILE] [--operation CREATE|UPDATE --old FILE] [--namespace NS]
 *          [--sidecarsets FILE] [--namespaces FILE] [--revisions FILE] [--pods FILE] [-o|--output yaml|json]
 *   invoke status-sync --sidecarsets FILE --pods FILE [--namespaces FILE]
 *   invoke rollout --sidecarsets FILE --pods FILE [--namespaces FILE]
 *
 * The event is an AdmissionReview v1 request, or a plain SidecarSet or Pod
 * that is wrapped in the review the API server would send (lib/admission/wrap.ts).
 * What a function is (the kind it reviews, what it reads, which webhook
 * configuration calls it) comes from its descriptor (lib/webhooks/descriptors.ts).
 *
 * Exit codes: 0 with the AdmissionReview response on stdout (allowed or
 * denied), or with -o the resulting object (allowed), or for status-sync the
 * statuses that would change, for rollout the reconcile's decisions; 1 when the function could not decide (what a
 * webhook answers with HTTP 500/503, or a set whose status cannot be
 * computed or whose rollout cannot be decided); 2 for bad input (usage, unreadable file, not an AdmissionReview
 * or an object of the function's kind); 3 when, with -o, the request was
 * denied (the reasons on stderr).
 */
import { randomUUID } from 'node:crypto';
import { stringify } from 'yaml';
import { memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { memoryRevisionStore } from '../../lib/adapters/memory-rollout.ts';
import { memoryEventSink, memoryPodPages, memoryStatusWriter } from '../../lib/adapters/memory-status-sync.ts';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { ADMISSION_KIND, type AdmissionReviewResponse } from '../../lib/admission/review.ts';
import { wrapInReview, wrappableKind, WrapError } from '../../lib/admission/wrap.ts';
import { isObject, stringOf } from '../../lib/kube/json.ts';
import { ManifestError, parseObjects, parseSingleObject, requireKind } from '../../lib/kube/yaml-objects.ts';
import type { JsonObject, Pod } from '../../lib/kube/types.ts';
import { offlinePlan } from '../../lib/rollout/offline-plan.ts';
import { DEFAULT_REVISION_NAMESPACE, type ControllerRevision } from '../../lib/sidecarset/revisions.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { ANNOTATION_HASH } from '../../lib/sidecarset/types.ts';
import { systemClock, type Clock, type RevisionSource } from '../../lib/ports.ts';
import { notInjectedEvents } from '../../lib/status-sync/not-injected.ts';
import { runResync, STATUS_SYNC } from '../../lib/status-sync/resync.ts';
import type { HandlerDeps } from '../../lib/webhooks/handler.ts';
import { FUNCTION_DESCRIPTORS, POD_INJECT, SIDECARSET_CONVERT, type ListedDescriptor } from '../../lib/webhooks/descriptors.ts';
import { descriptorOf, FUNCTION_NAMES, isAdmissionFunction, runReview, type AdmissionDescriptor, type AdmissionFunctionName, type ReviewOutcome } from '../../lib/webhooks/registry.ts';
import { ROLLOUT, USAGE, usageOf } from './usage.ts';
import { ConvertUsageError, runConvert } from './convert.ts';
import { namespacesWithHint } from './namespace-hint.ts';
import { EXPLAIN, runExplainFiles } from './explain.ts';
import { strictDecodingRefusal } from './strict-fields.ts';
import { didYouMean } from '../../lib/kube/did-you-mean.ts';

export interface CliIo {
  readFile(path: string): Promise<string>;
  readStdin(): Promise<string>;
  stdout(text: string): void;
  stderr(text: string): void;
  clock?: Clock;
}

const FILE_FLAGS = ['--event', '--sidecarsets', '--namespaces', '--revisions', '--pods', '--old'] as const;
type FileFlag = (typeof FILE_FLAGS)[number];
const VALUE_FLAGS = ['--operation', '--namespace', '--output'] as const;
type ValueFlag = (typeof VALUE_FLAGS)[number];
type Flag = FileFlag | ValueFlag;
const SHORT_FLAGS: Readonly<Record<string, Flag>> = { '-f': '--event', '-o': '--output' };

/** Exit code of a denial with -o. */
const EXIT_DENIED = 3;

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
  values: Partial<Record<ValueFlag, string>>;
}

/** Splits `--flag=value`, `-oyaml` and `-o yaml` into the long flag and its inline value, if any. */
function splitFlag(arg: string): { flag: string; inline?: string } {
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=');
    return eq > 0 ? { flag: arg.slice(0, eq), inline: arg.slice(eq + 1) } : { flag: arg };
  }
  const short = SHORT_FLAGS[arg.slice(0, 2)];
  if (short === undefined) return { flag: arg };
  const rest = arg.slice(2);
  return rest === '' ? { flag: short } : { flag: short, inline: rest.startsWith('=') ? rest.slice(1) : rest };
}

function parseArgs(argv: readonly string[]): Args {
  let fn: string | undefined;
  const files: Partial<Record<FileFlag, string>> = {};
  const values: Partial<Record<ValueFlag, string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const { flag, inline } = arg === '-' ? { flag: arg } : splitFlag(arg);
    const isFile = (FILE_FLAGS as readonly string[]).includes(flag);
    if (isFile || (VALUE_FLAGS as readonly string[]).includes(flag)) {
      const value = inline ?? argv[++i];
      // Named as typed: `-f` with nothing after it is about -f, not a long name the user never wrote.
      const typed = flag === arg || inline !== undefined ? arg.replace(/=.*$/, '').slice(0, arg.startsWith('--') ? undefined : 2) : arg;
      if (value === undefined || value === '') throw new UsageError(`${typed} needs ${isFile ? 'a file path' : 'a value'}${typed === flag ? '' : ` (${flag})`}`);
      const target: Partial<Record<Flag, string>> = isFile ? files : values;
      if (target[flag as Flag] !== undefined) throw new UsageError(`${flag} given twice`);
      target[flag as Flag] = value;
    } else if (arg.startsWith('-')) {
      throw new UsageError(`unknown option ${arg}${didYouMean(flag, [...FILE_FLAGS, ...VALUE_FLAGS, '--help'])}`);
    } else if (fn === undefined) {
      fn = arg;
    } else {
      throw new UsageError(`unexpected argument ${arg}`);
    }
  }
  if (fn === undefined) throw new UsageError('missing <function>');
  return { fn, files, values };
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
 * A SidecarSet as the cluster stores it: every stored set went through
 * sidecarset-default, which writes the hash annotation. A set without it is
 * one written by hand, and injecting or counting with it as it is would use
 * no defaults and no hash (pods would record an empty one), so it is
 * defaulted as it would have been stored. A set with the annotation is used
 * as given, so files taken from a cluster are read exactly.
 */
function asStored(set: JsonObject): JsonObject {
  const annotations = isObject(set.metadata) && isObject(set.metadata.annotations) ? set.metadata.annotations : {};
  return typeof annotations[ANNOTATION_HASH] === 'string' ? set : (defaultSidecarSet(set));
}

async function readSidecarSets(io: CliIo, path: string | undefined): Promise<JsonObject[]> {
  return (await readObjects(io, path, 'SidecarSet', 'SidecarSets')).map(asStored);
}

/**
 * One resync over the files, nothing written anywhere: prints the
 * statuses that would change, and on stderr the sets that apply to pods
 * they never injected.
 */
async function runStatusSync(args: Args, io: CliIo): Promise<number> {
  const { files } = args;
  requireClusterFiles(STATUS_SYNC, args);
  const sidecarSets = await readSidecarSets(io, files['--sidecarsets']);
  const namespaces = await readObjects(io, files['--namespaces'], 'Namespace', 'Namespaces');
  const pods = await readObjects(io, files['--pods'], 'Pod', 'Pods');
  const statuses = memoryStatusWriter(sidecarSets);
  const given = namespacesWithHint(namespaces, files['--namespaces']);
  const result = await runResync({
    sidecarSets: memorySidecarSetSource(sidecarSets),
    pods: memoryPodPages(pods),
    namespaces: given.source,
    statuses,
    events: memoryEventSink(),
    notices: notInjectedEvents(),
  });
  if (result.errors.length > 0) {
    const problems = result.errors.map((e) => `${e.sidecarSet === undefined ? '' : `SidecarSet ${e.sidecarSet}: `}${e.operation}: ${e.message}`);
    io.stderr(`invoke: ${STATUS_SYNC} could not compute every status: ${problems.join('; ')}${whatToDo(given.hint())}\n`);
    return 1;
  }
  for (const [name, count] of Object.entries(result.notInjected)) {
    io.stderr(`invoke: SidecarSet ${name} applies to ${count} pod${count === 1 ? '' : 's'} it never injected\n`);
  }
  io.stdout(`${JSON.stringify(statuses.writes.map(({ name, status }) => ({ name, status })), null, 2)}\n`);
  return 0;
}

/** The commands on cluster files take --sidecarsets and --pods, optionally --namespaces, and nothing else. */
function requireClusterFiles(command: string, { files, values }: Args): void {
  for (const flag of ['--event', '--old', '--revisions'] as const) if (files[flag] !== undefined) throw new UsageError(`${command} takes no ${flag}`);
  for (const flag of VALUE_FLAGS) if (values[flag] !== undefined) throw new UsageError(`${command} takes no ${flag}`);
  for (const flag of ['--sidecarsets', '--pods'] as const) {
    if (files[flag] === undefined) throw new UsageError(`${command} needs ${flag} FILE`);
  }
}

/**
 * Every set's rollout decisions for one reconcile over the files, nothing written: which pods
 * it would update (in write order) with which images, which are not
 * upgradable, and why each set that stops waits.
 */
async function runRollout(args: Args, io: CliIo): Promise<number> {
  const { files } = args;
  requireClusterFiles(ROLLOUT, args);
  const sidecarSets = await readSidecarSets(io, files['--sidecarsets']);
  const namespaces = await readObjects(io, files['--namespaces'], 'Namespace', 'Namespaces');
  const pods = (await readObjects(io, files['--pods'], 'Pod', 'Pods')) as Pod[];
  const podNamespaces = [...new Set(pods.map((pod) => stringOf(isObject(pod.metadata) ? pod.metadata.namespace : undefined) ?? ''))];
  const given = namespacesWithHint(namespaces, files['--namespaces']);
  const labels = await given.source.labels(podNamespaces);
  const { plan, undecided } = offlinePlan(sidecarSets, pods, labels);
  if (undecided.length > 0) {
    io.stderr(`invoke: ${ROLLOUT} cannot decide: ${undecided.map((u) => `SidecarSet ${u.sidecarSet}: ${u.message}`).join('; ')}${whatToDo(given.hint())}\n`);
    return 1;
  }
  io.stdout(`${JSON.stringify(plan, null, 2)}\n`);
  return 0;
}

/**
 * The ControllerRevisions of --revisions, for a function whose descriptor
 * says it reads them. They are read from the namespace they name (one for
 * all; the default revision namespace when they name none). Without the
 * file, a set that pins a revision cannot be decided, and the message says
 * which flag would decide it.
 */
async function readRevisions(io: CliIo, fn: AdmissionFunctionName, path: string | undefined): Promise<RevisionSource | undefined> {
  if (!descriptorOf(fn).reads.revisions) {
    if (path !== undefined) throw new UsageError(`${fn} reads no ControllerRevisions: it takes no --revisions`);
    return undefined;
  }
  if (path === undefined) {
    const missing = (): Promise<never> => Promise.reject(new Error('ControllerRevisions are read from --revisions FILE here, and none was given'));
    return { namespace: DEFAULT_REVISION_NAMESPACE, get: missing, list: missing };
  }
  const revisions = (await readObjects(io, path, 'ControllerRevision', 'ControllerRevisions')) as ControllerRevision[];
  const namespaces = new Set<string>();
  const names = new Set<string>();
  revisions.forEach((revision, i) => {
    const name = stringOf(isObject(revision.metadata) ? revision.metadata.name : undefined) ?? '';
    if (name === '') throw new UsageError(`${path}: object ${i + 1} has no metadata.name`);
    if (names.has(name)) throw new UsageError(`${path}: ControllerRevision ${name} is given twice`);
    names.add(name);
    const namespace = stringOf(isObject(revision.metadata) ? revision.metadata.namespace : undefined);
    if (namespace !== undefined && namespace !== '') namespaces.add(namespace);
  });
  if (namespaces.size > 1) throw new UsageError(`${path}: the ControllerRevisions are in ${namespaces.size} namespaces (${[...namespaces].join(', ')}); the functions read one`);
  return memoryRevisionStore(revisions, [...namespaces][0] ?? DEFAULT_REVISION_NAMESPACE);
}

/** The mutating functions the API server calls before a validating one, for the same kind of object (in the descriptors' order). */
function mutatingBefore(descriptor: ListedDescriptor): AdmissionDescriptor[] {
  if (descriptor.caller.in !== 'ValidatingWebhookConfiguration') return [];
  return FUNCTION_DESCRIPTORS.filter((d): d is AdmissionDescriptor => d.caller.in === 'MutatingWebhookConfiguration' && d.reviews === descriptor.reviews);
}

/** An AdmissionReview (or something trying to be one), as opposed to a plain object. */
function looksLikeReview(object: JsonObject): boolean {
  return object.kind === ADMISSION_KIND || (typeof object.apiVersion === 'string' && object.apiVersion.startsWith('admission.k8s.io/'));
}

/** The object a review's answer leaves: the request's object with the patch applied. */
function resultingObject(event: JsonObject, review: AdmissionReviewResponse): unknown {
  const request = isObject(event.request) ? event.request : {};
  const { patch } = review.response;
  return patch === undefined ? request.object : applyPatch(request.object, decodePatch(patch));
}

/** The request as the function receives it: the review given, or one made around the plain object. */
async function requestOf(fn: AdmissionFunctionName, args: Args, io: CliIo, deps: HandlerDeps): Promise<{ event: JsonObject } | { denied: ReviewOutcome; by: AdmissionFunctionName }> {
  const eventPath = args.files['--event'] === '-' ? undefined : args.files['--event'];
  const source = eventPath ?? 'standard input';
  const eventText = eventPath === undefined ? await io.readStdin() : await readText(io, eventPath, 'event');
  const given = parseSingleObject(eventText, source);
  const { '--operation': operation = 'CREATE', '--namespace': namespace } = args.values;
  if (looksLikeReview(given)) {
    const plainOnly = [...(['--operation', '--namespace'] as const).filter((f) => args.values[f] !== undefined), ...(args.files['--old'] !== undefined ? ['--old'] : [])];
    if (plainOnly.length > 0) throw new UsageError(`${plainOnly.join(', ')} ${plainOnly.length === 1 ? 'is' : 'are'} for a plain object; ${source} is an AdmissionReview, which says it already`);
    return { event: given };
  }
  const kind = wrappableKind(given);
  const descriptor = descriptorOf(fn);
  const expected = descriptor.reviews;
  if (kind === undefined) {
    throw new UsageError(`${source}: not an AdmissionReview v1 request nor a ${expected} (apiVersion ${JSON.stringify(given.apiVersion)}, kind ${JSON.stringify(given.kind)})`);
  }
  if (kind !== expected) throw new UsageError(`${source}: ${fn} is called for a ${expected}, not a ${kind}`);
  const refusal = kind === 'SidecarSet' ? await strictDecodingRefusal(given, (path) => readText(io, path, 'CRD')) : undefined;
  if (refusal !== undefined) throw new UsageError(`${source}: the API server refuses it before any webhook (kubectl's strict field validation): ${refusal}`);
  if (operation !== 'CREATE' && operation !== 'UPDATE') throw new UsageError(`--operation must be CREATE or UPDATE, got ${JSON.stringify(operation)}`);
  const oldPath = args.files['--old'];
  let oldObject = oldPath === undefined ? undefined : parseSingleObject(await readText(io, oldPath, 'old object'), oldPath);
  let object = given;
  // The API server calls mutating webhooks before validating ones: the object validated is the mutated one.
  for (const mutating of mutatingBefore(descriptor)) {
    const mutatingEvent = wrapInReview({ object, operation, ...(oldObject !== undefined ? { oldObject } : {}), ...(namespace !== undefined ? { namespace } : {}), uid: randomUUID() });
    const mutated = await runReview(mutating.name, mutatingEvent, deps);
    if (mutated.kind !== 'review' || !mutated.review.response.allowed) return { denied: mutated, by: mutating.name };
    object = resultingObject(mutatingEvent, mutated.review) as JsonObject;
  }
  // The old SidecarSet is the stored one; one written by hand is taken as it would have been stored.
  if (mutatingBefore(descriptor).length > 0 && oldObject !== undefined && wrappableKind(oldObject) === 'SidecarSet') oldObject = asStored(oldObject);
  return { event: wrapInReview({ object, operation, ...(oldObject !== undefined ? { oldObject } : {}), ...(namespace !== undefined ? { namespace } : {}), uid: randomUUID() }) };
}

/** `; ` and what to do, when there is something to do. */
function whatToDo(hint: string | undefined): string {
  return hint === undefined ? '' : `; ${hint}`;
}

/** Prints an outcome; returns the exit code. `hint` says what to do when the function could not decide. */
function report(fn: AdmissionFunctionName, outcome: ReviewOutcome, event: JsonObject | undefined, output: 'yaml' | 'json' | undefined, io: CliIo, hint: () => string | undefined = () => undefined): number {
  switch (outcome.kind) {
    case 'review': {
      if (output === undefined) {
        io.stdout(`${JSON.stringify(outcome.review, null, 2)}\n`);
        return 0;
      }
      const { response } = outcome.review;
      for (const warning of response.warnings ?? []) io.stderr(`Warning: ${warning}\n`);
      if (!response.allowed) {
        io.stderr(`invoke: ${fn} denied the request (${response.status?.code ?? 403}): ${response.status?.message ?? 'no reason given'}\n`);
        return EXIT_DENIED;
      }
      const object = event === undefined ? undefined : resultingObject(event, outcome.review);
      io.stdout(output === 'json' ? `${JSON.stringify(object, null, 2)}\n` : stringify(object));
      return 0;
    }
    case 'invalid':
      io.stderr(`invoke: ${outcome.message}\n`);
      return 2;
    case 'failed':
      io.stderr(`invoke: ${fn} could not decide (a webhook answers HTTP ${outcome.status}): ${outcome.message}${whatToDo(hint())}\n`);
      return 1;
  }
}

/**
 * `explain`: the pod of -f through pod-inject as `invoke pod-inject` sends
 * it (the same readers, review and --revisions), then explained (explain.ts).
 */
async function runExplainCommand(args: Args, io: CliIo): Promise<number> {
  const { files, values } = args;
  if (files['--sidecarsets'] === undefined) throw new UsageError(`${EXPLAIN} needs --sidecarsets FILE`);
  for (const flag of ['--old'] as const) if (files[flag] !== undefined) throw new UsageError(`${EXPLAIN} takes no ${flag}: it explains a pod's creation`);
  if (values['--operation'] !== undefined) throw new UsageError(`${EXPLAIN} takes no --operation: it explains a pod's creation`);
  const output = values['--output'] ?? 'text';
  if (output !== 'text' && output !== 'json') throw new UsageError(`--output must be text or json, got ${JSON.stringify(output)}`);
  const sidecarSets = await readSidecarSets(io, files['--sidecarsets']);
  const namespaces = namespacesWithHint(await readObjects(io, files['--namespaces'], 'Namespace', 'Namespaces'), files['--namespaces']);
  const revisions = await readRevisions(io, POD_INJECT.name, files['--revisions']);
  const pods = (await readObjects(io, files['--pods'], 'Pod', 'Pods')) as Pod[];
  const deps: HandlerDeps = {
    sidecarSets: memorySidecarSetSource(sidecarSets),
    namespaces: namespaces.source,
    ...(revisions !== undefined ? { revisions } : {}),
    clock: io.clock ?? systemClock,
  };
  const request = await requestOf(POD_INJECT.name, args, io, deps);
  // pod-inject has no mutating function before it: the request is always its own.
  if ('denied' in request) return report(request.by, request.denied, undefined, undefined, io);
  return runExplainFiles({ sets: sidecarSets, pods, namespaces, deps, event: request.event, resulting: resultingObject, output, stdout: (text) => { io.stdout(text); }, stderr: (text) => { io.stderr(text); } });
}

/** Runs the command; returns the exit code. Never throws. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    if (argv.length === 0) {
      // Alone, it says what it does and how to ask for more.
      io.stderr(`${USAGE}\n`);
      return 2;
    }
    if (argv.includes('--help') || argv.includes('-h')) {
      // The function's own help: the first argument that is no option (a value of one never names a function).
      io.stdout(`${usageOf(argv.find((arg) => !arg.startsWith('-') && usageOf(arg) !== USAGE))}\n`);
      return 0;
    }
    // The conversion function takes its own options (--to); the first argument that is no option names the function.
    if (argv.find((arg) => !arg.startsWith('-')) === SIDECARSET_CONVERT.name) {
      return await runConvert(argv, { readText: (path, what) => readText(io, path, what), readStdin: () => io.readStdin(), stdout: (text) => {
        io.stdout(text);
      }, stderr: (text) => {
        io.stderr(text);
      } });
    }
    const args = parseArgs(argv);
    const { fn, files, values } = args;
    if (fn === STATUS_SYNC) return await runStatusSync(args, io);
    if (fn === ROLLOUT) return await runRollout(args, io);
    if (fn === EXPLAIN) return await runExplainCommand(args, io);
    const known = [...FUNCTION_NAMES, STATUS_SYNC, ROLLOUT, EXPLAIN];
    if (!isAdmissionFunction(fn)) throw new UsageError(`unknown function ${JSON.stringify(fn)}${didYouMean(fn, known)}; expected one of ${known.join(', ')}`);
    const output = values['--output'];
    if (output !== undefined && output !== 'yaml' && output !== 'json') throw new UsageError(`--output must be yaml or json, got ${JSON.stringify(output)}`);
    const sidecarSets = await readSidecarSets(io, files['--sidecarsets']);
    const namespaces = namespacesWithHint(await readObjects(io, files['--namespaces'], 'Namespace', 'Namespaces'), files['--namespaces']);
    const revisions = await readRevisions(io, fn, files['--revisions']);
    // Pods are read (and so checked) for every function; status-sync is their user.
    await readObjects(io, files['--pods'], 'Pod', 'Pods');
    const deps: HandlerDeps = {
      sidecarSets: memorySidecarSetSource(sidecarSets),
      namespaces: namespaces.source,
      ...(revisions !== undefined ? { revisions } : {}),
      clock: io.clock ?? systemClock,
    };
    const request = await requestOf(fn, args, io, deps);
    if ('denied' in request) return report(request.by, request.denied, undefined, output, io);
    // A pod's own Namespace is one a decision cannot do without; a SidecarSet's
    // review compares with Namespaces that may well not exist, so no hint there.
    const hint = descriptorOf(fn).reviews === 'Pod' ? namespaces.hint : undefined;
    return report(fn, await runReview(fn, request.event, deps), request.event, output, io, hint);
  } catch (error) {
    if (error instanceof UsageError || error instanceof ManifestError || error instanceof WrapError || error instanceof ConvertUsageError) {
      io.stderr(`invoke: ${error.message}\n`);
      return 2;
    }
    io.stderr(`invoke: internal error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
