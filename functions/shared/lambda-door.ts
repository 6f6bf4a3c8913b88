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

/** The HTTP request a Function URL event carries. */
export function httpRequestFromEvent(event: LambdaFunctionURLEvent): HttpRequest {
  const raw = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  return {
    method: event.requestContext.http.method,
    path: event.rawPath,
    headers: event.headers,
    timeout: event.queryStringParameters?.timeout,
    body: event.isBase64Encoded ? bytes.toString('utf8') : raw,
    bodyBytes: bytes.length,
    requestId: event.requestContext.requestId,
  };
}

export function resultFromResponse(response: HttpResponse): FunctionUrlResult {
  return { statusCode: response.statusCode, headers: response.headers, body: response.body, isBase64Encoded: false };
}

export type { HttpDoorConfig };
