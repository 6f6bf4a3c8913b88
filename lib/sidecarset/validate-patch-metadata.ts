/**
 * Rule 11 of the SidecarSet validation: the annotations a set writes onto the
 * pods it injects.
 *
 * Kruise also checks keys against a whitelist from its own configuration
 * (the SidecarSet_PatchPodMetadata_WhiteList ConfigMap); this project has no
 * such configuration, so any valid key is accepted.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { isObject } from '../kube/json.ts';
import { qualifiedNameErrors } from '../kube/names.ts';
import type { JsonObject } from '../kube/types.ts';
import {isUnset, stringMapAt, forEachObjectAt } from './validate-shape.ts';
import { INJECTION_ANNOTATIONS } from './pod-annotations.ts';
import { PATCH_POLICIES } from './types.ts';

/** Rule 11 for `spec` at `path`. */
export function validatePatchPodMetadata(spec: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const listPath = path.child('patchPodMetadata');
  // annotation key -> index of the entry that first wrote it
  const firstEntry = new Map<string, number>();
  forEachObjectAt(spec.patchPodMetadata, listPath, errs, (entry, p, i) => {
    const policyPath = p.child('patchPolicy');
    if (isUnset(entry.patchPolicy) || entry.patchPolicy === '') {
      errs.push(policyPath.required('no patchPolicy defined for patchPodMetadata'));
    } else if (!(PATCH_POLICIES as readonly unknown[]).includes(entry.patchPolicy)) {
      errs.push(policyPath.unsupported(entry.patchPolicy, PATCH_POLICIES));
    }

    const annPath = p.child('annotations');
    if (isUnset(entry.annotations) || (isObject(entry.annotations) && Object.keys(entry.annotations).length === 0)) {
      errs.push(annPath.required('no annotations defined for SidecarSet'));
      return;
    }
    const annotations = stringMapAt(entry.annotations, annPath, errs) ?? {};
    for (const key of Object.keys(annotations)) {
      // Annotation keys are case-insensitive to Kubernetes' validation (ValidateAnnotations lower-cases them).
      for (const msg of qualifiedNameErrors(key.toLowerCase())) errs.push(annPath.invalid(key, msg));
      // Injection writes these itself, from what it parses back: a set writing
      // them too would refuse every pod it selects, or make a reinvocation do so.
      if (INJECTION_ANNOTATIONS.includes(key)) errs.push(annPath.key(key).forbidden(`${key} is written by the injection itself`));
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
}
