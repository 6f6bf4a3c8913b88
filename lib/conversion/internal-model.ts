/**
 * The project's one model of a SidecarSet, whichever version the cluster
 * stores it as.
 *
 * The rules (lib/sidecarset/), the rollout (lib/rollout/) and the
 * reconciler (lib/status-sync/) read a SidecarSet in one shape, the
 * v1alpha1 shape they were written for: a v1beta1 set is converted to it
 * where it enters (the adapters that read sets, the webhooks that are sent
 * one), with the same conversion the CRD's conversion webhook uses
 * (sidecarset-conversion.ts), so nothing repeats the mapping. The shape is
 * exact for every field those readers look at: v1beta1's
 * `namespaceSelector` is v1alpha1's, `customVersion` is the custom-version
 * label, everything else is field for field (the spec's containers, which
 * the hashes and revisions print, are copied untouched).
 *
 * Writes never send this shape back: a status patch carries only `status`
 * (the same in both versions) and goes to the version it was read from
 * (lib/adapters/kube-sidecarsets-version.ts), and a webhook answers in the
 * version it was sent.
 */
import { isObject } from '../kube/json.ts';
import { convertSidecarSet, sidecarSetVersionOf, type SidecarSetVersion } from './sidecarset-conversion.ts';

/** The version of the internal model. */
export const INTERNAL_VERSION: SidecarSetVersion = 'v1alpha1';

/**
 * `object` in the internal model: a v1beta1 SidecarSet converted to the
 * v1alpha1 shape, anything else returned as it is (the same object). An
 * object that cannot be converted (not a SidecarSet's shape: only a file
 * given to `invoke` can be one, the API server's schema refuses them) is
 * returned as it is too, for the validation to name what is wrong with it.
 */
export function internalSidecarSet<T>(object: T): T {
  if (!isObject(object) || sidecarSetVersionOf(object.apiVersion) !== 'v1beta1') return object;
  const converted = convertSidecarSet(object, INTERNAL_VERSION);
  return converted.ok ? (converted.object as T) : object;
}

/** Every item of a list in the internal model; the same array when none needed converting. */
export function internalSidecarSets<T>(objects: readonly T[]): readonly T[] {
  const out = objects.map((object) => internalSidecarSet(object));
  return out.some((internal, i) => internal !== objects[i]) ? out : objects;
}
