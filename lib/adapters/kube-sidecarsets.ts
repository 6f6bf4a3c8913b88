/**
 * SidecarSets on the API server, for the reconciler and the rollout view:
 * the status write, a fresh read of one set, and the whole list with its
 * resourceVersion and a watch from it. Plain JSON (kube-request.ts), so the
 * plan sees the sets exactly as stored, in the version the cluster stores
 * (kube-sidecarsets-version.ts) and then in the internal model
 * (lib/conversion/internal-model.ts). (The webhooks' cached reads are
 * kube-sources.ts.)
 */
import { internalSidecarSet, internalSidecarSets } from '../conversion/internal-model.ts';
import { isObject, objectOf, stringOf } from '../kube/json.ts';
import type { SidecarSetStatusWriter, SidecarSetWatchSource } from '../ports.ts';
import { StatusConflictError } from '../ports/errors.ts';
import { GROUP, VERSION, type SidecarSet } from '../sidecarset/types.ts';
import { apiServerAnswered, KubeApiError } from './kube-api-error.ts';
import { getObject, MERGE_PATCH, type KubeClient } from './kube-request.ts';
import { fixedSidecarSetVersion, SIDECARSET_PLURAL, sidecarSetsPath, type SidecarSetVersions } from './kube-sidecarsets-version.ts';
import { watchForChange } from './kube-watch.ts';

export { SIDECARSET_PLURAL } from './kube-sidecarsets-version.ts';
/** Where the v1alpha1 SidecarSets are served: the one version every SidecarSet CRD serves (Kruise 1.8's and 1.9's). */
export const SIDECARSETS_PATH = sidecarSetsPath(VERSION);
/** The list, as errors and logs name it. */
export const LIST_SIDECARSETS = 'list SidecarSets';
export const getSidecarSetOperation = (name: string): string => `get SidecarSet "${name}"`;

/** What a 404 on the SidecarSet list means, and what to do about it. */
// Not `kubectl apply -f infra/k8s/crd.yaml`: that file is too large for client-side apply and names a placeholder conversion URL.
export const NO_SIDECARSET_CRD = `the API server has no SidecarSets (${SIDECARSET_PLURAL}.${GROUP}): the SidecarSet CRD is not installed in this cluster (npm run manifests renders it; apply it with kubectl apply --server-side)`;

/** The path of one set in `version`. */
export const sidecarSetPath = (version: string, name: string): string => `/apis/${GROUP}/${version}/${SIDECARSET_PLURAL}/${encodeURIComponent(name)}`;

/**
 * Status writes as merge patches of the `status` subresource (wire.md), to
 * the version the sets are read in (the status is the same in both). The
 * patch carries `metadata.resourceVersion`, which the API server treats as a
 * precondition: a set changed since it was read answers 409 instead of being
 * overwritten. Sent once (not `guarded`): the pass decides again after a
 * failure, from a fresh read.
 */
export function kubeStatusWriter(client: KubeClient, versions: SidecarSetVersions = fixedSidecarSetVersion(VERSION)): SidecarSetStatusWriter {
  return {
    async patchStatus(name, resourceVersion, status, signal) {
      const operation = `patch status of SidecarSet "${name}"`;
      const body = { ...(resourceVersion !== undefined ? { metadata: { resourceVersion } } : {}), status };
      const path = `${sidecarSetPath(await versions.current(signal), name)}/status`;
      const answer = await client.request({ method: 'PATCH', path, operation, body, contentType: MERGE_PATCH, ...(signal === undefined ? {} : { signal }) });
      if (answer.status === 409) throw new StatusConflictError(name, `SidecarSet "${name}" changed since resourceVersion ${resourceVersion ?? '(none)'}`, { cause: apiServerAnswered(operation, 409, answer.body) });
      if (answer.status === 404) return 'gone';
      if (answer.status < 200 || answer.status > 299) throw apiServerAnswered(operation, answer.status, answer.body);
      return 'written';
    },
    async get(name, signal) {
      const set = await getObject(client, sidecarSetPath(await versions.current(signal), name), getSidecarSetOperation(name), signal);
      return set === undefined ? undefined : internalSidecarSet(set);
    },
  };
}

/** The rollout view's SidecarSet reads (`npm run -s status`): the whole list with its resourceVersion, and a watch from it. */
export function kubeSidecarSetWatch(client: KubeClient, versions: SidecarSetVersions = fixedSidecarSetVersion(VERSION)): SidecarSetWatchSource {
  return {
    async list(signal) {
      const answer = await client.request({ method: 'GET', path: sidecarSetsPath(await versions.current(signal)), operation: LIST_SIDECARSETS, ...(signal === undefined ? {} : { signal }) });
      // A missing resource answers 404 with a bare "page not found" Status: say what is missing instead.
      if (answer.status === 404) {
        versions.forget();
        throw new KubeApiError(LIST_SIDECARSETS, NO_SIDECARSET_CRD, 404);
      }
      if (answer.status !== 200) throw apiServerAnswered(LIST_SIDECARSETS, answer.status, answer.body);
      const body = objectOf(answer.body);
      if (body === undefined || !Array.isArray(body.items)) throw new KubeApiError(LIST_SIDECARSETS, 'the answer is not a list (no items array)', answer.status);
      const sets: SidecarSet[] = [...internalSidecarSets(body.items.filter(isObject))];
      return { sets, resourceVersion: stringOf(objectOf(body.metadata)?.resourceVersion) ?? '' };
    },
    async changed(resourceVersion, waitMs, signal) {
      return watchForChange(client, sidecarSetsPath(await versions.current(signal)), {}, resourceVersion, new Set(), waitMs, signal);
    },
  };
}
