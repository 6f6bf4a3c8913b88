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

/** Whether a byte may stand directly in the items array: an object's opening, a comma, whitespace, the closing bracket. */
function belongsBetweenItems(byte: number | undefined): boolean {
  return byte === OPEN_BRACE || byte === CLOSE_BRACKET || byte === 0x2c || byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** The splitter's state: where in the JSON structure it stands, the item being read and the envelope so far. */
class ListItemScanner implements ListItemSplitter {
  private readonly options: ListItemSplitterOptions;
  private depth = 0;
  private inString = false;
  /** Backslashes just before the current position inside a string (an odd run escapes the next byte). */
  private backslashes = 0;
  /** Inside the top-level `items` array (depth 2 there). */
  private inItems = false;
  /** The bytes of the last short string read at depth 1 (a key candidate) and whether it may still be "items". */
  private keyBytes: number[] = [];
  private keyCandidate = false;
  private stringAtDepth1 = false;
  private lastKeyWasItems = false;
  /** The current item's pieces (from its opening brace), while one is open. */
  private itemPieces: Buffer[] | undefined;
  private itemSize = 0;
  private largest = 0;
  private readonly envelopePieces: Buffer[] = [];
  /** Whether `onItemsOpen` was called (once per answer: a second top-level `items` key is not a second head). */
  private toldOpen = false;
  /** A value other than an object seen directly in the items array: reported, so that it is not dropped unseen. */
  private stray = false;
  /** In the chunk being read: where the part not yet copied (to the envelope or to the item) starts, and where the open item starts. */
  private copied = 0;
  private itemStart = -1;

  constructor(options: ListItemSplitterOptions) {
    this.options = options;
  }

  write(chunk: Buffer, onItem: (item: Buffer) => void): void {
    const length = chunk.length;
    this.copied = 0;
    this.itemStart = this.itemPieces === undefined ? -1 : 0;
    let i = 0;
    while (i < length) i = this.inString ? this.readString(chunk, i) : this.readStructure(chunk, i, onItem);
    if (this.itemPieces !== undefined) {
      const piece = chunk.subarray(this.itemStart, length);
      // A copy: the chunk's own memory may be reused by the stream that gave it.
      this.itemPieces.push(Buffer.from(piece));
      this.itemSize += piece.length;
    } else if (!this.inItems) {
      this.envelopePieces.push(Buffer.from(chunk.subarray(this.copied, length)));
    }
  }

  envelope(): Buffer {
    return Buffer.concat(this.envelopePieces);
  }

  largestItem(): number {
    return this.largest;
  }

  strayItem(): boolean {
    return this.stray;
  }

  /** Inside a string: jumps to the next quote (the backslashes right before it say whether it closes the string); returns where reading goes on. */
  private readString(chunk: Buffer, i: number): number {
    const quote = chunk.indexOf(QUOTE, i);
    const end = quote < 0 ? chunk.length : quote;
    let run = 0;
    let k = end - 1;
    while (k >= i && chunk[k] === BACKSLASH) {
      run++;
      k--;
    }
    // A run reaching back to where this scan started continues the run carried from before it.
    if (k < i) run += this.backslashes;
    // Only a short string can be the key; at most one byte past it is looked at.
    for (let j = i; j < end && this.keyCandidate && this.stringAtDepth1 && this.keyBytes.length <= ITEMS_KEY.length; j++) this.keyBytes.push(chunk[j] ?? 0);
    this.dropLongKey();
    if (quote < 0) {
      this.backslashes = run;
      return chunk.length;
    }
    this.backslashes = 0;
    if (run % 2 === 1) {
      // An escaped quote: the string goes on after it.
      if (this.stringAtDepth1 && this.keyCandidate) this.keyBytes.push(QUOTE);
      this.dropLongKey();
      return quote + 1;
    }
    this.inString = false;
    if (this.stringAtDepth1) this.lastKeyWasItems = this.keyCandidate && this.keyBytes.length === ITEMS_KEY.length && ITEMS_KEY.equals(Buffer.from(this.keyBytes));
    return quote + 1;
  }

  private dropLongKey(): void {
    if (this.stringAtDepth1 && this.keyCandidate && this.keyBytes.length > ITEMS_KEY.length) this.keyCandidate = false;
  }

  /** Outside strings: one byte of structure; returns where reading goes on. */
  private readStructure(chunk: Buffer, i: number, onItem: (item: Buffer) => void): number {
    const byte = chunk[i];
    // Directly in the items array only objects, commas, whitespace and its closing bracket belong.
    if (this.inItems && this.depth === 2 && !belongsBetweenItems(byte)) this.stray = true;
    if (byte === QUOTE) {
      this.inString = true;
      this.backslashes = 0;
      this.stringAtDepth1 = this.depth === 1;
      if (this.stringAtDepth1) {
        this.keyBytes = [];
        this.keyCandidate = true;
      }
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      this.open(chunk, i, byte);
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      this.close(chunk, i, onItem);
    } else if (byte === 0x2c && this.depth === 1) {
      this.lastKeyWasItems = false;
    }
    return i + 1;
  }

  private open(chunk: Buffer, i: number, byte: number): void {
    if (this.inItems && this.depth === 2) {
      // An item opens: what came before it in this chunk belongs to no one (commas, spaces).
      this.itemPieces = [];
      this.itemSize = 0;
      this.itemStart = i;
      this.copied = i;
    }
    this.depth++;
    if (this.depth !== 2 || byte !== OPEN_BRACKET || !this.lastKeyWasItems) return;
    this.inItems = true;
    // The envelope keeps the bracket; everything up to the closing one is items.
    this.envelopePieces.push(Buffer.from(chunk.subarray(this.copied, i + 1)));
    this.copied = i + 1;
    if (this.options.onItemsOpen !== undefined && !this.toldOpen) {
      this.toldOpen = true;
      this.options.onItemsOpen(Buffer.concat(this.envelopePieces));
    }
  }

  private close(chunk: Buffer, i: number, onItem: (item: Buffer) => void): void {
    this.depth--;
    if (this.inItems && this.depth === 2 && this.itemPieces !== undefined) {
      const piece = chunk.subarray(this.itemStart, i + 1);
      this.itemPieces.push(piece);
      this.itemSize += piece.length;
      const item = this.itemPieces.length === 1 ? piece : Buffer.concat(this.itemPieces, this.itemSize);
      this.itemPieces = undefined;
      this.itemStart = -1;
      this.copied = i + 1;
      if (this.itemSize > this.largest) this.largest = this.itemSize;
      onItem(item);
    } else if (this.inItems && this.depth === 1) {
      this.inItems = false;
      this.lastKeyWasItems = false;
      this.copied = i;
    }
  }
}

/** A fresh splitter for one answer. */
export function listItemSplitter(options: ListItemSplitterOptions = {}): ListItemSplitter {
  return new ListItemScanner(options);
}
