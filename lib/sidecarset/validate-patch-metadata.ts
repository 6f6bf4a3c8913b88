/**
 * Rule 11 of the SidecarSet validation: the annotations a set writes onto the
 * pods it injects.
 *
 * Each entry's annotations must be what a pod may carry (Kubernetes'
 * ValidateAnnotations: qualified-name keys, at most 256 KiB of keys and
 * values), and all entries together too: Kruise checks neither, so a set
 * breaking them is stored and every pod it selects is then refused by the
 * API server. A MergePatchJson value must be a JSON object, the only patch
 * that merges; anything else would be refused at injection instead.
 *
 * Nor may it write the bookkeeping annotations injection and the rollout
 * keep on each pod (the three hash and list annotations, the in-place
 * update state, the HotUpgrade working container and the per-container
 * `version.sidecarset.kruise.io/*` and `versionalt.sidecarset.kruise.io/*`):
 * a set writing them would steer another set's rollout (mark its pods
 * updated, switch the working container, wedge a pod as updating). Kruise
 * refuses only what its whitelist leaves out, so a permissive whitelist lets
 * them through; here they are refused by name.
 *
 * Kruise also checks keys against a whitelist from its own configuration
 * (the SidecarSet_PatchPodMetadata_WhiteList ConfigMap); this project has no
 * such configuration, so any valid key is accepted.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { isObject } from '../kube/json.ts';
import { qualifiedNameErrors } from '../kube/names.ts';
import type { JsonObject } from '../kube/types.ts';
import { isUnset, stringMapAt, forEachObjectAt } from './validate-shape.ts';
import { ANNOTATION_INPLACE_UPDATE_STATE, ANNOTATION_WORKING_HOTUPGRADE } from './pod-state.ts';
import { versionAltAnnotation, versionAnnotation } from './hot-upgrade.ts';
import { INJECTION_ANNOTATIONS } from './pod-annotations.ts';
import { PATCH_POLICIES } from './types.ts';

/** Kubernetes' TotalAnnotationSizeLimitB: the sum of the keys' and values' lengths in bytes. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

function annotationBytes(annotations: Readonly<Record<string, string>>): number {
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) total += Buffer.byteLength(k) + Buffer.byteLength(v);
  return total;
}

/** The rollout's own per-pod annotations, and the prefixes of its per-container ones. */
const ROLLOUT_ANNOTATIONS: readonly string[] = [ANNOTATION_INPLACE_UPDATE_STATE, ANNOTATION_WORKING_HOTUPGRADE];
const ROLLOUT_ANNOTATION_PREFIXES: readonly string[] = [versionAnnotation(''), versionAltAnnotation('')];

/** Why `patchPodMetadata` may not write `key`, or undefined when it may. */
export function bookkeepingAnnotationReason(key: string): string | undefined {
  if (INJECTION_ANNOTATIONS.includes(key)) return `${key} is written by the injection itself`;
  if (ROLLOUT_ANNOTATIONS.includes(key) || ROLLOUT_ANNOTATION_PREFIXES.some((prefix) => key.startsWith(prefix))) {
    return `${key} is the rollout's own bookkeeping (a SidecarSet writing it would steer the rollout of the pods it selects)`;
  }
  return undefined;
}

function isJsonObjectText(text: string): boolean {
  try {
    return isObject(JSON.parse(text));
  } catch {
    return false;
  }
}

function validatePatchPolicy(policy: unknown, policyPath: FieldPath, errs: FieldError[]): void {
  if (isUnset(policy) || policy === '') errs.push(policyPath.required('no patchPolicy defined for patchPodMetadata'));
  else if (!(PATCH_POLICIES as readonly unknown[]).includes(policy)) errs.push(policyPath.unsupported(policy, PATCH_POLICIES));
}

