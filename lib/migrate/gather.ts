/**
 * Reads what the preflight assesses, through read-only ports: a handful of
 * GETs, one list of the SidecarSets, one of their ControllerRevisions, one
 * pod list per distinct pod scope (as the reconciler lists a set's pods) and
 * namespace labels only when a set has a namespaceSelector.
 */
import type { JsonObject, Pod } from '../kube/types.ts';
import type { NamespaceSource, SetPodSource } from '../ports.ts';
import type { ControllerRevision } from '../sidecarset/revisions.ts';
import type { NamespaceLabels } from '../sidecarset/match.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { forEachLimited } from '../status-sync/concurrency.ts';
import { namespacesNeeded, podScopes, scopeKey } from '../status-view/rows.ts';
import type { MigrationSnapshot } from './assess.ts';
import { KRUISE_MANAGER_DEPLOYMENT } from './kruise-manager.ts';
import { KRUISE_MUTATING_CONFIGURATION, KRUISE_VALIDATING_CONFIGURATION, OUR_CONFIGURATION } from './webhook-entries.ts';

/** The preflight's reads. Every method only reads; an object that does not exist is undefined. */
export interface MigrationReads {
  deployment(namespace: string, name: string, signal?: AbortSignal): Promise<JsonObject | undefined>;
  webhookConfiguration(kind: 'mutating' | 'validating', name: string, signal?: AbortSignal): Promise<JsonObject | undefined>;
  sidecarSetCrd(signal?: AbortSignal): Promise<JsonObject | undefined>;
  /** Every SidecarSet (v1alpha1); none when the CRD is not installed. */
  sidecarSets(signal?: AbortSignal): Promise<SidecarSet[]>;
  /** Every ControllerRevision labelled kruise.io/sidecarset-name, in any namespace. */
  sidecarSetRevisions(signal?: AbortSignal): Promise<ControllerRevision[]>;
  pods: SetPodSource;
  namespaces: NamespaceSource;
}

const LIST_CONCURRENCY = 4;

export async function gatherSnapshot(reads: MigrationReads, where: { kruiseNamespace: string; revisionNamespace: string }, signal?: AbortSignal): Promise<MigrationSnapshot> {
  const [manager, kruiseMutating, kruiseValidating, ourMutating, ourValidating, crd] = await Promise.all([
    reads.deployment(where.kruiseNamespace, KRUISE_MANAGER_DEPLOYMENT, signal),
    reads.webhookConfiguration('mutating', KRUISE_MUTATING_CONFIGURATION, signal),
    reads.webhookConfiguration('validating', KRUISE_VALIDATING_CONFIGURATION, signal),
    reads.webhookConfiguration('mutating', OUR_CONFIGURATION, signal),
    reads.webhookConfiguration('validating', OUR_CONFIGURATION, signal),
    reads.sidecarSetCrd(signal),
  ]);
  const sets = crd === undefined ? [] : await reads.sidecarSets(signal);
  const revisions = await reads.sidecarSetRevisions(signal);
  const podsByScope = new Map<string, readonly Pod[]>();
  await forEachLimited(podScopes(sets), LIST_CONCURRENCY, async (scope) => {
    podsByScope.set(scopeKey(scope), (await reads.pods.list(scope, signal)).pods);
  });
  // Each pod once, however many scopes listed it.
  const pods = new Map<string, Pod>();
  for (const list of podsByScope.values()) for (const pod of list) pods.set(`${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`, pod);
  const needed = namespacesNeeded(sets, podsByScope);
  const namespaceLabels: NamespaceLabels = needed.length === 0 ? new Map() : await reads.namespaces.labels(needed, signal);
  return { ...where, manager, kruiseMutating, kruiseValidating, ourMutating, ourValidating, crd, sets, revisions, pods: [...pods.values()], namespaceLabels };
}
