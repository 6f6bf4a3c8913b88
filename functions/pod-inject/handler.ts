/** Lambda entry point of the pod-inject webhook (a Function URL). */
import { admissionLambda } from '../shared/admission-lambda.ts';
import { clusterSources } from '../shared/cluster.ts';

export const handler = await admissionLambda('pod-inject', { cluster: clusterSources });
