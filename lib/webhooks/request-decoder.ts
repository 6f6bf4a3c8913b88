/**
 * Decoding a review from its HTTP request, as controller-runtime's admission
 * ServeHTTP does: method, content type and size before the body is read (a lazy
 * body is not even decoded until then), then JSON, then the function's decoder
 * (AdmissionReview or ConversionReview). Every refusal is a 4xx the caller can fix.
 */
import type { RequestOutcome, Rejection } from './request-outcome.ts';

export interface HttpRequest {
  method: string;
  /** The path after the function's own prefix: `/<secret>` or `/`. */
  path: string;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
  /** The `timeout` query parameter the API server appends (`10s`). */
  timeout?: string | undefined;
  body: string;
  /** The body's size in bytes as received. */
  bodyBytes: number;
  /** The platform's id for this request (Lambda's requestId), for logs. */
  requestId?: string | undefined;
  /** The address the request came from (the Function URL's sourceIp, the socket's peer): never a header. */
  sourceIp?: string | undefined;
}

/**
 * A review decoded from a parsed JSON body, or why the body holds none (said
 * to the caller as a 400). `text` is the body's text, `body` its JSON.parse.
 */
export type Decoder<T> = (body: unknown, text: string) => { request: T } | { invalid: string };

export type Rejected = Extract<RequestOutcome, { kind: 'rejected' }>;

function rejected(rejection: Rejection): Rejected {
  return { kind: 'rejected', ...rejection };
}

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const [type] = value.split(';');
  return type?.trim().toLowerCase() === 'application/json';
}

/** The review `request` carries, decoded by `decode`, or the first thing wrong with the request. */
export function decodeRequest<T>(request: HttpRequest, maxBodyBytes: number, decode: Decoder<T>): { request: T } | Rejected {
  if (request.method !== 'POST') return rejected({ why: 'method', method: request.method });
  if (!isJsonContentType(request.headers['content-type'])) return rejected({ why: 'content-type' });
  if (request.bodyBytes > maxBodyBytes) return rejected({ why: 'too-large', bytes: request.bodyBytes, limitBytes: maxBodyBytes });
  let body: unknown;
  try {
    body = JSON.parse(request.body);
  } catch (error) {
    return rejected({ why: 'not-json', error: (error as Error).message });
  }
  const decoded = decode(body, request.body);
  return 'invalid' in decoded ? rejected({ why: 'undecodable', message: decoded.invalid }) : decoded;
}
