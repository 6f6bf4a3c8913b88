/** Lambda entry point of the status reconciler (an EventBridge schedule). */
import { statusSyncLambda } from './lambda.ts';

export const handler = await statusSyncLambda();
