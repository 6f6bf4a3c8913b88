/**
 * Reading every SidecarSet fresh for each review without moving every set
 * each time: the API server lists them as metadata only
 * (PartialObjectMetadataList), whose resourceVersions say which sets changed
 * since the last read; only those are fetched, by name. Pure logic: what to
 * fetch, and the list it gives. The I/O is in kube-sources.ts.
 *
 * Why it is right: a resourceVersion names one stored version of an object,
 * so a set whose resourceVersion is the one already held is that object, byte
 * for byte; a set fetched by name is at least as new as the metadata list.
 * The metadata list is a consistent read, so the result holds every write
 * that returned before the list started. Which earlier snapshot is the base
 * does not matter for correctness, only for how much is fetched.
 */
import { RESOURCE_VERSION_COLUMN } from '../crd/sidecarset-crd.ts';
import { isObject } from '../kube/json.ts';
import type { SidecarSet } from '../sidecarset/types.ts';

/** The Accept header that asks the API server for a list's metadata only. */
export const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

/**
 * The Accept header that asks for a list as a Table (its printer columns'
 * cells per object); with `includeObject=None` a row carries no object, so
 * its size does not depend on the set's metadata, which the metadata list
 * carries whole (labels, annotations and managedFields).
 */
export const TABLE_ACCEPT = 'application/json;as=Table;g=meta.k8s.io;v=v1';

/**
 * Above this many changed sets, one full list is read instead of a GET each:
 * a GET of one set costs about a fifth of a full list of 50
 * (scripts/bench/freshness.ts).
 */
export const MAX_FETCHED_BY_NAME = 4;

/** One set as the metadata list names it. */
export interface ListedVersion {
  name: string;
  resourceVersion: string;
}

/**
 * The names and resourceVersions of a PartialObjectMetadataList; undefined
 * when the answer is not one (a server or proxy that ignored the `as=`
 * parameter sends the full list) or an item lacks either, so that the caller
 * reads the full list instead of guessing.
 */
export function listedVersions(body: unknown): ListedVersion[] | undefined {
  if (!isObject(body) || body.kind !== 'PartialObjectMetadataList' || !Array.isArray(body.items)) return undefined;
  const out: ListedVersion[] = [];
  for (const item of body.items as unknown[]) {
    const metadata = isObject(item) ? item.metadata : undefined;
    if (!isObject(metadata) || typeof metadata.name !== 'string' || typeof metadata.resourceVersion !== 'string') return undefined;
    if (metadata.name === '' || metadata.resourceVersion === '') return undefined;
    out.push({ name: metadata.name, resourceVersion: metadata.resourceVersion });
  }
  return out;
}

/**
 * The names and resourceVersions of a Table of SidecarSets whose CRD has the
 * resourceVersion column (lib/crd/sidecarset-crd.ts); undefined when it is
 * not such a Table (the CRD is another one, OpenKruise's for instance, or a
 * server sent the full list) or a row lacks either, so that the caller reads
 * the metadata list instead of guessing.
 */
export function tableVersions(body: unknown): ListedVersion[] | undefined {
  if (!isObject(body) || body.kind !== 'Table' || !Array.isArray(body.columnDefinitions) || !Array.isArray(body.rows)) return undefined;
  const columns: unknown[] = body.columnDefinitions;
  // The API server's first column of a custom resource's Table is its name (format "name").
  const nameAt = columns.findIndex((column) => isObject(column) && column.format === 'name');
  const versionAt = columns.findIndex((column) => isObject(column) && column.name === RESOURCE_VERSION_COLUMN.name && column.description === RESOURCE_VERSION_COLUMN.description);
  if (nameAt < 0 || versionAt < 0) return undefined;
  const out: ListedVersion[] = [];
  for (const row of body.rows as unknown[]) {
    const cells = isObject(row) && Array.isArray(row.cells) ? (row.cells as unknown[]) : undefined;
    const name = cells?.[nameAt];
    const resourceVersion = cells?.[versionAt];
    if (typeof name !== 'string' || typeof resourceVersion !== 'string' || name === '' || resourceVersion === '') return undefined;
    out.push({ name, resourceVersion });
  }
  return out;
}

/** The sets of a snapshot by name, for the next comparison. */
export type SnapshotIndex = ReadonlyMap<string, SidecarSet>;

export function indexSnapshot(sets: readonly SidecarSet[]): SnapshotIndex {
  const index = new Map<string, SidecarSet>();
  for (const set of sets) {
    const name = set.metadata?.name;
    if (typeof name === 'string' && name !== '') index.set(name, set);
  }
  return index;
}

/** What a metadata list asks for: a full list, or the names to fetch (possibly none). */
export type DeltaPlan = { kind: 'full' } | { kind: 'fetch'; names: string[] };

/** Compares the listed versions with the snapshot held: a set is reused only when its resourceVersion is the same. */
export function planDelta(listed: readonly ListedVersion[], held: SnapshotIndex): DeltaPlan {
  const names = listed.filter((entry) => held.get(entry.name)?.metadata?.resourceVersion !== entry.resourceVersion).map((entry) => entry.name);
  return names.length > MAX_FETCHED_BY_NAME ? { kind: 'full' } : { kind: 'fetch', names };
}

/**
 * The sets in the order listed: held ones where unchanged, fetched ones where
 * changed. A changed set that could not be found any more (deleted since the
 * list) is left out, as a list read a moment later would.
 */
export function applyDelta(listed: readonly ListedVersion[], held: SnapshotIndex, fetched: ReadonlyMap<string, SidecarSet | undefined>): SidecarSet[] {
  const out: SidecarSet[] = [];
  for (const { name } of listed) {
    const set = fetched.has(name) ? fetched.get(name) : held.get(name);
    if (set !== undefined) out.push(set);
  }
  return out;
}
