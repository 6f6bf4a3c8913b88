/**
 * Each Lambda function's entry module, relative to the project root: what
 * scripts/bundle.ts bundles into dist/<name>/index.mjs. Kept here, beside the
 * entry points, rather than in the descriptors of lib/, which say what a
 * function does and not where its packaging starts. A record keyed by every
 * function's name: one missing here fails the typecheck.
 */
import type { FunctionName } from '../lib/webhooks/descriptors.ts';

export type LambdaFunctionName = FunctionName | 'status-sync';

export const LAMBDA_ENTRY_POINTS: Readonly<Record<LambdaFunctionName, string>> = {
  'sidecarset-default': 'functions/sidecarset-default/handler.ts',
  'sidecarset-validate': 'functions/sidecarset-validate/handler.ts',
  'pod-inject': 'functions/pod-inject/handler.ts',
  'pod-change': 'functions/pod-change/handler.ts',
  'sidecarset-convert': 'functions/sidecarset-convert/handler.ts',
  'status-sync': 'functions/status-sync/handler.ts',
};
