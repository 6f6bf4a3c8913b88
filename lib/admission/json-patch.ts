/**
 * RFC 6902 JSON Patch as a mutating webhook returns it: the diff that turns
 * the reviewed object into the answer's, and the patch's wire text.
 *
 * The diff emits only add, remove and replace, with explicit array indices,
 * in an order that keeps every index right when the operations are applied
 * in sequence. Reading a patch back and applying it strictly, as the API
 * server's evanphx/json-patch would, is for tests and benchmarks:
 * testkit/json-patch.ts.
 */
import { isObject, jsonEqual } from '../kube/json.ts';
import { jsonText, membersText, type StringTexts } from '../kube/json-text.ts';

/** One RFC 6902 operation. {@link createPatchSharingValues} emits only add, remove and replace. */
export type JsonPatchOperation =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'replace'; path: string; value: unknown }
  | { op: 'move'; from: string; path: string }
  | { op: 'copy'; from: string; path: string }
  | { op: 'test'; path: string; value: unknown };

/**
 * A patch that is malformed or does not apply.
 *
 * `opIndex` is the position of the failing operation in the patch, or
 * undefined when the failure concerns the patch or document as a whole.
 */
export class JsonPatchError extends Error {
  readonly opIndex: number | undefined;

  constructor(message: string, opIndex?: number, options?: ErrorOptions) {
    super(message, options);
    this.name = 'JsonPatchError';
    this.opIndex = opIndex;
  }
}

// ---------------------------------------------------------------------------
// JSON Pointer (RFC 6901)

