/**
 * A Lambda handler for one function the API server calls (an admission function, or the CRD conversion function; behind a Function URL or the private REST API), composed once per
 * cold start. A configuration error fails the cold start, so every call fails
 * (5xx) and the webhook's failurePolicy decides: never serve unauthenticated
 * or blind.
 */
import { serveAdmission } from '../../lib/webhooks/http-handler.ts';
import { descriptorOf } from '../../lib/webhooks/registry.ts';
import type { FunctionName } from '../../lib/webhooks/descriptors.ts';
import { composeAdmission, type ClusterComposer, type Env, type Overrides } from './compose.ts';
import { httpRequestFromAnyEvent, resultFromResponse, type AdmissionEvent, type FunctionUrlResult } from './lambda-event.ts';

/** Takes the Function URL's events and, behind the private REST API, API Gateway's proxy events; the result shape suits both. */
export type FunctionUrlHandler = (event: AdmissionEvent) => Promise<FunctionUrlResult>;

export async function admissionLambda(
  fn: FunctionName,
  options: { env?: Env; overrides?: Overrides; cluster?: ClusterComposer } = {},
): Promise<FunctionUrlHandler> {
  const runtime = await composeAdmission(fn, options.env ?? process.env, options.overrides, options.cluster);
  // The handler's code is a lazily imported chunk of the bundle: load it during the cold start, not in the first review's deadline.
  await descriptorOf(fn).handler.load();
  return async (event) => resultFromResponse(await serveAdmission(httpRequestFromAnyEvent(event), runtime.config, runtime.deps));
}
