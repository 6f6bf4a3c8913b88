/**
 * How one HTTP request to a webhook ended, as one typed value: the response,
 * the log line and the metric are each read from it, so none of the three
 * recovers the others' meaning from a string.
 */
import type { Verdict } from '../admission/responses.ts';
import type { ReviewFact } from '../metrics/facts.ts';

export interface HttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** Why the request was refused before any review: each is a 4xx the caller can fix. */
export type Rejection =
  | { why: 'method'; method: string }
  | { why: 'content-type' }
  | { why: 'too-large'; bytes: number; limitBytes: number }
  | { why: 'not-json'; error: string }
  /** JSON, but not the review the function answers (the decoder's words). */
  | { why: 'undecodable'; message: string };

export type RequestOutcome =
  /** The caller is not let in: it sees what any unknown path shows. */
  | { kind: 'refused-caller' }
  | ({ kind: 'rejected' } & Rejection)
  /** A review answered with a decision; `body` is the serialised review. */
  | { kind: 'answered'; uid: string; verdict: Verdict['outcome']; body: string }
  /** No decision (the handler failed, overran, crashed, or its answer is too large): 500/503, so failurePolicy applies. */
  | { kind: 'failed'; uid: string; status: 500 | 503; message: string };

export const REFUSED_CALLER: RequestOutcome = { kind: 'refused-caller' };

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

function message(statusCode: number, text: string, extra: Record<string, string> = {}): HttpResponse {
  return { statusCode, headers: { ...JSON_HEADERS, ...extra }, body: JSON.stringify({ message: text }) };
}

/** What a stranger sees for any request: the same as for a path that does not exist. */
export const NOT_FOUND: HttpResponse = message(404, 'Not Found');

/** The HTTP answer to `outcome`. */
export function responseOf(outcome: RequestOutcome): HttpResponse {
  switch (outcome.kind) {
    case 'refused-caller':
      return NOT_FOUND;
    case 'rejected':
      switch (outcome.why) {
        case 'method':
          return message(405, 'only POST is accepted', { allow: 'POST' });
        case 'content-type':
          return message(415, 'the body must be application/json');
        case 'too-large':
          return message(413, `the body is ${outcome.bytes} bytes; the limit is ${outcome.limitBytes}`);
        case 'not-json':
          return message(400, `the body is not JSON: ${outcome.error}`);
        case 'undecodable':
          return message(400, outcome.message);
      }
      break;
    case 'answered':
      return { statusCode: 200, headers: { ...JSON_HEADERS }, body: outcome.body };
    case 'failed':
      return message(outcome.status, outcome.message);
  }
}

/** The one log line for `outcome`: its level, the outcome it names, and the fields after the common ones. */
export interface RequestLogLine {
  level: 'info' | 'error';
  outcome: string;
  fields: Record<string, unknown>;
}

export function logLineOf(outcome: RequestOutcome): RequestLogLine {
  switch (outcome.kind) {
    case 'refused-caller':
      return { level: 'info', outcome: 'unauthenticated', fields: { statusCode: 404 } };
    case 'rejected':
      return { level: 'info', outcome: 'rejected', fields: rejectionFields(outcome) };
    case 'answered':
      return { level: 'info', outcome: outcome.verdict, fields: { uid: outcome.uid, statusCode: 200 } };
    case 'failed':
      return { level: 'error', outcome: 'failed', fields: { uid: outcome.uid, statusCode: outcome.status, error: outcome.message } };
  }
}

/** A rejection's log fields: its status and what was wrong, never the body's text. */
function rejectionFields(rejection: Rejection): Record<string, unknown> {
  switch (rejection.why) {
    case 'method':
      return { statusCode: 405, reason: `method ${rejection.method}` };
    case 'content-type':
      return { statusCode: 415, reason: 'content type' };
    case 'too-large':
      return { statusCode: 413, bytes: rejection.bytes };
    case 'not-json':
      return { statusCode: 400, reason: 'not JSON' };
    case 'undecodable':
      return { statusCode: 400, reason: rejection.message };
  }
}

const VERDICT_METRIC: Readonly<Record<Verdict['outcome'], ReviewFact['outcome']>> = {
  patched: 'Patched',
  allowed: 'Allowed',
  skipped: 'Skipped',
  denied: 'Denied',
};

/** The `Outcome` dimension `outcome` is counted under. */
export function metricOutcomeOf(outcome: RequestOutcome): ReviewFact['outcome'] {
  switch (outcome.kind) {
    case 'refused-caller':
      return 'RefusedCaller';
    case 'rejected':
      return 'BadRequest';
    case 'answered':
      return VERDICT_METRIC[outcome.verdict];
    case 'failed':
      // The API server applies the failurePolicy.
      return 'CannotDecide';
  }
}
