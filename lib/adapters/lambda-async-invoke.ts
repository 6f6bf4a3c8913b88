/**
 * One asynchronous invoke (InvocationType `Event`) of a Lambda function, as
 * both the admitted-change trigger and status-sync's own self-requeue send
 * it. The SDK is imported on the first send, not with this module: a
 * function that never sends pays nothing for it at cold start.
 */
/** Where the Lambda API is reached (the SDK's defaults when unset). */
export interface LambdaTriggerOptions {
  /** Overrides the service endpoint (tests point it at a local server). */
  endpoint?: string;
  region?: string;
}

/**
 * Sends `payload` as JSON and resolves with Lambda's status code (202 when
 * the event was queued, the only answer that means it was).
 * @throws whatever the SDK throws when the hand-over fails.
 */
export type AsyncInvoke = (payload: unknown, signal?: AbortSignal) => Promise<number | undefined>;

/**
 * An invoker of `functionName`, one client per cold start.
 * @param maxAttempts the SDK's own attempts at the hand-over (not retries of the invocation).
 */
export function lambdaAsyncInvoke(functionName: string, options: LambdaTriggerOptions, maxAttempts: number): AsyncInvoke {
  let sdk: Promise<{ client: import('@aws-sdk/client-lambda').LambdaClient; Command: typeof import('@aws-sdk/client-lambda').InvokeCommand }> | undefined;
  const load = () =>
    (sdk ??= import('@aws-sdk/client-lambda').then(({ LambdaClient, InvokeCommand }) => ({
      client: new LambdaClient({
        ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
        ...(options.region !== undefined ? { region: options.region } : {}),
        maxAttempts,
      }),
      Command: InvokeCommand,
    })));
  return async (payload, signal) => {
    const { client, Command } = await load();
    const body = new TextEncoder().encode(JSON.stringify(payload));
    const answer = await client.send(new Command({ FunctionName: functionName, InvocationType: 'Event', Payload: body }), signal === undefined ? {} : { abortSignal: signal });
    return answer.StatusCode;
  };
}
