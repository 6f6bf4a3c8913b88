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

/** Characters looked at: enough for any threshold, and it bounds the work on a huge value. */
const MAX_EXAMINED = 256;

/** Estimated random bits in a secret (of its first 256 characters). */
export function estimatedSecretBits(secret: string): number {
  const text = secret.slice(0, MAX_EXAMINED);
  if (text === '') return 0;
  return tokens(text) * shannonPerChar(text);
}

/** How to make a good secret, for error messages. */
export const SECRET_HOWTO =
  "generate one with: openssl rand -base64 32 | tr '+/' '-_' | tr -d '=' " +
  `(or: node -e "console.log(require('node:crypto').randomBytes(32).toString('base64url'))")`;
