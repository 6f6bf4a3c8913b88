/**
 * A Lambda Function URL handler for one admission function, composed once per
 * cold start. A configuration error fails the cold start, so every call fails
 * (5xx) and the webhook's failurePolicy decides: never serve unauthenticated
 * or blind.
 */
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { serveAdmission } from '../../lib/webhooks/http-door.ts';
import type { AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { composeAdmission, type ClusterComposer, type Env, type Overrides } from './compose.ts';
import { httpRequestFromEvent, resultFromResponse, type FunctionUrlResult } from './lambda-door.ts';

export type FunctionUrlHandler = (event: LambdaFunctionURLEvent) => Promise<FunctionUrlResult>;

export async function admissionLambda(
  fn: AdmissionFunctionName,
  options: { env?: Env; overrides?: Overrides; cluster?: ClusterComposer } = {},
): Promise<FunctionUrlHandler> {
  const runtime = await composeAdmission(fn, options.env ?? process.env, options.overrides, options.cluster);
  return async (event) => resultFromResponse(await serveAdmission(httpRequestFromEvent(event), runtime.config, runtime.deps));
}
