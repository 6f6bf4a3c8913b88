/**
 * JSON text of values written again and again: the parts of a stored
 * SidecarSet that go into every pod it is injected into, and the patches that
 * carry them. JSON.stringify looks at every character it writes (about 3 ns
 * each here); here a value that can never change is serialised once and its
 * text reused, so a pod's patch is mostly the concatenation of texts worked
 * out once for the set's stored version.
 *
 * Two kinds of object are known here, and nothing else is:
 *
 * - **immutable** ({@link freezeJson}): frozen together with everything it
 *   holds, so its text is computed on first use and kept as long as the
 *   object lives (a WeakMap: the text goes with it);
 * - **built from a template** ({@link builtFrom}): a new object (a sidecar
 *   container made for one pod) whose members are mostly an immutable
 *   template's own: each such member is written from the template's kept
 *   text, the others (its env and mounts, built for this pod) item by item.
 *
 * Every other value is left to JSON.stringify, so whatever a request holds
 * costs what it costs there; except that a caller may hand over the texts of
 * strings it wrote from kept pieces ({@link StringTexts}), which are then
 * written as given where they are a value or a plain object's member. {@link jsonText} is always exactly
 * `JSON.stringify(value)` for JSON data (what JSON.parse gives: plain objects
 * and arrays, strings, finite numbers, booleans and null), byte for byte.
 */

/** An immutable object whose text is not computed yet. */
const IMMUTABLE = 0;

/** Immutable objects: their text once computed, IMMUTABLE before. */
const immutable = new WeakMap<object, string | typeof IMMUTABLE>();
/** The `"key":text` of each member of a template, once one was written. */
const memberTexts = new WeakMap<object, Map<string, string>>();
/**
 * A kept text as one flat string. A text joined from pieces is a V8 rope
 * (a tree of the pieces), and a patch that carries it copies it out of that
 * tree again every time it is encoded, several times slower than copying a
 * flat string (a patch's encoding was then most of its cost): so the kept
 * texts are flattened once, when kept. Slicing a rope flattens it.
 */
function flat(text: string): string {
  return ` ${text}`.slice(1);
}

/** Where a built object keeps its template: not enumerable, so no copy, comparison or serialisation sees it. */
const TEMPLATE = Symbol('json template');

/**
 * Freezes a JSON value with everything it holds, and records each object as
 * immutable: its text may then be kept. Only for a value nothing else holds
 * a writable reference into (a copy made for the purpose): freezing is what
 * makes a kept text right.
 */
export function freezeJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null || immutable.has(value)) return value;
  // Children first: an object is recorded only once all below it are frozen.
  for (const key of Object.keys(value)) freezeJson((value as Record<string, unknown>)[key]);
  Object.freeze(value);
  immutable.set(value, IMMUTABLE);
  return value;
}

/** Whether {@link freezeJson} froze this value (a primitive counts: it cannot change either). */
export function isFrozenJson(value: unknown): boolean {
  return typeof value !== 'object' || value === null || immutable.has(value);
}

/**
 * Records that `object` was built from `template` (frozen by
 * {@link freezeJson}; nothing is recorded otherwise): its members that are
 * the template's own are written from the template's kept texts. Only a
 * hint: a member is taken from the template only while it is the very same
 * value, so later changes to `object` are written as they are.
 */
export function builtFrom<T extends object>(object: T, template: object): T {
  if (immutable.has(template)) Object.defineProperty(object, TEMPLATE, { value: template, configurable: true });
  return object;
}

/** Prototypes that hold a template under {@link TEMPLATE} and nothing else: one per template. */
const templateProtos = new WeakMap<object, object>();

/**
 * A new, empty object built from `template` (frozen by {@link freezeJson};
 * a plain `{}` otherwise), to be given its members: as {@link builtFrom}
 * records it, but by the object's prototype, which holds the template under
 * a symbol and nothing else, so no member, copy, comparison or serialisation
 * sees it either. Made this way the object costs what `{}` costs, where
 * recording the template on an object made already costs about as much as
 * making it.
 */