/** One annotation of an entry: its key's syntax, not one injection writes itself, and a JSON object for MergePatchJson. */
function validatePatchAnnotation(key: string, value: string, policy: unknown, annPath: FieldPath, errs: FieldError[]): void {
  // Annotation keys are case-insensitive to Kubernetes' validation (ValidateAnnotations lower-cases them).
  for (const msg of qualifiedNameErrors(key.toLowerCase())) errs.push(annPath.invalid(key, msg));
  // A set writing injection's own bookkeeping would refuse every pod it selects, or steer the rollout's pods.
  const reserved = bookkeepingAnnotationReason(key);
  if (reserved !== undefined) errs.push(annPath.key(key).forbidden(reserved));
  if (policy === 'MergePatchJson' && !isJsonObjectText(value)) errs.push(annPath.key(key).invalid(value, 'must be a JSON object for patchPolicy MergePatchJson'));
}

/** Rule 11 for `spec` at `path`. */
export function validatePatchPodMetadata(spec: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const listPath = path.child('patchPodMetadata');
  // annotation key -> index of the entry that first wrote it
  const firstEntry = new Map<string, number>();
  // bytes of each entry's annotations
  const entryBytes: number[] = [];
  forEachObjectAt(spec.patchPodMetadata, listPath, errs, (entry, p, i) => {
    validatePatchPolicy(entry.patchPolicy, p.child('patchPolicy'), errs);
    const annPath = p.child('annotations');
    if (isUnset(entry.annotations) || (isObject(entry.annotations) && Object.keys(entry.annotations).length === 0)) {
      errs.push(annPath.required('no annotations defined for SidecarSet'));
      return;
    }
    const annotations = stringMapAt(entry.annotations, annPath, errs) ?? {};
    const bytes = annotationBytes(annotations);
    entryBytes.push(bytes);
    if (bytes > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) errs.push(annPath.tooLong("", TOTAL_ANNOTATION_SIZE_LIMIT_BYTES));
    for (const [key, value] of Object.entries(annotations)) {
      validatePatchAnnotation(key, value, entry.patchPolicy, annPath, errs);
      const first = firstEntry.get(key);
      if (first === undefined) {
        firstEntry.set(key, i);
      } else {
        errs.push({
          ...annPath.key(key).duplicate(key),
          detail: `patch annotation[${key}] already exist in spec.patchPodMetadata[${first}]`,
        });
      }
    }
  });
  // One entry over the limit was reported at that entry.
  const totalBytes = entryBytes.reduce((a, b) => a + b, 0);
  if (entryBytes.every((b) => b <= TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) && totalBytes > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) {
    const error = listPath.tooLong("", TOTAL_ANNOTATION_SIZE_LIMIT_BYTES);
    errs.push({ ...error, detail: `${error.detail ?? ''}: the annotations of all entries together are ${totalBytes} bytes` });
  }
}

/** A key in the kubernetes.io or k8s.io domains (or a subdomain of them), which Kubernetes components read. */
const SYSTEM_DOMAIN_KEY = /^([^/]*\.)?(kubernetes\.io|k8s\.io)\//;

/**
 * Warnings for a set that is valid but whose patchPodMetadata writes a
 * kubernetes.io or k8s.io annotation: injection writes it, but the
 * reconciler's pod policy (infra/k8s/rbac.yaml,
 * sidecarset-status-sync-pod-writes) refuses any change to such a key, so a
 * rollout that changes its value cannot reach the pods in place: each such
 * pod is refused (its update is reported in a Warning Event) until it is
 * recreated. Said when the set is stored, not when its first rollout stalls.
 */
export function patchPodMetadataWarnings(spec: unknown): string[] {
  if (!isObject(spec) || !Array.isArray(spec.patchPodMetadata)) return [];
  const warnings: string[] = [];
  for (const entry of spec.patchPodMetadata as unknown[]) {
    const annotations = isObject(entry) && isObject(entry.annotations) ? entry.annotations : {};
    for (const key of Object.keys(annotations)) {
      // Warnings are cut at 120 characters (responses.ts): the key first, then why.
      if (SYSTEM_DOMAIN_KEY.test(key.toLowerCase())) warnings.push(`${key}: a kubernetes.io/k8s.io key; rollouts never change it in running pods`);
    }
  }
  return warnings;
}
