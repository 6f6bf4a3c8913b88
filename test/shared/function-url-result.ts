/**
 * What the Lambda suites share: the environment that gives a function its
 * caller secret, and a Function URL result read as the structured object it
 * always is here.
 */
import type { LambdaFunctionURLResult } from 'aws-lambda';
import { SECRET } from '../../testkit/reviews.ts';

/** A Function URL result is a structured object here, never Lambda's bare-string shorthand. */
export function structured(result: LambdaFunctionURLResult) {
  if (typeof result === 'string') throw new Error(`expected a structured result, got the string ${result}`);
  return { ...result, json: JSON.parse(result.body ?? '') };
}

export const secretEnv = { WEBHOOK_SECRET: SECRET };
