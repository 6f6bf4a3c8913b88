/**
 * The SidecarSet CRD as installed: whose it is, which versions etcd holds
 * (`status.storedVersions`), which version it stores now, and whether reads
 * go through a conversion webhook. Kruise 1.8's CRD serves and stores
 * v1alpha1 only; Kruise 1.9's, like this project's, serves both versions,
 * stores v1beta1 and converts through a webhook (Kruise's manager's
 * `/convert`; this project's sidecarset-convert function). Objects stay in
 * the version they were written in until rewritten, and every read of
 * another version converts through the webhook (docs/MIGRATION.md).
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

/** Versions other than the storage version that etcd may still hold objects in: a read of those objects in the storage version converts through the webhook. */
export function olderStoredVersions(crd: CrdVersions): string[] {
  return crd.storedVersions.filter((v) => v !== crd.storage);
}
