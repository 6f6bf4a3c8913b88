/**
 * RFC 6902 JSON Patch: generation (what a mutating webhook returns) and
 * strict application (how we verify a patch before returning it).
 *
 * The API server applies admission patches with evanphx/json-patch (v4). A
 * patch that decodes but does not apply fails the user's request even under
 * `failurePolicy: Ignore`, so {@link applyPatch} follows RFC 6902 and adds
 * that library's extra restrictions; it never accepts something the API
 * server would reject. Where that library is more lenient than the RFC
 * (negative or zero-padded array indices, paths without a leading `/`,
 * `replace` of a missing object key, `test` of a missing value against
 * null) we keep to the RFC.
 */
import { cloneJson, isObject, jsonEqual } from '../kube/json.ts';

/** One RFC 6902 operation. {@link createPatch} emits only add, remove and replace. */
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

/** Internal failure without operation context; applyPatch adds the context. */
class PatchFailure extends Error {}

// ---------------------------------------------------------------------------
// JSON Pointer (RFC 6901)

/** Escapes one reference token: `~` becomes `~0` first, so the `~` of `~1` is not escaped again. */
export function escapePointerToken(token: string): string {
  // Nearly every key has neither character; the diff escapes every key it visits.
  if (!token.includes('~') && !token.includes('/')) return token;
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * Unescapes one reference token: `~1` to `/` before `~0` to `~`, so that
 * `~01` becomes `~1` and not `/`. A `~` not followed by `0` or `1` is
 * invalid (RFC 6901 section 3) and throws {@link JsonPatchError}.
 */
export function unescapePointerToken(token: string): string {
  try {
    return unescapeToken(token);
  } catch (error) {
    throw toPublicError(error);
  }
}

function unescapeToken(token: string): string {
  if (/~(?![01])/.test(token)) throw new PatchFailure(`invalid escape in reference token ${JSON.stringify(token)}`);
  return token.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** The JSON Pointer of a token list: `pointer(['metadata', 'annotations', 'a/b'])` is `/metadata/annotations/a~1b`. */
export function pointer(tokens: readonly (string | number)[]): string {
  return tokens.map((token) => `/${escapePointerToken(String(token))}`).join('');
}

/** The unescaped reference tokens of a JSON Pointer; `""` (the whole document) has none. */
export function parsePointer(path: string): string[] {
  try {
    return parseTokens(path);
  } catch (error) {
    throw toPublicError(error);
  }
}

function parseTokens(path: string): string[] {
  if (path === '') return [];
  // evanphx/json-patch silently drops whatever precedes the first '/', which
  // would apply a typo somewhere else; the RFC requires the slash.
  if (!path.startsWith('/')) throw new PatchFailure(`JSON Pointer ${JSON.stringify(path)} must be empty or start with "/"`);
  return path.slice(1).split('/').map(unescapeToken);
}

function toPublicError(error: unknown): unknown {
  return error instanceof PatchFailure ? new JsonPatchError(error.message) : error;
}

// ---------------------------------------------------------------------------
// Generation

/**
 * The patch that turns `from` into `to`; empty when they are deep-equal
 * (object key order is irrelevant). Pure: neither input is modified and the
 * emitted values are copies.
 *
 * - Objects are compared key by key. A key missing in `from` is added whole
 *   (one `add` of an entire map or array, never adds into something absent),
 *   a key missing in `to` is removed. Keys whose value is `undefined` count
 *   as absent, as they do once serialised.
 * - A change of type, or of a scalar, is one `replace` (path `""` at the root).
 * - Arrays: see {@link diffArrays}.
 */
export function createPatch(from: unknown, to: unknown): JsonPatchOperation[] {
  const out: JsonPatchOperation[] = [];
  diffValues(from, to, '', out, cloneJson);
  return out;
}

/**
 * {@link createPatch}, but the emitted values are `to`'s own subtrees, not
 * copies: for a caller that serializes the patch at once (an admission
 * answer), where copying `to`'s new parts only to print them would be most
 * of the diff's cost.
 */
export function createPatchSharingValues(from: unknown, to: unknown): JsonPatchOperation[] {
  const out: JsonPatchOperation[] = [];
  diffValues(from, to, '', out, shared);
  return out;
}

/** How an emitted value is taken from `to`: copied, or shared. */
type TakeValue = (value: unknown) => unknown;

const shared: TakeValue = (value) => value;

function diffValues(from: unknown, to: unknown, path: string, out: JsonPatchOperation[], take: TakeValue): void {
  // One object in both places (a mutation that copies on write leaves the
  // untouched subtrees shared) has nothing to diff.
  if (from === to) return;
  if (Array.isArray(from) && Array.isArray(to)) {
    diffArrays(from, to, path, out, take);
  } else if (isObject(from) && isObject(to)) {
    diffObjects(from, to, path, out, take);
  } else if (!jsonEqual(from, to)) {
    out.push({ op: 'replace', path, value: take(to) });
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
  take: TakeValue,
): void {
  for (const key of Object.keys(from)) {
    if (!hasMember(from, key)) continue;
    if (hasMember(to, key)) {
      const a = from[key];
      const b = to[key];
      // Checked here too, so that an unchanged member costs no path string.
      if (a !== b) diffValues(a, b, `${path}/${escapePointerToken(key)}`, out, take);
    } else {
      out.push({ op: 'remove', path: `${path}/${escapePointerToken(key)}` });
    }
  }
  for (const key of Object.keys(to)) {
    if (hasMember(to, key) && !hasMember(from, key)) {
      out.push({ op: 'add', path: `${path}/${escapePointerToken(key)}`, value: take(to[key]) });
    }
  }
}

/**
 * Array diff, aimed at the edits webhooks make (an element inserted at the
 * front, middle or end, elements appended, an element changed in place)
 * rather than at a minimal edit script:
 *
 * 1. Drop the common prefix and suffix (deep equality).
 * 2. Equal remaining lengths: diff element-wise at the same positions.
 * 3. Otherwise assume one contiguous block of `k` elements was inserted
 *    (or removed) somewhere in the remainder and the other elements were
 *    edited in place. Each remaining element of the shorter side then pairs
 *    with the element at the same offset or `k` further on, so only two
 *    diffs per element are computed; the block position with the smallest
 *    serialised patch wins (ties go to the later position, i.e. appending).
 *
 * Operation order keeps every index right when the ops are applied in
 * sequence: in-place edits first, at original indices (they do not shift
 * anything), then inserts in ascending order, or removals from the highest
 * index down. Indices are explicit, never `-`.
 */
function diffArrays(
  from: readonly unknown[],
  to: readonly unknown[],
  path: string,
  out: JsonPatchOperation[],
  take: TakeValue,
): void {
  if (from.length === to.length) {
    // Steps 1 and 2 in one walk: equal elements of the prefix and suffix give
    // no ops in the element-wise diff either, so they need no separate pass.
    for (let i = 0; i < from.length; i++) diffValues(from[i], to[i], `${path}/${i}`, out, take);
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
      diffValues(item, toMiddle[i], `${path}/${start + i}`, out, take);
    });
    return;
  }
  if (fromMiddle.length === 0 || toMiddle.length === 0) {
    // A pure insertion or removal: the block has one possible position, so
    // there is nothing to weigh (the general case below would choose it too,
    // after serialising the block to price it).
    if (toMiddle.length > 0) {
      toMiddle.forEach((item, x) => out.push({ op: 'add', path: `${path}/${start + x}`, value: take(item) }));
    } else {
      for (let x = fromMiddle.length - 1; x >= 0; x--) out.push({ op: 'remove', path: `${path}/${start + x}` });
    }
    return;
  }

  const inserting = toMiddle.length > fromMiddle.length;
  const [shorter, longer] = inserting ? [fromMiddle, toMiddle] : [toMiddle, fromMiddle];
  const k = longer.length - shorter.length;
  // pairs[s][i]: the ops turning the pair (shorter[i], longer[i + s * k]) into
  // the to-side, relative to the element's path.
  const pairs = [0, k].map((shift) =>
    shorter.map((item, i) => {
      const other = longer[i + shift];
      const ops: JsonPatchOperation[] = [];
      if (inserting) diffValues(item, other, '', ops, take);
      else diffValues(other, item, '', ops, take);
      return ops;
    }),
  );
  const [unshifted = [], shifted = []] = pairs;
  // The cost of inserting the block at j is the size of longer[j, j + k):
  // prefix sums, so each element is measured once rather than once per j.
  const prefix = [0];
  if (inserting) for (const item of longer) prefix.push((prefix[prefix.length - 1] ?? 0) + jsonSize(item));
  const blockCost = (j: number): number => (inserting ? (prefix[j + k] ?? 0) - (prefix[j] ?? 0) : 0);

  let best = 0;
  let bestCost = Infinity;
  let before = 0;
  let after = shifted.reduce((sum, ops) => sum + jsonSize(ops), 0);
  for (let j = 0; j <= shorter.length; j++) {
    const cost = before + after + blockCost(j);
    if (cost <= bestCost) {
      best = j;
      bestCost = cost;
    }
    before += jsonSize(unshifted[j] ?? []);
    after -= jsonSize(shifted[j] ?? []);
  }

  // In-place edits at the indices the elements have before any insert or removal.
  shorter.forEach((_item, i) => {
    const ops = (i < best ? unshifted : shifted)[i] ?? [];
    const index = start + (inserting || i < best ? i : i + k);
    for (const op of ops) out.push(rebase(op, `${path}/${index}`));
  });
  if (inserting) {
    for (let x = 0; x < k; x++) {
      out.push({ op: 'add', path: `${path}/${start + best + x}`, value: take(longer[best + x]) });
    }
  } else {
    for (let x = k - 1; x >= 0; x--) out.push({ op: 'remove', path: `${path}/${start + best + x}` });
  }
}

function rebase(op: JsonPatchOperation, prefix: string): JsonPatchOperation {
  return { ...op, path: prefix + op.path };
}

function jsonSize(value: unknown): number {
  // JSON.stringify returns undefined for undefined, despite its declared type.
  return (JSON.stringify(value) as string | undefined)?.length ?? 0;
}

// ---------------------------------------------------------------------------
// Application

type Container = Record<string, unknown> | unknown[];

/**
 * Applies a patch to a copy of `doc` and returns the copy; `doc` and the
 * operations are left untouched. Throws {@link JsonPatchError} naming the
 * failing operation on any violation:
 *
 * - the document root must be an object or array, and `add`, `remove`,
 *   `move` and `copy` may not target the root `""`; `replace` of the root
 *   needs an object or array value (evanphx/json-patch v4 restrictions);
 * - every pointer must be `""` or start with `/`, with only `~0`/`~1` escapes;
 * - `remove`, `replace`, `test` and the `from` of `move`/`copy` need an
 *   existing target; `add` needs an existing parent, and replaces an
 *   existing object member;
 * - array indices are canonical decimals (no sign, no leading zero), below
 *   the length, or up to it for `add`, where `-` also means the end;
 * - `move` may not move a value into one of its own descendants;
 * - `test` compares by JSON equality (object key order irrelevant).
 *
 * Object members are defined, not assigned, so a key named `__proto__` is
 * an ordinary member and never changes a prototype.
 */
export function applyPatch(doc: unknown, ops: readonly JsonPatchOperation[]): unknown {
  if (!isContainer(doc)) {
    throw new JsonPatchError('the document to patch must be a JSON object or array');
  }
  if (!Array.isArray(ops)) throw new JsonPatchError('a JSON Patch must be an array of operations');
  let root: unknown = cloneJson(doc);
  ops.forEach((raw: unknown, index) => {
    const op = checkOperation(raw, index);
    try {
      root = applyOperation(root, op);
    } catch (error) {
      if (!(error instanceof PatchFailure)) throw error;
      throw new JsonPatchError(`${describeOp(op, index)}: ${error.message}`, index, { cause: error });
    }
  });
  return root;
}

function describeOp(op: JsonPatchOperation, index: number): string {
  const from = op.op === 'move' || op.op === 'copy' ? ` from ${JSON.stringify(op.from)}` : '';
  return `operation ${index} (${op.op} ${JSON.stringify(op.path)}${from})`;
}

function isContainer(value: unknown): value is Container {
  return Array.isArray(value) || isObject(value);
}

function applyOperation(root: unknown, op: JsonPatchOperation): unknown {
  const tokens = parseTokens(op.path);
  switch (op.op) {
    case 'add':
      if (tokens.length === 0) throw new PatchFailure('the API server cannot add at the document root; use replace');
      insert(root, tokens, cloneJson(op.value));
      return root;
    case 'remove':
      if (tokens.length === 0) throw new PatchFailure('the document root cannot be removed');
      detach(root, tokens);
      return root;
    case 'replace':
      if (tokens.length === 0) {
        if (!isContainer(op.value)) throw new PatchFailure('the document root can only be replaced by an object or array');
        return cloneJson(op.value);
      }
      overwrite(root, tokens, cloneJson(op.value));
      return root;
    case 'test':
      if (!jsonEqual(lookup(root, tokens, tokens.length), op.value)) throw new PatchFailure('test failed: values differ');
      return root;
    case 'move': {
      const from = parseTokens(op.from);
      if (from.length === 0) throw new PatchFailure('the document root cannot be moved');
      if (tokens.length === 0) throw new PatchFailure('the API server cannot move to the document root');
      if (from.length < tokens.length && from.every((token, i) => token === tokens[i])) {
        throw new PatchFailure('a value cannot be moved into one of its own descendants');
      }
      const value = lookup(root, from, from.length);
      if (from.length === tokens.length && from.every((token, i) => token === tokens[i])) return root;
      detach(root, from);
      insert(root, tokens, value);
      return root;
    }
    case 'copy': {
      const from = parseTokens(op.from);
      if (from.length === 0) throw new PatchFailure('the API server cannot copy the document root');
      if (tokens.length === 0) throw new PatchFailure('the API server cannot copy to the document root');
      const value = cloneJson(lookup(root, from, from.length));
      insert(root, tokens, value);
      return root;
    }
  }
}

/** The value at tokens[0..depth); throws when any step does not exist. */
function lookup(root: unknown, tokens: readonly string[], depth: number): unknown {
  let node = root;
  for (const [i, token] of tokens.slice(0, depth).entries()) {
    const at = pointer(tokens.slice(0, i + 1));
    if (Array.isArray(node)) {
      node = node[arrayIndex(token, node.length, false, at)];
    } else if (isObject(node)) {
      if (!Object.hasOwn(node, token)) throw new PatchFailure(`${JSON.stringify(at)} does not exist`);
      node = node[token];
    } else {
      throw new PatchFailure(`${JSON.stringify(at)} does not exist: its parent is not an object or array`);
    }
  }
  return node;
}

/** The container holding the last token, which must exist and be an object or array. */
function parentOf(root: unknown, tokens: readonly string[]): Container {
  const parent = lookup(root, tokens, tokens.length - 1);
  if (!isContainer(parent)) {
    throw new PatchFailure(`the parent ${JSON.stringify(pointer(tokens.slice(0, -1)))} is not an object or array`);
  }
  return parent;
}

function lastToken(tokens: readonly string[]): string {
  return tokens[tokens.length - 1] ?? '';
}

/**
 * Canonical array index per RFC 6901 section 4: digits without a leading
 * zero, below `length`, or equal to it when `forAdd`. The end marker `-`
 * is handled by the caller, since only `add` accepts it.
 */
function arrayIndex(token: string, length: number, forAdd: boolean, at: string): number {
  if (token === '-') throw new PatchFailure(`${JSON.stringify(at)}: "-" refers to a nonexistent array element`);
  if (!/^(0|[1-9][0-9]*)$/.test(token)) {
    throw new PatchFailure(`${JSON.stringify(at)}: ${JSON.stringify(token)} is not a valid array index`);
  }
  const index = Number(token);
  const limit = forAdd ? length : length - 1;
  if (index > limit) {
    throw new PatchFailure(`${JSON.stringify(at)}: array index ${token} is out of range (length ${length})`);
  }
  return index;
}

function defineMember(object: Record<string, unknown>, key: string, value: unknown): void {
  // Assignment would run the inherited __proto__ setter instead of creating a member.
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

function insert(root: unknown, tokens: readonly string[], value: unknown): void {
  const parent = parentOf(root, tokens);
  const key = lastToken(tokens);
  if (Array.isArray(parent)) {
    if (key === '-') parent.push(value);
    else parent.splice(arrayIndex(key, parent.length, true, pointer(tokens)), 0, value);
  } else {
    defineMember(parent, key, value);
  }
}

function detach(root: unknown, tokens: readonly string[]): void {
  const parent = parentOf(root, tokens);
  const key = lastToken(tokens);
  if (Array.isArray(parent)) {
    parent.splice(arrayIndex(key, parent.length, false, pointer(tokens)), 1);
  } else {
    if (!Object.hasOwn(parent, key)) throw new PatchFailure(`${JSON.stringify(pointer(tokens))} does not exist`);
    Reflect.deleteProperty(parent, key);
  }
}

function overwrite(root: unknown, tokens: readonly string[], value: unknown): void {
  const parent = parentOf(root, tokens);
  const key = lastToken(tokens);
  if (Array.isArray(parent)) {
    parent[arrayIndex(key, parent.length, false, pointer(tokens))] = value;
  } else {
    if (!Object.hasOwn(parent, key)) throw new PatchFailure(`${JSON.stringify(pointer(tokens))} does not exist`);
    defineMember(parent, key, value);
  }
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
function checkOperation(raw: unknown, index: number): JsonPatchOperation {
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
 * The base64 of the patch's JSON text, as `AdmissionResponse.patch` carries
 * it (with `patchType: "JSONPatch"`). Validates each operation's shape first.
 */
export function encodePatch(ops: readonly JsonPatchOperation[]): string {
  return Buffer.from(patchText(ops), 'utf8').toString('base64');
}

/** The patch's JSON text, what {@link encodePatch} encodes. Validates each operation's shape first. */
export function patchText(ops: readonly JsonPatchOperation[]): string {
  if (!Array.isArray(ops)) throw new JsonPatchError('a JSON Patch must be an array of operations');
  ops.forEach((op: unknown, index) => checkOperation(op, index));
  return JSON.stringify(ops);
}

// Standard alphabet with padding, as Go's encoding/json decodes []byte;
// Buffer.from(..., 'base64') would silently skip anything else. Checked as
// characters plus a length, not as groups of four: a regular expression
// repeating a group runs out of stack on a patch of a few megabytes.
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

function isPaddedBase64(text: string): boolean {
  return text.length % 4 === 0 && BASE64_CHARS.test(text);
}

/** Decodes an `AdmissionResponse.patch` value and validates its shape; throws {@link JsonPatchError}. */
export function decodePatch(b64: string): JsonPatchOperation[] {
  if (!isPaddedBase64(b64)) throw new JsonPatchError('the patch is not valid padded base64');
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(b64, 'base64')));
  } catch (error) {
    throw new JsonPatchError('the patch is not valid UTF-8 JSON', undefined, { cause: error });
  }
  if (!Array.isArray(parsed)) throw new JsonPatchError('a JSON Patch must be an array of operations');
  return parsed.map((op: unknown, index) => checkOperation(op, index));
}
