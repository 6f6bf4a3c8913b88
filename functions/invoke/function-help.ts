/**
 * What `invoke` says about each function the API server calls: one line for
 * `invoke --help`'s list, one sentence at the top of `invoke <function>
 * --help`. The CLI's words, so they live with the CLI; keyed by every
 * function's name, so a function without help fails the typecheck.
 */
import type { FunctionName } from '../../lib/webhooks/descriptors.ts';

export interface FunctionHelp {
  summary: string;
  about: string;
}

export const FUNCTION_HELP: Readonly<Record<FunctionName, FunctionHelp>> = {
  'sidecarset-default': {
    summary: 'default a SidecarSet as the mutating webhook does',
    about: 'Defaults a SidecarSet as the mutating webhook does (and computes its hashes).',
  },
  'sidecarset-validate': {
    summary: 'validate a SidecarSet as the validating webhook does',
    about: 'Validates a SidecarSet as the validating webhook does, against the sets and Namespaces given.',
  },
  'pod-inject': {
    summary: 'inject sidecars into a Pod as the pod webhook does',
    about: 'Injects the sidecars of the SidecarSets given into a Pod, as the pod webhook does on CREATE.',
  },
  'pod-change': {
    summary: 'answer a pod DELETE or pods/status UPDATE as the pod-change webhook does (allowed; it only triggers reconciles)',
    about: 'Answers a pod DELETE or pods/status UPDATE review as the pod-change webhook does: always allowed; on a deployment it also starts the reconciles of the sets injection recorded on the pod that select it today, against the sets and Namespaces given. (The same function answers the pod-eviction webhook\'s Eviction reviews on a deployment, reading the pod from the cluster; invoke does not wrap those.)',
  },
  'sidecarset-convert': {
    summary: 'convert a SidecarSet between v1alpha1 and v1beta1 as the CRD conversion webhook does',
    about: 'Converts SidecarSets between apps.kruise.io/v1alpha1 and v1beta1 as the CRD conversion webhook does: a ConversionReview, or a plain SidecarSet with --to.',
  },
};
