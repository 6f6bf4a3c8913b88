/** Lambda entry point of the pod-change webhook (a Function URL): it reads the sets (to trigger only those that select the pod), and only triggers reconciles. */
import { admissionLambda } from '../shared/admission-lambda.ts';
import { clusterSources } from '../shared/cluster.ts';

export const handler = await admissionLambda('pod-change', { cluster: clusterSources });
