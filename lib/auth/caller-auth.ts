/**
 * Who may call a webhook (wire.md): a Function URL is public, so the function
 * itself rejects strangers. The caller presents a shared secret either as the
 * last path segment (`<url>/<secret>`) or as `Authorization: Bearer <secret>`.
 * A current and a previous secret are accepted so that the secret can be
 * rotated without downtime.
 */
import { hash, timingSafeEqual } from 'node:crypto';

/** 32 random bytes in base64url are 43 characters; anything shorter is too weak to be a URL credential. */
export const MIN_SECRET_LENGTH = 43;
/**
 * A secret travels in every webhook URL the API server calls; past a
 * kilobyte it is a mistake (a file pasted whole, a key), not a secret, and
 * saying so is clearer than judging its first characters.
 */
export const MAX_SECRET_LENGTH = 1024;
const SECRET_CHARS = /^[A-Za-z0-9_-]+$/;

export interface CallerSecrets {
  current: string;
  previous?: string;
}

/** The secret configuration cannot be used; start-up stops with this message. */
export class CallerSecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CallerSecretError';
  }
}

/** How to make a good secret, for error messages. */
export const SECRET_HOWTO =
  "generate one with: openssl rand -base64 32 | tr '+/' '-_' | tr -d '=' " +
  `(or: node -e "console.log(require('node:crypto').randomBytes(32).toString('base64url'))")`;

/**
 * Checks a secret's form: its length, and base64url only (it travels in
 * URLs). Whether it is guessable is judged where a secret comes in
 * (secret-strength.ts: status-sync on every resync it rotates in, `npm start`,
 * `npm run manifests`), not here: the admission functions check the form
 * only, because the guessing estimate's dictionaries cost each of their cold
 * starts some 700 ms of CPU and 1.6 MB of code (docs/OPERATIONS.md).
 */
export function checkSecret(secret: string, what: string): void {
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new CallerSecretError(`${what} is ${secret.length} characters; it must be at least ${MIN_SECRET_LENGTH} (32 random bytes, base64url); ${SECRET_HOWTO}`);
  }
  if (secret.length > MAX_SECRET_LENGTH) {
    throw new CallerSecretError(`${what} is ${secret.length} characters; it must be at most ${MAX_SECRET_LENGTH} (32 random bytes, base64url, are 43); ${SECRET_HOWTO}`);
  }
  if (!SECRET_CHARS.test(secret)) throw new CallerSecretError(`${what} must be base64url (A-Z, a-z, 0-9, '-', '_'); ${SECRET_HOWTO}`);
}

/**
 * Reads `{"current": "...", "previous": "..."}` or a bare secret string, the
 * two forms a Secrets Manager secret may hold.
 */
export function parseSecretValue(text: string, what: string): CallerSecrets {
  const trimmed = text.trim();
  let secrets: CallerSecrets;
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new CallerSecretError(`${what} is not valid JSON`);
    }
    const { current, previous } = parsed as Record<string, unknown>;
    if (typeof current !== 'string') throw new CallerSecretError(`${what} has no string "current"`);
    if (previous !== undefined && previous !== null && previous !== '' && typeof previous !== 'string') {
      throw new CallerSecretError(`${what} has a "previous" that is not a string`);
    }
    secrets = typeof previous === 'string' && previous !== '' ? { current, previous } : { current };
  } else {
    secrets = { current: trimmed };
  }
  checkSecret(secrets.current, `${what} (current)`);
  if (secrets.previous !== undefined) checkSecret(secrets.previous, `${what} (previous)`);
  return secrets;
}

/** SHA-256, the fixed-size form both sides are compared in, so that lengths leak nothing. */
function digest(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}

/**
 * The digests of the expected secrets, by secret: they change only on a
 * rotation, so each is hashed once rather than on every request. Bounded:
 * past a few rotations in one instance the oldest are forgotten (and hashed
 * again if ever presented as expected).
 */
const expectedDigests = new Map<string, Buffer>();
const MAX_EXPECTED_DIGESTS = 8;

function expectedDigest(secret: string): Buffer {
  let known = expectedDigests.get(secret);
  if (known === undefined) {
    if (expectedDigests.size >= MAX_EXPECTED_DIGESTS) expectedDigests.clear();
    known = digest(secret);
    expectedDigests.set(secret, known);
  }
  return known;
}

function matchesAny(presented: string, secrets: CallerSecrets): boolean {
  // The presented secret is hashed on every request (it is the attacker's
  // input); both comparisons always run, in constant time, so timing tells
  // neither how close it was nor which secret matched.
  const presentedDigest = digest(presented);
  const current = timingSafeEqual(presentedDigest, expectedDigest(secrets.current));
  const previous = secrets.previous !== undefined && timingSafeEqual(presentedDigest, expectedDigest(secrets.previous));
  return current || previous;
}

export interface PresentedCredentials {
  /** The request path after the function's own prefix, e.g. `/<secret>` or `/`. */
  path: string;
  authorization?: string | undefined;
}

/**
 * Whether the caller presented a valid secret. The path must be exactly
 * `/<secret>` (a trailing slash allowed), or `/` with a Bearer header.
 */
export function isAuthorizedCaller(presented: PresentedCredentials, secrets: CallerSecrets): boolean {
  const segments = presented.path.split('/').filter((s) => s !== '');
  if (segments.length === 1) return matchesAny(segments[0] ?? '', secrets);
  if (segments.length > 1) return false;
  const header = presented.authorization ?? '';
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1] !== undefined && matchesAny(match[1], secrets);
}