/** Escapes one reference token: `~` becomes `~0` first, so the `~` of `~1` is not escaped again. */
export function escapePointerToken(token: string): string {
  // Nearly every key has neither character; the diff escapes every key it visits.
  if (!token.includes('~') && !token.includes('/')) return token;
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

// ---------------------------------------------------------------------------
// Generation

/** The JSON Pointer of a token list: `pointer(['metadata', 'annotations', 'a/b'])` is `/metadata/annotations/a~1b`. */
export function pointer(tokens: readonly (string | number)[]): string {
  return tokens.map((token) => `/${escapePointerToken(String(token))}`).join('');
}

/**
 * The patch that turns `from` into `to`; empty when they are deep-equal
 * (key order aside). The emitted values are `to`'s own subtrees, not copies:
 * the caller serializes the patch at once, and copying would be most of the
 * diff's cost. A key missing in `from` is added whole; a key whose value is
 * `undefined` counts as absent, as once serialised. Arrays: {@link diffArrays}.
 */
export function createPatchSharingValues(from: unknown, to: unknown): JsonPatchOperation[] {
  const out: JsonPatchOperation[] = [];
  diffValues(from, to, '', out);
  return out;
}

/**
 * Appends to `out` the operations {@link createPatchSharingValues} gives for
 * the member at `path` of a larger document (a JSON Pointer, escaped), as the
 * whole document's diff would write them there.
 */
export function diffInto(from: unknown, to: unknown, path: string, out: JsonPatchOperation[]): void {
  diffValues(from, to, path, out);
}

function diffValues(from: unknown, to: unknown, path: string, out: JsonPatchOperation[]): void {
  // One object in both places (a mutation that copies on write leaves the
  // untouched subtrees shared) has nothing to diff.
  if (from === to) return;
  if (Array.isArray(from) && Array.isArray(to)) {
    diffArrays(from, to, path, out);
  } else if (isObject(from) && isObject(to)) {
    diffObjects(from, to, path, out);
  } else if (!jsonEqual(from, to)) {
    out.push({ op: 'replace', path, value: to });
  }
}

function hasMember(object: Record<string, unknown>, key: string): boolean {
  return Object.hasOwn(object, key) && object[key] !== undefined;
}

function diffObjects(
  from: Record<string, unknown>,
  to: Record<string, unknown>,
  path: string,
  out: JsonPatchOperation[],
): void {
  for (const key of Object.keys(from)) {
    if (!hasMember(from, key)) continue;
    if (hasMember(to, key)) {
      const a = from[key];
      const b = to[key];
      // Checked here too, so that an unchanged member costs no path string.
      if (a !== b) diffValues(a, b, `${path}/${escapePointerToken(key)}`, out);
    } else {
      out.push({ op: 'remove', path: `${path}/${escapePointerToken(key)}` });
    }
  }
  for (const key of Object.keys(to)) {
    if (hasMember(to, key) && !hasMember(from, key)) {
      out.push({ op: 'add', path: `${path}/${escapePointerToken(key)}`, value: to[key] });
    }
  }
}

/**
 * Array diff aimed at the edits webhooks make (an element inserted,
 * appended or changed in place), not at a minimal edit script: after the
 * common prefix and suffix, one contiguous block of `k` elements is assumed
 * inserted or removed, so each element pairs with one at offset 0 or `k` and
 * only two diffs per element are computed; the block position with the
 * smallest serialised patch wins (ties go to the later one, i.e. appending).
 * In-place edits come first, then inserts ascending or removals from the
 * highest index down, so every explicit index (never `-`) stays right.
 */
function diffArrays(
  from: readonly unknown[],
  to: readonly unknown[],
  path: string,
  out: JsonPatchOperation[],
): void {
  if (from.length === to.length) {
    // Element-wise in one walk: equal elements of the prefix and suffix give
    // no ops either, so they need no separate pass.
    for (let i = 0; i < from.length; i++) diffValues(from[i], to[i], `${path}/${i}`, out);
    return;
  }
  let start = 0;
  while (start < from.length && start < to.length && jsonEqual(from[start], to[start])) start++;
  let fromEnd = from.length;
  let toEnd = to.length;
  while (fromEnd > start && toEnd > start && jsonEqual(from[fromEnd - 1], to[toEnd - 1])) {
    fromEnd--;
    toEnd--;
  }
  const fromMiddle = from.slice(start, fromEnd);
  const toMiddle = to.slice(start, toEnd);
  if (fromMiddle.length === toMiddle.length) {
    fromMiddle.forEach((item, i) => {
      diffValues(item, toMiddle[i], `${path}/${start + i}`, out);
    });
  } else if (toMiddle.length === 0) {
    // A pure insertion or removal: the block has one possible position, so there is nothing to weigh.
    for (let x = fromMiddle.length - 1; x >= 0; x--) out.push({ op: 'remove', path: `${path}/${start + x}` });
  } else if (fromMiddle.length === 0) {
    toMiddle.forEach((item, x) => out.push({ op: 'add', path: `${path}/${start + x}`, value: item }));
  } else {
    diffAroundBlock(fromMiddle, toMiddle, `${path}/`, start, out);
  }
}

/**
 * {@link diffArrays} when the middles differ in length by a block of
 * `k` elements; its position is the one with the smallest patch. Indices
 * are `start` plus the offset in the middle, under `arrayPath`.
 */
function diffAroundBlock(fromMiddle: readonly unknown[], toMiddle: readonly unknown[], arrayPath: string, start: number, out: JsonPatchOperation[]): void {
  const inserting = toMiddle.length > fromMiddle.length;
  const [shorter, longer] = inserting ? [fromMiddle, toMiddle] : [toMiddle, fromMiddle];
  const k = longer.length - shorter.length;
  // pairs[s][i]: the ops turning the pair (shorter[i], longer[i + s * k]) into
  // the to-side, relative to the element's path.
  const pairs = [0, k].map((shift) =>
    shorter.map((item, i) => {
      const other = longer[i + shift];
      const ops: JsonPatchOperation[] = [];
      if (inserting) diffValues(item, other, '', ops);
      else diffValues(other, item, '', ops);
      return ops;
    }),
  );
  const [unshifted = [], shifted = []] = pairs;
  const best = bestBlockPosition(unshifted, shifted, inserting ? longer : undefined, k);
  // In-place edits at the indices the elements have before any insert or removal.
  shorter.forEach((_item, i) => {
    const ops = (i < best ? unshifted : shifted)[i] ?? [];
    const index = start + (inserting || i < best ? i : i + k);
    for (const op of ops) out.push(rebase(op, `${arrayPath}${index}`));
  });
  if (inserting) {
    for (let x = 0; x < k; x++) out.push({ op: 'add', path: `${arrayPath}${start + best + x}`, value: longer[best + x] });
  } else {
    for (let x = k - 1; x >= 0; x--) out.push({ op: 'remove', path: `${arrayPath}${start + best + x}` });
  }
}

/**
 * Where the block of `k` goes: the position whose patch (the edits before it
 * unshifted, after it shifted, plus the inserted block's own size when
 * `inserted` is the longer side) is smallest; ties go to the later position.
 */
function bestBlockPosition(unshifted: readonly JsonPatchOperation[][], shifted: readonly JsonPatchOperation[][], inserted: readonly unknown[] | undefined, k: number): number {
  // The cost of inserting the block at j is the size of inserted[j, j + k):
  // prefix sums, so each element is measured once rather than once per j.
  const prefix = [0];
  if (inserted !== undefined) for (const item of inserted) prefix.push((prefix[prefix.length - 1] ?? 0) + jsonSize(item));
  const blockCost = (j: number): number => (inserted !== undefined ? (prefix[j + k] ?? 0) - (prefix[j] ?? 0) : 0);
  let best = 0;
  let bestCost = Infinity;
  let before = 0;
  let after = shifted.reduce((sum, ops) => sum + jsonSize(ops), 0);
  for (let j = 0; j <= shifted.length; j++) {
    const cost = before + after + blockCost(j);
    if (cost <= bestCost) {
      best = j;
      bestCost = cost;
    }
    before += jsonSize(unshifted[j] ?? []);
    after -= jsonSize(shifted[j] ?? []);
  }
  return best;
}

function rebase(op: JsonPatchOperation, prefix: string): JsonPatchOperation {
  return { ...op, path: prefix + op.path };
}

function jsonSize(value: unknown): number {
  // JSON.stringify returns undefined for undefined, despite its declared type.
  return (JSON.stringify(value) as string | undefined)?.length ?? 0;
}

// ---------------------------------------------------------------------------
// Shape validation and wire encoding

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/**
 * Checks one operation's shape (RFC 6902 section 4): a known `op`, a string
 * `path`, a string `from` for move/copy, a `value` for add/replace/test.
 * An undefined `value` counts as missing: it would vanish from the JSON and
 * evanphx/json-patch would then add null. Other members are ignored.
 */
export function checkOperation(raw: unknown, index: number): JsonPatchOperation {
  const fail = (detail: string): never => {
    throw new JsonPatchError(`operation ${index}: ${detail}`, index);
  };
  if (!isObject(raw)) return fail('must be a JSON object');
  const { op, path } = raw;
  if (typeof op !== 'string' || !OPS.has(op)) return fail(`unknown op ${typeof op === 'string' ? JSON.stringify(op) : typeof op}`);
  if (typeof path !== 'string') return fail(`${op} needs a string "path"`);
  if ((op === 'move' || op === 'copy') && typeof raw.from !== 'string') return fail(`${op} needs a string "from"`);
  if ((op === 'add' || op === 'replace' || op === 'test') && (!Object.hasOwn(raw, 'value') || raw.value === undefined)) {
    return fail(`${op} ${JSON.stringify(path)} needs a "value"`);
  }
  return raw as JsonPatchOperation;
}

/**
 * The patch's JSON text, what `AdmissionResponse.patch` carries in base64:
 * `JSON.stringify(ops)`, byte for byte, with the kept texts of the values a
 * stored set's version shares into every pod (lib/kube/json-text.ts), so an
 * injected sidecar costs a few concatenations rather than a walk of its
 * container, and the texts `strings` holds for the strings among the values
 * (see {@link jsonText}). Validates each operation's shape first.
 */
export function patchText(ops: readonly JsonPatchOperation[], strings?: StringTexts): string {
  if (!Array.isArray(ops)) throw new JsonPatchError('a JSON Patch must be an array of operations');
  let out = '[';
  ops.forEach((op: unknown, index) => {
    out += (index > 0 ? ',' : '') + operationText(checkOperation(op, index), strings);
  });
  return `${out}]`;
}

/**
 * One checked operation's text. The shapes the diff emits (`op`, `path`,
 * then `value` for add, replace and test) are written directly, `op` being
 * one of the names checked, which need no escaping; any other member by
 * member, as JSON.stringify would.
 */
function operationText(op: JsonPatchOperation, strings: StringTexts | undefined): string {
  const keys = Object.keys(op);
  if (keys[0] === 'op' && keys[1] === 'path') {
    if (keys.length === 2 && op.op === 'remove') return `{"op":"remove","path":${JSON.stringify(op.path)}}`;
    if (keys.length === 3 && keys[2] === 'value' && (op.op === 'add' || op.op === 'replace' || op.op === 'test')) {
      const value = jsonText(op.value, strings);
      if (value !== undefined) return `{"op":"${op.op}","path":${JSON.stringify(op.path)},"value":${value}}`;
    }
  }
  return membersText(op);
}
