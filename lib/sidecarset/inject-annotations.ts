/**
 * The two hash annotations as injection writes them, from texts kept per
 * stored version of a set. A set's entry in `kruise.io/sidecarset-hash`
 * (and in the without-image one) is the same text for every pod it is
 * injected into but for its `updateTimestamp`: so the text before and after
 * the timestamp is worked out once with the set's other facts
 * (stored-set-facts.ts), and a review only joins them around the second's
 * timestamp. Each piece is kept as the annotation holds it and as a JSON
 * string holds it (the answer's patch carries the annotation as a JSON
 * string: escaping its every quote again was as costly as formatting it).
 *
 * The text is always {@link formatHashAnnotation}'s, byte for byte
 * (test/sidecarset/inject-annotations.test.ts): an entry the pod already
 * held, or one not from these pieces, is written as that function writes it.
 */
import { hashEntryText, type SidecarSetUpgradeSpec, type UpgradeSpecMap } from './pod-annotations.ts';
import { compareGoStrings } from './go-json.ts';

/** One set's entry in one hash annotation, around its timestamp: `before + timestamp + after`. */
export interface HashEntryPieces {
  readonly before: string;
  readonly after: string;
  /** The same two pieces as they are written inside a JSON string (escaped again). */
  readonly beforeJson: string;
  readonly afterJson: string;
}

/** A set's entries in the two hash annotations. */
export interface SetHashEntries {
  readonly hash: HashEntryPieces;
  readonly withoutImage: HashEntryPieces;
}

/** What a set's entries hold but the timestamp. */
export interface HashEntryFields {
  readonly name: string;
  readonly hash: string;
  readonly hashWithoutImage: string;
  readonly sidecarList: readonly string[];
}

/** Where the timestamp goes: right after the key, in the entry's first field (a JSON string literal cannot hold this unescaped). */
const TIMESTAMP_AT = ':{"updateTimestamp":"';

/** A timestamp no escaping changes (what formatTimestamp writes), so it goes between the pieces as it is. */
const PLAIN_TIMESTAMP = /^[-+0-9:TZ]*$/;

/** The pieces of an entry whose text is {@link hashEntryText}'s. */
function piecesOf(name: string, entry: SidecarSetUpgradeSpec): HashEntryPieces {
  const text = hashEntryText(name, { ...entry, updateTimestamp: '' });
  const at = text.indexOf(TIMESTAMP_AT) + TIMESTAMP_AT.length;
  const before = text.slice(0, at);
  const after = text.slice(at);
  return Object.freeze({ before, after, beforeJson: jsonStringBody(before), afterJson: jsonStringBody(after) });
}

/** A text as it is written inside a JSON string, without the quotes. */
function jsonStringBody(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** The entries injection records for a set: its hashes, its sidecar list and, in the hash annotation only, `revision` when there is one. */
export function setHashEntries(fields: HashEntryFields, revision: string): SetHashEntries {
  const common = { updateTimestamp: '', sidecarSetName: fields.name, sidecarList: [...fields.sidecarList] };
  return Object.freeze({
    hash: piecesOf(fields.name, { ...common, hash: fields.hash, ...(revision !== '' ? { controllerRevision: revision } : {}) }),
    withoutImage: piecesOf(fields.name, { ...common, hash: fields.hashWithoutImage }),
  });
}

/** An entry injection put into a hash annotation's map, with the pieces it was made from. */
export interface FreshEntry {
  readonly entry: SidecarSetUpgradeSpec;
  readonly pieces: HashEntryPieces;
}

/** A hash annotation's text, and that text as a JSON string (what `JSON.stringify(text)` gives). */
export interface AnnotationText {
  readonly text: string;
  readonly json: string;
}

/**
 * `formatHashAnnotation(map)` and its JSON string. An entry of `map` that is
 * still the one `fresh` holds for its name is joined from its pieces around
 * its timestamp when that is a text no escaping changes (as formatTimestamp
 * writes them: digits, `-`, `:`, `T` and `Z`); any other is written in full.
 */
export function hashAnnotationText(map: UpgradeSpecMap, fresh: ReadonlyMap<string, FreshEntry>): AnnotationText {
  const names = [...map.keys()].sort(compareGoStrings);
  let text = '{';
  let json = '"{';
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    const entry = map.get(name) as SidecarSetUpgradeSpec;
    const comma = i === 0 ? '' : ',';
    const kept = fresh.get(name);
    if (kept !== undefined && kept.entry === entry && typeof entry.updateTimestamp === 'string' && PLAIN_TIMESTAMP.test(entry.updateTimestamp)) {
      text += `${comma}${kept.pieces.before}${entry.updateTimestamp}${kept.pieces.after}`;
      json += `${comma}${kept.pieces.beforeJson}${entry.updateTimestamp}${kept.pieces.afterJson}`;
    } else {
      const whole = hashEntryText(name, entry);
      text += comma + whole;
      json += comma + jsonStringBody(whole);
    }
  }
  return { text: `${text}}`, json: `${json}}"` };
}
