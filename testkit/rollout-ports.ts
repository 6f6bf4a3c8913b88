/** The rollout's ports in memory for the pace and set-pass suites: revisions in an array, pod writes recorded in order. */
import { memoryNamespaceSource } from '../lib/adapters/memory.ts';
import { memoryEventSink, memoryStatusWriter } from '../lib/adapters/memory-status-sync.ts';
import type { Pod } from '../lib/kube/types.ts';
import type { PodWriter, RevisionStore, SetPodSource } from '../lib/ports.ts';
import type { ControllerRevision } from '../lib/rollout/revisions.ts';
import { rolloutStateNotices } from '../lib/status-sync/rollout-state.ts';
import type { SetPassDeps } from '../lib/status-sync/set-pass.ts';
import type { SidecarSet } from '../lib/sidecarset/types.ts';

/** Revisions kept in an array: enough for a set whose revision is registered once. */
export function memoryRevisionStore(): RevisionStore {
  const stored: ControllerRevision[] = [];
  return {
    namespace: 'kruise-system',
    get: (name) => Promise.resolve(stored.find((r) => r.metadata?.name === name)),
    list: (setName) => Promise.resolve(stored.filter((r) => r.metadata?.labels?.['kruise.io/sidecarset-name'] === setName)),
    listAll: () => Promise.resolve([...stored]),
    create: (revision) => {
      const created = { ...revision, metadata: { ...revision.metadata, resourceVersion: String(stored.length + 1) } };
      stored.push(created);
      return Promise.resolve(created);
    },
    setNumber: (revision, number) => Promise.resolve({ ...revision, revision: number }),
    patchLabels: () => Promise.resolve(),
    delete: () => Promise.resolve(),
  };
}

/** A pod writer that records each call (`patch ns/name` or `status ns/name`) and answers written. */
export function recordingPodWriter(): PodWriter & { readonly calls: string[] } {
  const calls: string[] = [];
  let version = 1000;
  const write = (kind: string, namespace: string, name: string) => {
    calls.push(`${kind} ${namespace}/${name}`);
    return Promise.resolve({ outcome: 'written' as const, resourceVersion: String(++version) });
  };
  return {
    calls,
    patch: (namespace: string, name: string) => write('patch', namespace, name),
    patchStatus: (namespace: string, name: string) => write('status', namespace, name),
  };
}

/** Deps for one set's passes over `pods` (listed as given, each list a new resourceVersion). */
export function memorySetPassDeps(set: SidecarSet, pods: readonly Pod[], changed: SetPodSource['changed'], writer: PodWriter = recordingPodWriter()): { deps: SetPassDeps; lists: () => number } {
  let lists = 0;
  const setPods: SetPodSource = {
    list: () => {
      lists++;
      return Promise.resolve({ pods, resourceVersion: String(100 + lists) });
    },
    changed,
  };
  const deps: SetPassDeps = {
    statuses: memoryStatusWriter([set]),
    events: memoryEventSink(),
    namespaces: memoryNamespaceSource([]),
    rollout: { revisions: memoryRevisionStore(), setPods, pods: writer, clock: { now: () => new Date('2026-11-30T12:00:00Z') }, states: rolloutStateNotices() },
  };
  return { deps, lists: () => lists };
}
