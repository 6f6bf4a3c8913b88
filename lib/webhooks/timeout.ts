/**
 * How long a webhook may work on one request. The API server appends
 * `?timeout=<Go duration>` (its `timeoutSeconds`, formatted by Go's
 * `time.Duration.String()`: `10s`, `1m0s`, `2.5s`) and gives up after that,
 * treating the call as failed. Answering a little earlier leaves time for the
 * response to travel, and lets a webhook that cannot decide answer 503 itself
 * rather than be cut off.
 */

/** The API server's default `timeoutSeconds`, used when the query carries none. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
/** The largest `timeoutSeconds` a webhook configuration may set. */
export const MAX_WEBHOOK_TIMEOUT_MS = 30_000;
/** Time kept back for the answer to reach the API server. */
export const DEADLINE_MARGIN_MS = 1_000;
/** The least time ever given to a request, however short its timeout. */
export const MIN_DEADLINE_MS = 100;

/** A string that is not a Go duration. */
export class InvalidDurationError extends Error {
  constructor(text: string) {
    super(`"${text}" is not a Go duration (such as "10s", "2500ms", "1m30s")`);
    this.name = 'InvalidDurationError';
  }
}

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3, // U+00B5 micro sign
  'μs': 1e-3, // U+03BC Greek mu: Go accepts both
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

const WHOLE = /^[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/u;
const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/gu;

/**
 * Milliseconds in a Go duration string, as `time.ParseDuration` reads it
 * (a sign, then one or more number+unit pairs; `0` alone is allowed).
 * @throws InvalidDurationError
 */
export function parseGoDuration(text: string): number {
  if (text === '0' || text === '+0' || text === '-0') return 0;
  if (!WHOLE.test(text)) throw new InvalidDurationError(text);
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART)) {
    total += Number(amount) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
  }
  if (!Number.isFinite(total)) throw new InvalidDurationError(text);
  return text.startsWith('-') ? -total : total;
}

/**
 * Milliseconds a webhook has to answer a request whose URL carried
 * `timeout` (undefined when absent): the timeout, capped at the largest a
 * webhook can be configured with, minus {@link DEADLINE_MARGIN_MS}, and never
 * under {@link MIN_DEADLINE_MS}. A missing or unreadable value counts as the
 * API server's default of 10 s: it always sends one, so anything else is a
 * hand-made request that deserves the usual budget.
 */
export function deadlineFromTimeout(timeout: string | undefined): number {
  let timeoutMs = DEFAULT_WEBHOOK_TIMEOUT_MS;
  if (timeout !== undefined && timeout !== '') {
    try {
      timeoutMs = parseGoDuration(timeout);
    } catch {
      timeoutMs = DEFAULT_WEBHOOK_TIMEOUT_MS;
    }
  }
  const capped = Math.min(timeoutMs, MAX_WEBHOOK_TIMEOUT_MS);
  return Math.max(MIN_DEADLINE_MS, Math.floor(capped - DEADLINE_MARGIN_MS));
}
