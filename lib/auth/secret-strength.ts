/**
 * How many guesses a caller secret would cost an attacker, so that phrases a
 * person made up (`ThisIsMyVerySecretWebhookTokenForTheCluster2026`), padded
 * words, keyboard walks, dates and repeated or sequential characters are
 * refused even though they have a real secret's length and alphabet.
 *
 * The estimate is zxcvbn's (zxcvbn-ts, with its common and English
 * dictionaries), with two additions:
 * - a ceiling of length × the string's own Shannon entropy per character:
 *   zxcvbn prices every brute-forced character at 10 guesses whatever the
 *   alphabet, so a random string over `ACGT` or `01` would look as strong as
 *   one over base64url;
 * - a bound on the work, as zxcvbn's matching grows faster than the input:
 *   only the first {@link MAX_EXAMINED} characters are judged (128 random
 *   base64url characters carry 768 bits, far past the threshold), and l33t
 *   substitutions are tried at most {@link L33T_SUBSTITUTIONS} per word
 *   (zxcvbn's default of 100 costs some ten times the CPU, with the same
 *   verdict on every secret of the test suite).
 *
 * A generated secret (32 random bytes, base64url) scores some 140 bits here,
 * above the 128-bit floor: the strength of a 128-bit key. Only the code that
 * takes a secret in imports this module (status-sync's rotation, `npm start`,
 * `npm run manifests`); the admission functions check a secret's form only
 * (caller-auth.ts), so their bundles do not carry the dictionaries.
 */
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { adjacencyGraphs, dictionary as commonDictionary } from '@zxcvbn-ts/language-common';
import { dictionary as englishDictionary } from '@zxcvbn-ts/language-en';
import { CallerSecretError, checkSecret, MIN_SECRET_LENGTH, parseSecretValue, SECRET_HOWTO, type CallerSecrets } from './caller-auth.ts';

/** What a caller secret must carry at least: the strength of a 128-bit key. */
export const MIN_SECRET_BITS = 128;

/** Characters judged: enough for any threshold, and it bounds the work on a huge value (see the module comment). */
export const MAX_EXAMINED = 128;

/** l33t substitutions zxcvbn tries per word (see the module comment for the cost of more). */
const L33T_SUBSTITUTIONS = 2;

/**
 * Built on first use: ranking the dictionaries costs some 350 ms of CPU,
 * paid once per process, and only by a process that checks a secret.
 */
let estimator: ZxcvbnFactory | undefined;

function zxcvbn(): ZxcvbnFactory {
  estimator ??= new ZxcvbnFactory({
    dictionary: { ...commonDictionary, ...englishDictionary },
    graphs: adjacencyGraphs,
    maxLength: MAX_EXAMINED,
    l33tMaxSubstitutions: L33T_SUBSTITUTIONS,
  });
  return estimator;
}

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

/** Estimated random bits in a secret (of its first 128 characters): zxcvbn's guesses, at most its characters' entropy. */
export function estimatedSecretBits(secret: string): number {
  const text = secret.slice(0, MAX_EXAMINED);
  if (text === '') return 0;
  const zxcvbnBits = zxcvbn().check(text).guessesLog10 * Math.log2(10);
  return Math.min(zxcvbnBits, text.length * shannonPerChar(text));
}

/**
 * Checks a secret's form (checkSecret), then refuses it when it is
 * guessable, saying how to make a good one. The form the project generates
 * is 32 random bytes, base64url: so its first {@link MIN_SECRET_LENGTH}
 * characters alone must carry the {@link MIN_SECRET_BITS}, and then the
 * whole. A phrase long enough to add up past the floor word by word
 * (`sidecarset-webhook-secret-prod-eu-west-1-cluster-a`, about 141 bits
 * whole) is refused by its first 43 characters (about 123); a generated
 * secret's score some 137 or more (docs/OPERATIONS.md).
 */
export function checkSecretStrength(secret: string, what: string): void {
  // The form first: it bounds the length, so a huge value is refused before it is judged.
  checkSecret(secret, what);
  const head = secret.slice(0, MIN_SECRET_LENGTH);
  const headBits = estimatedSecretBits(head);
  if (headBits < MIN_SECRET_BITS) throw predictable(what, headBits, secret.length > head.length ? ` in its first ${MIN_SECRET_LENGTH} characters, where a generated secret's 32 random bytes are, however long the rest (a phrase is not a secret)` : '');
  const bits = secret.length === head.length ? headBits : estimatedSecretBits(secret);
  if (bits < MIN_SECRET_BITS) throw predictable(what, bits, '');
}

function predictable(what: string, bits: number, where: string): CallerSecretError {
  return new CallerSecretError(
    `${what} is too predictable (words, names, dates, keyboard runs, repeated or sequential characters, or too few distinct ones: about ${Math.floor(bits)} random bits, at least ${MIN_SECRET_BITS} needed${where}); ${SECRET_HOWTO}`,
  );
}

/** parseSecretValue, then each secret judged as checkSecretStrength judges it: for the places a secret comes in. */
export function parseJudgedSecretValue(text: string, what: string): CallerSecrets {
  const secrets = parseSecretValue(text, what);
  checkSecretStrength(secrets.current, `${what} (current)`);
  if (secrets.previous !== undefined) checkSecretStrength(secrets.previous, `${what} (previous)`);
  return secrets;
}