export function objectBuiltFrom(template: object): Record<string, unknown> {
  if (!immutable.has(template)) return {};
  let proto = templateProtos.get(template);
  if (proto === undefined) {
    proto = Object.freeze({ [TEMPLATE]: template });
    templateProtos.set(template, proto);
  }
  return Object.create(proto) as Record<string, unknown>;
}

/** The template {@link builtFrom} or {@link objectBuiltFrom} recorded for `object`, to record it again on a copy. */
export function templateOf(object: object): object | undefined {
  return (object as { [TEMPLATE]?: object })[TEMPLATE];
}

/**
 * A few strings whose JSON text the caller already has (`json` is
 * `JSON.stringify(value)`, exactly): an annotation joined from pieces kept
 * with their escaped form, whose escaping again would cost as much as writing
 * it. A list compared with `===`, not a map: a map would hash each long
 * string, where the very string it holds compares equal at once.
 */
export type StringTexts = readonly { readonly value: string; readonly json: string }[];

/** A string's text: the one `strings` holds for it, or JSON.stringify's. */
function stringText(value: string, strings: StringTexts | undefined): string {
  if (strings !== undefined) for (const known of strings) if (known.value === value) return known.json;
  return JSON.stringify(value);
}

/**
 * `JSON.stringify(value)`, the same text, with the kept texts of immutable
 * objects and objects built from a template written member by member, and
 * the texts `strings` holds for a string value or a string member of a plain
 * object value. Undefined where JSON.stringify gives undefined (undefined
 * itself, a function).
 */
export function jsonText(value: unknown, strings?: StringTexts): string | undefined {
  if (typeof value === 'string') return stringText(value, strings);
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const kept = immutable.get(value);
  if (typeof kept === 'string') return kept;
  if (kept === IMMUTABLE) {
    const text = JSON.stringify(value);
    immutable.set(value, text);
    return text;
  }
  const template = templateOf(value);
  if (template === undefined) return strings === undefined || strings.length === 0 || Array.isArray(value) ? JSON.stringify(value) : membersText(value as Record<string, unknown>, strings);
  return builtText(value as Record<string, unknown>, template as Record<string, unknown>);
}

/** An array's text, item by item as {@link jsonText} writes them (a missing item is null, as in JSON.stringify). */
export function itemsText(items: readonly unknown[]): string {
  let out = '[';
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out += ',';
    out += jsonText(items[i]) ?? 'null';
  }
  return `${out}]`;
}

/**
 * An object's text, member by member as {@link jsonText} writes them (members
 * JSON.stringify leaves out are left out), a string member's from `strings`
 * when it holds it.
 */
export function membersText(object: Readonly<Record<string, unknown>>, strings?: StringTexts): string {
  let out = '{';
  let first = true;
  for (const key of Object.keys(object)) {
    const member = object[key];
    const text = typeof member === 'string' ? stringText(member, strings) : jsonText(member);
    if (text === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${text}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * A built object's text: a member that is still the template's own is its
 * kept `"key":text`; an array built for this object (a sidecar's env, its
 * mounts) is written item by item, its items from the template kept too;
 * anything else as {@link jsonText} writes it.
 */
function builtText(object: Readonly<Record<string, unknown>>, template: Readonly<Record<string, unknown>>): string {
  let kept = memberTexts.get(template);
  if (kept === undefined) {
    kept = new Map();
    memberTexts.set(template, kept);
  }
  let out = '{';
  let first = true;
  for (const key of Object.keys(object)) {
    const value = object[key];
    let member: string | undefined;
    if (value === template[key] && Object.hasOwn(template, key)) {
      member = kept.get(key);
      if (member === undefined) {
        const text = jsonText(value);
        if (text === undefined) continue;
        member = flat(`${JSON.stringify(key)}:${text}`);
        kept.set(key, member);
      }
    } else {
      const text = Array.isArray(value) ? itemsText(value) : jsonText(value);
      if (text === undefined) continue;
      member = `${JSON.stringify(key)}:${text}`;
    }
    out += first ? member : `,${member}`;
    first = false;
  }
  return `${out}}`;
}
