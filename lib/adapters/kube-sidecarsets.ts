/**
 * SidecarSets on the API server, for the reconciler and the rollout view:
 * the status write, a fresh read of one set, and the whole list with its
 * resourceVersion and a watch from it. Plain JSON (kube-request.ts), so the
 * plan sees the sets exactly as stored, in the version the cluster stores
 * (kube-sidecarsets-version.ts) and then in the internal model
 * (lib/conversion/internal-model.ts). (The webhooks' cached reads are
 * kube-sources.ts.)
 */
import { internalSidecarSet } from '../conversion/internal-model.ts';
import { objectOf } from '../kube/json.ts';
import type { SidecarSetStatusWriter, SidecarSetWatchSource } from '../ports.ts';
import { StatusConflictError } from '../ports/errors.ts';
import { GROUP, VERSION, type SidecarSet } from '../sidecarset/types.ts';
import { apiServerAnswered, KubeApiError } from './kube-api-error.ts';
import { getObject, MERGE_PATCH, type KubeClient } from './kube-request.ts';
import { fixedSidecarSetVersion, SIDECARSET_PLURAL, sidecarSetsPath, type SidecarSetVersions } from './kube-sidecarsets-version.ts';
import { watchForChange } from './kube-watch.ts';
import { listAll, type ListAllResult } from './kube-paged-list.ts';
import { PAGE_TARGET_BYTES } from './pod-page-size.ts';
import { MAX_SIDECARSET_SPEC_BYTES } from '../sidecarset/validate-size.ts';

export { SIDECARSET_PLURAL } from './kube-sidecarsets-version.ts';
/** Where the v1alpha1 SidecarSets are served: the one version every SidecarSet CRD serves (Kruise 1.8's and 1.9's). */
export const SIDECARSETS_PATH = sidecarSetsPath(VERSION);
/** The list, as errors and logs name it. */
export const LIST_SIDECARSETS = 'list SidecarSets';
export const getSidecarSetOperation = (name: string): string => `get SidecarSet "${name}"`;

/** What a 404 on the SidecarSet list means, and what to do about it. */
// Not `kubectl apply -f infra/k8s/crd.yaml`: that file is too large for client-side apply and names a placeholder conversion URL.
export const NO_SIDECARSET_CRD = `the API server has no SidecarSets (${SIDECARSET_PLURAL}.${GROUP}): the SidecarSet CRD is not installed in this cluster (npm run manifests renders it; apply it with kubectl apply --server-side)`;

/**
 * SidecarSets asked for per page. A cluster's few dozen sets of a few
 * kilobytes come in one page; the page's bytes, not this count, are what is
 * bounded (pod-page-size.ts: a page past 16 MiB is asked for again smaller,
 * and the next pages are sized from the last one), so sets of a megabyte
 * each are read a few per page.
 */
export const SIDECARSET_PAGE_SIZE = 100;

/**
 * The sets the first page of the whole list asks for: as many of the
 * largest sets validation admits (lib/sidecarset/validate-size.ts) as fit
 * the page target, 4. Later pages are planned from the bytes per set of the
 * page before (a cluster of small sets reads 100 a page from the second
 * page on, the second asked for as soon as the first one's head arrives).
 * Asking 100 blind made a cold pod-inject among megabyte sets read 16 MiB,
 * throw it away at the page cap and ask again for 12 MiB, which a loaded
 * API server did not send within the 5 s a call may take (docs/RELIABILITY.md).
 * The metadata list's items are small whatever the sets: it asks 100 at once.
 */
export const FIRST_SIDECARSET_PAGE_SIZE = Math.max(1, Math.floor(PAGE_TARGET_BYTES / MAX_SIDECARSET_SPEC_BYTES));

/**
 * A listed set as the functions keep it: in the internal model, without
 * `metadata.managedFields` (the API server's record of who wrote which
 * field, as large as the spec's shape, read by nothing here). Everything
 * else stays: injection reads the spec, the hash annotations, the labels and
 * status.latestRevision, and the reconciler copies the labels and
 * annotations into ControllerRevisions as Kruise does.
 */
export function keptSidecarSet(item: Record<string, unknown>): SidecarSet {
  const metadata = objectOf(item.metadata);
  if (metadata === undefined || !('managedFields' in metadata)) return internalSidecarSet(item);
  const kept = { ...metadata };
  delete kept.managedFields;
  return internalSidecarSet({ ...item, metadata: kept });
}

/**
 * Every SidecarSet, read in pages whose bytes are bounded (kube-paged-list.ts)
 * and cut into items as they arrive, each reduced by `keep` at once: what
 * is held is what `keep` returned for the sets so far and one page in
 * flight, never a whole list's text (a single answer of 40 sets of a
 * megabyte would pass the client's 32 MiB answer cap). The first page is a
 * consistent read, and the others continue its snapshot. `accept` asks for
 * another form (the metadata list). A 404 makes `versions` ask again.
 * @throws KubeApiError (404: no SidecarSet CRD), ListExpiredError after repeated expired continue tokens.
 */
export async function listSidecarSets<T>(client: KubeClient, versions: SidecarSetVersions, signal: AbortSignal | undefined, keep: (item: Record<string, unknown>) => T, accept?: string): Promise<ListAllResult<T>> {
  try {
    return await listAll(client, sidecarSetsPath(await versions.current(signal)), {}, LIST_SIDECARSETS, signal, { maxPageSize: SIDECARSET_PAGE_SIZE, ...(accept === undefined ? { firstPageSize: FIRST_SIDECARSET_PAGE_SIZE } : { accept }) }, keep);
  } catch (error) {
    if (error instanceof KubeApiError && error.code === 404) versions.forget();
    throw error;
  }
}

/** The path of one set in `version`. */
export const sidecarSetPath = (version: string, name: string): string => `/apis/${GROUP}/${version}/${SIDECARSET_PLURAL}/${encodeURIComponent(name)}`;

/**
 * Status writes as merge patches of the `status` subresource (wire.md), to
 * the version the sets are read in (the status is the same in both). The
 * patch carries `metadata.resourceVersion`, which the API server treats as a
 * precondition: a set changed since it was read answers 409 instead of being
 * overwritten. Sent once (not `guarded`): the reconcile decides again after a
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
      try {
        const { items, resourceVersion } = await listSidecarSets(client, versions, signal, keptSidecarSet);
        return { sets: items, resourceVersion };
      } catch (error) {
        // A missing resource answers 404 with a bare "page not found" Status: say what is missing instead.
        if (error instanceof KubeApiError && error.code === 404) throw new KubeApiError(LIST_SIDECARSETS, NO_SIDECARSET_CRD, 404, { cause: error });
        throw error;
      }
    },
    async changed(resourceVersion, waitMs, signal) {
      return watchForChange(client, sidecarSetsPath(await versions.current(signal)), {}, resourceVersion, new Set(), waitMs, signal);
    },
  };
}
