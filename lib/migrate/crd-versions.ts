/**
 * The SidecarSet CRD as installed: whose it is, which versions etcd holds
 * (`status.storedVersions`), which version it stores now, and whether reads
 * go through a conversion webhook. Kruise 1.8's CRD serves and stores
 * v1alpha1 only, as this project's does; Kruise 1.9's stores v1beta1 and
 * converts through Kruise's manager (`/convert`), so objects written under
 * 1.9 cannot be read through a v1alpha1-only CRD until they are rewritten
 * as v1alpha1 and v1beta1 is dropped from storedVersions (docs/MIGRATION.md).
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';

export const SIDECARSET_CRD = 'sidecarsets.apps.kruise.io';
const OUR_LABEL = ['app.kubernetes.io/part-of', 'serverless-sidecarset'] as const;

export interface CrdVersions {
  /** This project's CRD (labelled part-of serverless-sidecarset), not Kruise's. */
  ours: boolean;
  served: string[];
  storage: string | undefined;
  /** `status.storedVersions`: every version objects may be stored in. */
  storedVersions: string[];
  /** `spec.conversion.strategy` is Webhook: reads in another version call Kruise's manager. */
  conversionWebhook: boolean;
}

export function crdVersionsOf(crd: JsonObject): CrdVersions {
  const versions = arrayOf(objectOf(crd.spec)?.versions).filter(isObject);
  const labels = objectOf(objectOf(crd.metadata)?.labels);
  return {
    ours: labels?.[OUR_LABEL[0]] === OUR_LABEL[1],
    served: versions.filter((v) => v.served === true).map((v) => stringOf(v.name) ?? ''),
    storage: versions.filter((v) => v.storage === true).map((v) => stringOf(v.name))[0],
    storedVersions: arrayOf(objectOf(crd.status)?.storedVersions).filter((v): v is string => typeof v === 'string'),
    conversionWebhook: objectOf(objectOf(crd.spec)?.conversion)?.strategy === 'Webhook',
  };
}

/** Versions other than v1alpha1 that etcd may still hold objects in: this project's CRD cannot replace the installed one while any is listed. */
export function foreignStoredVersions(crd: CrdVersions): string[] {
  return crd.storedVersions.filter((v) => v !== 'v1alpha1');
}
