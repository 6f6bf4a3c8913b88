/** Lambda entry point of the pod-change webhook (a Function URL): it reads nothing, only triggers status passes. */
import { admissionLambda } from '../shared/admission-lambda.ts';

export const handler = await admissionLambda('pod-change');
