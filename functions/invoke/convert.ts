/**
 * `invoke sidecarset-convert`: the CRD conversion webhook's handler on a
 * file. The file holds a ConversionReview v1 request, or a plain SidecarSet
 * of either version that is wrapped in the review the API server would send
 * to convert it to `--to`. Its help is CONVERT_USAGE (usage.ts).
 */
import { randomUUID } from 'node:crypto';
import { stringify } from 'yaml';
import { CONVERSION_REVIEW_API_VERSION, CONVERSION_REVIEW_KIND } from '../../lib/conversion/review.ts';
import { sidecarSetVersionOf, SIDECARSET_VERSIONS, type SidecarSetVersion } from '../../lib/conversion/sidecarset-conversion.ts';
import { isObject } from '../../lib/kube/json.ts';
import { parseSingleObject } from '../../lib/kube/yaml-objects.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { GROUP, KIND } from '../../lib/sidecarset/types.ts';
import { SIDECARSET_CONVERT } from '../../lib/webhooks/descriptors.ts';

const FN = SIDECARSET_CONVERT.name;

/** What the convert command reads and writes. */
export interface ConvertIo {
  readText(path: string, what: string): Promise<string>;
  readStdin(): Promise<string>;
  stdout(text: string): void;
  stderr(text: string): void;
}

/** A problem with the command line or the input: one line on stderr, exit 2. */
export class ConvertUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConvertUsageError';
  }
}

interface ConvertArgs {
  event?: string;
  to?: string;
  output?: string;
}

const FLAGS: Readonly<Record<string, keyof ConvertArgs>> = { '-f': 'event', '--event': 'event', '--to': 'to', '-o': 'output', '--output': 'output' };

/** The options after the function's name (`--flag value`, `--flag=value`, `-oyaml`). */
function parseConvertArgs(argv: readonly string[]): ConvertArgs {
  const args: ConvertArgs = {};
  let named = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('-') || arg === '-') {
      if (!named && arg === FN) {
        named = true;
        continue;
      }
      throw new ConvertUsageError(`unexpected argument ${arg}`);
    }
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const shortInline = !arg.startsWith('--') && arg.length > 2;
    const flag = eq > 0 ? arg.slice(0, eq) : shortInline ? arg.slice(0, 2) : arg;
    const key = FLAGS[flag];
    if (key === undefined) throw new ConvertUsageError(`${FN} takes no ${flag} (its options: -f|--event FILE, --to v1alpha1|v1beta1, -o|--output yaml|json)`);
    const value = eq > 0 ? arg.slice(eq + 1) : shortInline ? arg.slice(2).replace(/^=/, '') : argv[++i];
    if (value === undefined || value === '') throw new ConvertUsageError(`${flag} needs ${key === 'event' ? 'a file path' : 'a value'}`);
    if (args[key] !== undefined) throw new ConvertUsageError(`${flag} given twice`);
    args[key] = value;
  }
  return args;
}

/** A ConversionReview (or something trying to be one), as opposed to a plain object. */
function looksLikeConversionReview(object: JsonObject): boolean {
  return object.kind === CONVERSION_REVIEW_KIND || (typeof object.apiVersion === 'string' && object.apiVersion.startsWith('apiextensions.k8s.io/'));
}

/** The review the API server would send to convert `object` to `to`. */
export function conversionReviewOf(object: JsonObject, to: SidecarSetVersion, uid: string = randomUUID()): JsonObject {
  return { apiVersion: CONVERSION_REVIEW_API_VERSION, kind: CONVERSION_REVIEW_KIND, request: { uid, desiredAPIVersion: `${GROUP}/${to}`, objects: [object] } };
}

function parseTo(to: string): SidecarSetVersion {
  const version = SIDECARSET_VERSIONS.find((v) => v === to || `${GROUP}/${v}` === to);
  if (version === undefined) throw new ConvertUsageError(`--to must be ${SIDECARSET_VERSIONS.join(' or ')}, got ${JSON.stringify(to)}`);
  return version;
}

/** The review to answer: the one given, or one made around the plain SidecarSet. */
function reviewOf(given: JsonObject, args: ConvertArgs, source: string): JsonObject {
  if (looksLikeConversionReview(given)) {
    if (args.to !== undefined) throw new ConvertUsageError(`--to is for a plain SidecarSet; ${source} is a ConversionReview, whose request.desiredAPIVersion says it already`);
    return given;
  }
  if (given.kind !== KIND || sidecarSetVersionOf(given.apiVersion) === undefined) {
    throw new ConvertUsageError(
      `${source}: not a ConversionReview v1 request nor a SidecarSet of ${SIDECARSET_VERSIONS.map((v) => `${GROUP}/${v}`).join(' or ')} (apiVersion ${JSON.stringify(given.apiVersion)}, kind ${JSON.stringify(given.kind)})`,
    );
  }
  if (args.to === undefined) throw new ConvertUsageError(`${FN} needs --to v1alpha1|v1beta1 for a plain SidecarSet (${source} is ${String(given.apiVersion)})`);
  return conversionReviewOf(given, parseTo(args.to));
}

/** Exit code of a review answered with `result.status: Failure` when -o asked for the objects. */
const EXIT_FAILED = 3;

/**
 * Runs `invoke sidecarset-convert` on `argv` (the whole command line, the
 * function's name included); returns the exit code. Throws ConvertUsageError
 * (and the file reader's errors) for the caller to report as bad input.
 */
export async function runConvert(argv: readonly string[], io: ConvertIo): Promise<number> {
  const args = parseConvertArgs(argv);
  if (args.output !== undefined && args.output !== 'yaml' && args.output !== 'json') throw new ConvertUsageError(`--output must be yaml or json, got ${JSON.stringify(args.output)}`);
  if (args.to !== undefined) parseTo(args.to);
  const path = args.event === '-' ? undefined : args.event;
  const source = path ?? 'standard input';
  const text = path === undefined ? await io.readStdin() : await io.readText(path, 'event');
  const review = reviewOf(parseSingleObject(text, source), args, source);
  const answer = await SIDECARSET_CONVERT.handler(review);
  if (answer.outcome === 'malformed') throw new ConvertUsageError(`${source}: ${answer.message ?? 'not a ConversionReview'}`);
  if (args.output === undefined) {
    io.stdout(`${JSON.stringify(answer.review, null, 2)}\n`);
    return 0;
  }
  if (answer.outcome === 'failed') {
    io.stderr(`invoke: ${FN} could not convert: ${answer.message ?? 'no reason given'}\n`);
    return EXIT_FAILED;
  }
  const response = isObject(answer.review.response) ? answer.review.response : {};
  const objects = Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
  // One object as itself (what --to asked for); a review's several as a JSON array or YAML documents.
  if (args.output === 'json') io.stdout(`${JSON.stringify(objects.length === 1 ? objects[0] : objects, null, 2)}\n`);
  else io.stdout(objects.map((object) => stringify(object)).join('---\n'));
  return 0;
}
