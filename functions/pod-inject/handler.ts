/** Lambda entry point of the pod-inject webhook (a Function URL). */
import { admissionLambda } from '../shared/admission-lambda.ts';

export const handler = await admissionLambda('pod-inject');
