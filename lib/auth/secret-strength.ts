/**
 * A conservative estimate of how much randomness a caller secret holds, so
 * that `aaaa…`, `abcabc…` or `ABCDEF…` are refused even though they have the
 * length and the alphabet of a real one.
 *
 * The estimate counts the characters that could not be predicted from the
 * ones before them, and charges each at most the string's own Shannon
 * entropy per character:
 *
 * - a run that repeats something seen earlier (3 characters or more, as an
 *   LZ77 parse finds them) costs one token, however long it is;
 * - a character continuing an arithmetic progression of the two before it
 *   (`aaa`, `abc`, `aceg`) costs nothing;
 * - everything else is a literal and costs one token.
 *
 * bits = tokens × Shannon entropy per character (of the whole string).
 *
 * A real 43-character base64url secret (32 random bytes) has about 42 tokens
 * at about 4.9 bits each, some 200 bits; the threshold is 128. The test
 * suite checks this over many random secrets and the bad patterns.
 *
 * A phrase of words (`my_company_kubernetes_webhook_token_production_v2`)
 * has no repetition and many distinct characters, so it scores as random
 * text (some 200 bits) although an attacker guesses it word by word. The
 * estimate is therefore also made as such an attacker makes it, and the lower
 * of the two counts: the secret is cut into words (runs of letters, split at
 * separators and at case changes, `myCompany` → `my`, `Company`), numbers and
 * separators; a word costs at most {@link WORD_BITS} (one pick from a large
 * dictionary), a separator run one bit, anything else (digits, letters that
 * do not look like a word) its characters at the string's entropy as above.
 * Only a secret mostly made of words is judged so: none of 300,000 random
 * base64url secrets was (their letters are half capitals, their runs short
 * and unpronounceable), so generated secrets score exactly as before. Ten
 * words picked at random (diceware) still reach 128 bits; a phrase someone
 * made up does not.
 */

/** What a caller secret must carry at least: the strength of a 128-bit key. */
export const MIN_SECRET_BITS = 128;

/** Shortest earlier run that counts as a repetition: shorter ones happen by chance in random text. */
const MIN_MATCH = 3;

/** Shannon entropy of the string's own character distribution, in bits per character. */
function shannonPerChar(text: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** The longest run starting at `i` that also starts at an earlier position (it may overlap `i`). */
function longestEarlierMatch(text: string, i: number): number {
  let best = 0;
  for (let j = 0; j < i; j++) {
    let n = 0;
    while (i + n < text.length && text[j + n] === text[i + n]) n++;
    if (n > best) best = n;
  }
  return best;
}

/** Unpredictable pieces of the string (see the module comment). Quadratic, for strings of a secret's size. */
function tokens(text: string): number {
  let count = 0;
  let i = 0;
  while (i < text.length) {
    const match = longestEarlierMatch(text, i);
    if (match >= MIN_MATCH) {
      count++;
      i += match;
      continue;
    }
    const progression = i >= 2 && text.charCodeAt(i) - text.charCodeAt(i - 1) === text.charCodeAt(i - 1) - text.charCodeAt(i - 2);
    if (!progression) count++;
    i++;
  }
  return count;
}

/** What one word costs an attacker at most: a pick from a dictionary of some 8,000 words (2^13). */
export const WORD_BITS = 13;

/** What a separator run between words costs: which separator a phrase uses is nearly a given. */
const SEPARATOR_BITS = 1;

/** The share of the characters words must cover for the secret to be judged as a phrase. */
const PHRASE_SHARE = 0.8;

/** At most this share of a phrase's letters are capitals, unless every letter is one (a phrase in capitals). */
const CAPITALS_SHARE = 0.25;

/** Runs of letters split at case changes (`myCompany`, `HTTPServer`), runs of digits, runs of anything else. */
const PIECES = /[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+|[^A-Za-z0-9]+/g;

/**
 * Looks like a word of a language: two letters or more (lower case after an
 * optional capital), a quarter of them vowels (a, e, i, o, u, y), never
 * four consonants in a row. Random letters rarely are (`xqzt`, `Kbrw`).
 */
function isWordLike(piece: string): boolean {
  if (!/^[A-Za-z][a-z]+$/.test(piece) || /[^aeiouy]{4}/i.test(piece)) return false;
  return 4 * (piece.match(/[aeiouy]/gi)?.length ?? 0) >= piece.length;
}

/**
 * The secret as a word-guessing attacker prices it (see the module comment);
 * Infinity when words cover less than {@link PHRASE_SHARE} of it (random text
 * holds short pronounceable runs by chance, and is judged as random text).
 * Linear.
 */
function phraseBits(secret: string, perChar: number): number {
  const letters = secret.replace(/[^A-Za-z]/g, '').length;
  const upper = secret.replace(/[^A-Z]/g, '').length;
  // A phrase is written in lower case with a capital per word, or wholly in capitals; random text is half and
  // half. Only wholly: random text that is mostly capitals, lowered, reads as words often enough to refuse about
  // one generated secret in 300,000 (measured).
  const inCapitals = letters > 0 && upper === letters;
  if (!inCapitals && upper > CAPITALS_SHARE * letters) return Infinity;
  const text = inCapitals ? secret.toLowerCase() : secret;
  let bits = 0;
  let inWords = 0;
  for (const [piece] of text.matchAll(PIECES)) {
    const asCharacters = Array.from(piece).length * perChar;
    if (isWordLike(piece)) {
      inWords += piece.length;
      bits += Math.min(WORD_BITS, asCharacters);
    } else if (/^[A-Za-z0-9]/.test(piece)) bits += asCharacters;
    else bits += Math.min(asCharacters, SEPARATOR_BITS);
  }
  return inWords >= PHRASE_SHARE * text.length ? bits : Infinity;
}

/** Characters looked at: enough for any threshold, and it bounds the work on a huge value. */
const MAX_EXAMINED = 256;

/** Estimated random bits in a secret (of its first 256 characters): the lower of the pattern and the phrase estimate. */
export function estimatedSecretBits(secret: string): number {
  const text = secret.slice(0, MAX_EXAMINED);
  if (text === '') return 0;
  const perChar = shannonPerChar(text);
  return Math.min(tokens(text) * perChar, phraseBits(text, perChar));
}

/** How to make a good secret, for error messages. */
export const SECRET_HOWTO =
  "generate one with: openssl rand -base64 32 | tr '+/' '-_' | tr -d '=' " +
  `(or: node -e "console.log(require('node:crypto').randomBytes(32).toString('base64url'))")`;
