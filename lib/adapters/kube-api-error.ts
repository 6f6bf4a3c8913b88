/**
 * The one error every Kubernetes API request fails with (kube-request.ts),
 * so that logs and the cache's SourceUnavailableError read the same for
 * every adapter.
 */
import { errorMessage } from '../errors.ts';
import { isObject } from '../kube/json.ts';

/**
 * The API server refused a read or answered something unusable. The message
 * is the problem alone: the cache's SourceUnavailableError names the operation.
 */
export class KubeApiError extends Error {
  /** The read, e.g. `list SidecarSets`. */
  readonly operation: string;
  /** The HTTP status, when the server answered with an error status. */
  readonly code: number | undefined;
  constructor(operation: string, problem: string, code?: number, options?: { cause?: unknown }) {
    super(problem, options);
    this.name = 'KubeApiError';
    this.operation = operation;
    this.code = code;
  }
}

/**
 * An error status from the API server, with its whole explanation (the
 * `message` of the Status object it sends) when the body holds one: the
 * reason of a refused write comes last, after the value it refused, so a
 * message cut short would lose it. The headers are left out: they say
 * nothing a reader can act on.
 * @param body the response body, as text or already parsed.
 */
export function apiServerAnswered(operation: string, code: number, body: unknown, options?: { cause?: unknown }): KubeApiError {
  let status = body;
  if (typeof status === 'string') {
    try {
      status = JSON.parse(status);
    } catch {
      // Not a Status object: the status code alone has to do.
    }
  }
  const explanation = isObject(status) && typeof status.message === 'string' ? `: ${status.message}` : '';
  return new KubeApiError(operation, `the API server answered ${code}${explanation}`, code, options?.cause === undefined ? undefined : { cause: options.cause });
}

/**
 * The error a read fails with, its message complete on its own: a
 * KubeApiError as it is, anything else (a network error, undici's "fetch
 * failed", which hides the reason in its causes) with its chain of causes.
 */
export function asKubeApiError(operation: string, error: unknown): KubeApiError {
  if (error instanceof KubeApiError) return error;
  const parts: string[] = [];
  for (let current: unknown = error; current !== undefined && current !== null && parts.length < 5; ) {
    const message = errorMessage(current);
    if (!parts.some((part) => part.includes(message))) parts.push(message);
    current = typeof current === 'object' ? (current as { cause?: unknown }).cause : undefined;
  }
  return new KubeApiError(operation, `the request failed: ${parts.join(': ')}`, undefined, { cause: error });
}
