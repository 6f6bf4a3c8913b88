/**
 * A Lambda Function URL event (payload 2.0) in, the shared HTTP door, a
 * Function URL result out. The body is decoded here; everything else is the
 * same code the fastify server runs.
 */
import type { APIGatewayProxyStructuredResultV2, LambdaFunctionURLEvent } from 'aws-lambda';
import type { HttpDoorConfig, HttpRequest, HttpResponse } from '../../lib/webhooks/http-door.ts';

/**
 * The structured form of LambdaFunctionURLResult: always an explicit status
 * code and a string body, never the bare-string shorthand.
 */
export type FunctionUrlResult = APIGatewayProxyStructuredResultV2;

/**
 * The HTTP request a Function URL event carries. The body is decoded only
 * when the door reads it, which it does after checking the caller, the
 * method and the content type: a stranger's megabytes cost nothing but their
 * arrival.
 */
export function httpRequestFromEvent(event: LambdaFunctionURLEvent): HttpRequest {
  let decoded: string | undefined;
  return {
    method: event.requestContext.http.method,
    path: event.rawPath,
    headers: event.headers,
    timeout: event.queryStringParameters?.timeout,
    get body() {
      const raw = event.body ?? '';
      decoded ??= event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
      return decoded;
    },
    // Counted without decoding: base64's length gives the size it decodes to.
    get bodyBytes() {
      return Buffer.byteLength(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
    },
    requestId: event.requestContext.requestId,
    // Set by the Function URL service from the connection, not from a header the caller controls.
    sourceIp: event.requestContext.http.sourceIp,
  };
}

export function resultFromResponse(response: HttpResponse): FunctionUrlResult {
  return { statusCode: response.statusCode, headers: response.headers, body: response.body, isBase64Encoded: false };
}

export type { HttpDoorConfig };
