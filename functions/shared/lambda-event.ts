/**
 * A Lambda event in, the shared HTTP handler, a result out. Two events reach
 * the admission functions: a Function URL's (payload 2.0, the default
 * ingress) and an API Gateway REST API's proxy event (payload 1.0, the
 * private ingress of `webhookIngress=private`). Both become the same
 * HttpRequest, so the HTTP handler answers them byte for byte alike; the body is
 * decoded here, everything else is the same code the fastify server runs.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyStructuredResultV2, LambdaFunctionURLEvent } from 'aws-lambda';
import type { HttpHandlerConfig, HttpRequest, HttpResponse } from '../../lib/webhooks/http-handler.ts';

/**
 * The structured form of LambdaFunctionURLResult: always an explicit status
 * code and a string body, never the bare-string shorthand.
 */
export type FunctionUrlResult = APIGatewayProxyStructuredResultV2;

/**
 * The HTTP request a Function URL event carries. The body is decoded only
 * when the HTTP handler reads it, which it does after checking the caller, the
 * method and the content type: a stranger's megabytes cost nothing but their
 * arrival.
 */
export function httpRequestFromEvent(event: LambdaFunctionURLEvent): HttpRequest {
  return withLazyBody(
    {
      method: event.requestContext.http.method,
      path: event.rawPath,
      headers: event.headers,
      timeout: event.queryStringParameters?.timeout,
      requestId: event.requestContext.requestId,
      // Set by the Function URL service from the connection, not from a header the caller controls.
      sourceIp: event.requestContext.http.sourceIp,
    },
    // Read from the event only when the HTTP handler asks: not even touched for a stranger.
    () => event.body,
    event.isBase64Encoded,
  );
}

/**
 * The request with its body decoded only when the HTTP handler reads it, and its
 * size counted without decoding (base64's length gives the size it decodes to).
 */
function withLazyBody(request: Omit<HttpRequest, 'body' | 'bodyBytes'>, raw: () => string | null | undefined, base64: boolean): HttpRequest {
  let decoded: string | undefined;
  return {
    ...request,
    get body() {
      decoded ??= base64 ? Buffer.from(raw() ?? '', 'base64').toString('utf8') : (raw() ?? '');
      return decoded;
    },
    get bodyBytes() {
      return Buffer.byteLength(raw() ?? '', base64 ? 'base64' : 'utf8');
    },
  };
}

/**
 * The HTTP request of a REST API proxy event. The API routes
 * `/<function>/{proxy+}` to each function, so the function's own prefix (the
 * resource's fixed part) is cut off and the HTTP handler sees `/<secret>` as behind
 * a Function URL. REST API headers keep the caller's spelling; the HTTP handler
 * reads lower-case names, so they are folded (repeated headers joined with
 * ", " as HTTP allows).
 */
export function httpRequestFromRestEvent(event: APIGatewayProxyEvent): HttpRequest {
  return withLazyBody(
    {
      method: event.httpMethod,
      path: pathAfterResource(event.path, event.resource),
      headers: foldHeaders(event.multiValueHeaders, event.headers),
      timeout: event.queryStringParameters?.timeout,
      requestId: event.requestContext.requestId,
      // Set by API Gateway from the connection (through the VPC endpoint: the caller's address in the VPC), never from a header.
      sourceIp: event.requestContext.identity.sourceIp,
    },
    // Read from the event only when the HTTP handler asks: not even touched for a stranger.
    () => event.body,
    event.isBase64Encoded,
  );
}

/** `/pod-inject/<secret>` under the resource `/pod-inject/{proxy+}` is `/<secret>`; anything else is `/`. */
function pathAfterResource(path: string, resource: string): string {
  const greedy = resource.indexOf('{');
  const prefix = (greedy < 0 ? resource : resource.slice(0, greedy)).replace(/\/+$/, '');
  return path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : '/';
}

function foldHeaders(multi: APIGatewayProxyEvent['multiValueHeaders'] | null | undefined, single: APIGatewayProxyEvent['headers'] | null | undefined): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  // Null-prototype: a header named __proto__ is a header, not a prototype.
  Object.setPrototypeOf(out, null);
  const source: Record<string, readonly (string | undefined)[] | undefined> = multi ?? Object.fromEntries(Object.entries(single ?? {}).map(([k, v]) => [k, [v]]));
  for (const [name, values] of Object.entries(source)) {
    const key = name.toLowerCase();
    const joined = (values ?? []).filter((v): v is string => v !== undefined).join(', ');
    out[key] = out[key] === undefined ? joined : `${out[key]}, ${joined}`;
  }
  return out;
}

/** A Function URL event (payload 2.0) or a REST API proxy event (1.0). */
export type AdmissionEvent = LambdaFunctionURLEvent | APIGatewayProxyEvent;

/** The HTTP request of either event: a REST API event names its method `httpMethod`, a Function URL event in `requestContext.http`. */
export function httpRequestFromAnyEvent(event: AdmissionEvent): HttpRequest {
  return 'httpMethod' in event ? httpRequestFromRestEvent(event) : httpRequestFromEvent(event);
}

export function resultFromResponse(response: HttpResponse): FunctionUrlResult {
  return { statusCode: response.statusCode, headers: response.headers, body: response.body, isBase64Encoded: false };
}

export type { HttpHandlerConfig };
