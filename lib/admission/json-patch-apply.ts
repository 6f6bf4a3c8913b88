/**
 * Reading an `AdmissionResponse.patch` back and applying it strictly: what
 * `invoke -o` does to show the object as the API server would store it, and
 * what the tests check every answer with. The diff and the wire text a
 * webhook answers with are lib/admission/json-patch.ts.
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
import { checkOperation, JsonPatchError, pointer, type JsonPatchOperation } from './json-patch.ts';

/** Internal failure without operation context; applyPatch adds the context. */
class PatchFailure extends Error {}

// ---------------------------------------------------------------------------
// JSON Pointer (RFC 6901)

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
// Application

type Container = Record<string, unknown> | unknown[];

/**
 * Applies a patch to a copy of `doc` and returns the copy, by RFC 6902
 * strictly (existing targets and parents, canonical array indices), with
 * evanphx/json-patch v4's rules for the root: no `add`, `remove`, `move` or
 * `copy` of `""`, and a `replace` of it needs an object or array. Throws
 * {@link JsonPatchError} naming the failing operation. Object members are
 * defined, not assigned, so a `__proto__` key never changes a prototype.
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
// Wire encoding

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
