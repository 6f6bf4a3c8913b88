/** Lambda entry point of the sidecarset-convert CRD conversion webhook (a Function URL). */
import { admissionLambda } from '../shared/admission-lambda.ts';

export const handler = await admissionLambda('sidecarset-convert');
