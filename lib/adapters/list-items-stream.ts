/**
 * A Kubernetes list answer cut into its items as its bytes arrive, so that a
 * page is never held whole: neither its text nor its parsed form. Each item's
 * bytes are handed over as soon as its closing brace arrives (the caller
 * parses it and keeps what it needs), and the rest of the answer (kind,
 * apiVersion, metadata with the continue token) is kept as the envelope,
 * its `items` array emptied.
 *
 * It reads JSON's structure only (strings, their escapes, nesting), not its
 * values: a malformed answer yields malformed item or envelope text, which
 * the caller's JSON.parse refuses. Cost is linear in the bytes; what it holds
 * is the item being read and the envelope.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
/** The top-level key whose array is cut into items, as bytes. */
const ITEMS_KEY = Buffer.from('items');

/** The splitter's running state across chunks. */
export interface ListItemSplitter {
  /** Reads the next chunk; `onItem` hears every item completed in it, as its exact bytes. */
  write(chunk: Buffer, onItem: (item: Buffer) => void): void;
  /** The answer without its items' bytes (`"items":[]`), as bytes; call after the last chunk. */
  envelope(): Buffer;
  /** The largest item seen, in bytes (what reading held at once, besides the envelope). */
  largestItem(): number;
  /** Whether the items array held a value that is not an object (a string, number, literal or array), which no item of a Kubernetes list is. */
  strayItem(): boolean;
}

/** Who hears what a list says before its items. */
export interface ListItemSplitterOptions {
  /**
   * Told once, when the top-level `items` array opens, of the answer's bytes
   * so far: everything before the items (a Kubernetes list writes kind,
   * apiVersion and metadata, with its continue token, first), ending with
   * the array's `[`. `]}` after them closes the text as JSON.
   */
  onItemsOpen?: (head: Buffer) => void;
}

/** A fresh splitter for one answer. */
export function listItemSplitter(options: ListItemSplitterOptions = {}): ListItemSplitter {
  let depth = 0;
  let inString = false;
  /** Backslashes just before the current position inside a string (an odd run escapes the next byte). */
  let backslashes = 0;
  /** Inside the top-level `items` array (depth 2 there). */
  let inItems = false;
  /** The bytes of the last short string read at depth 1 (a key candidate) and whether it may still be "items". */
  let keyBytes: number[] = [];
  let keyCandidate = false;
  let stringAtDepth1 = false;
  let lastKeyWasItems = false;
  /** The current item's pieces (from its opening brace), while one is open. */
  let itemPieces: Buffer[] | undefined;
  let itemSize = 0;
  let largest = 0;
  const envelopePieces: Buffer[] = [];
  /** Whether `onItemsOpen` was told (once per answer: a second top-level `items` key is not a second head). */
  let toldOpen = false;
  /** A value other than an object seen directly in the items array: told, so that it is not dropped unseen. */
  let stray = false;

  function write(chunk: Buffer, onItem: (item: Buffer) => void): void {
    const length = chunk.length;
    /** Where the part of this chunk not yet copied (to the envelope or to the item) starts. */
    let copied = 0;
    let itemStart = itemPieces === undefined ? -1 : 0;
    let i = 0;
    while (i < length) {
      if (inString) {
        // Jump to the next quote; the backslashes right before it say whether it closes the string.
        const quote = chunk.indexOf(QUOTE, i);
        const end = quote < 0 ? length : quote;
        let run = 0;
        let k = end - 1;
        while (k >= i && chunk[k] === BACKSLASH) {
          run++;
          k--;
        }
        // A run reaching back to where this scan started continues the run carried from before it.
        if (k < i) run += backslashes;
        if (stringAtDepth1 && keyCandidate) {
          // Only a short string can be the key; at most one byte past it is looked at.
          for (let j = i; j < end && keyBytes.length <= ITEMS_KEY.length; j++) keyBytes.push(chunk[j] ?? 0);
          if (keyBytes.length > ITEMS_KEY.length) keyCandidate = false;
        }
        if (quote < 0) {
          backslashes = run;
          i = length;
          break;
        }
        if (run % 2 === 1) {
          // An escaped quote: the string goes on after it.
          backslashes = 0;
          if (stringAtDepth1 && keyCandidate) {
            keyBytes.push(QUOTE);
            if (keyBytes.length > ITEMS_KEY.length) keyCandidate = false;
          }
          i = quote + 1;
          continue;
        }
        inString = false;
        backslashes = 0;
        if (stringAtDepth1) lastKeyWasItems = keyCandidate && keyBytes.length === ITEMS_KEY.length && ITEMS_KEY.equals(Buffer.from(keyBytes));
        i = quote + 1;
        continue;
      }
      const byte = chunk[i];
      // Directly in the items array only objects, commas, whitespace and its closing bracket belong.
      if (inItems && depth === 2 && byte !== OPEN_BRACE && byte !== CLOSE_BRACKET && byte !== 0x2c && byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) stray = true;
      if (byte === QUOTE) {
        inString = true;
        backslashes = 0;
        stringAtDepth1 = depth === 1;
        if (stringAtDepth1) {
          keyBytes = [];
          keyCandidate = true;
        }
      } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
        if (inItems && depth === 2) {
          // An item opens: what came before it in this chunk belongs to no one (commas, spaces).
          itemPieces = [];
          itemSize = 0;
          itemStart = i;
          copied = i;
        }
        depth++;
        if (depth === 2 && byte === OPEN_BRACKET && lastKeyWasItems) {
          inItems = true;
          // The envelope keeps the bracket; everything up to the closing one is items.
          envelopePieces.push(Buffer.from(chunk.subarray(copied, i + 1)));
          copied = i + 1;
          if (options.onItemsOpen !== undefined && !toldOpen) {
            toldOpen = true;
            options.onItemsOpen(Buffer.concat(envelopePieces));
          }
        }
      } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        depth--;
        if (inItems && depth === 2 && itemPieces !== undefined) {
          const piece = chunk.subarray(itemStart, i + 1);
          itemPieces.push(piece);
          itemSize += piece.length;
          const item = itemPieces.length === 1 ? piece : Buffer.concat(itemPieces, itemSize);
          itemPieces = undefined;
          itemStart = -1;
          copied = i + 1;
          if (itemSize > largest) largest = itemSize;
          onItem(item);
        } else if (inItems && depth === 1) {
          inItems = false;
          lastKeyWasItems = false;
          copied = i;
        }
      } else if (byte === 0x2c && depth === 1) {
        lastKeyWasItems = false;
      }
      i++;
    }
    if (itemPieces !== undefined) {
      const piece = chunk.subarray(itemStart, length);
      // A copy: the chunk's own memory may be reused by the stream that gave it.
      itemPieces.push(Buffer.from(piece));
      itemSize += piece.length;
    } else if (!inItems) {
      envelopePieces.push(Buffer.from(chunk.subarray(copied, length)));
    }
  }

  return {
    write,
    envelope: () => Buffer.concat(envelopePieces),
    largestItem: () => largest,
    strayItem: () => stray,
  };
}
