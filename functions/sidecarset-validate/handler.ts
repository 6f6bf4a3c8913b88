/** Lambda entry point of the sidecarset-validate webhook (a Function URL). */
import { admissionLambda } from '../shared/admission-lambda.ts';
import { clusterSources } from '../shared/cluster.ts';

export const handler = await admissionLambda('sidecarset-validate', { cluster: clusterSources });
