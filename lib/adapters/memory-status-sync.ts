/**
 * The status reconciler's ports over objects in memory: the invoke command's
 * files, and tests. The status writer behaves as the API server does for the
 * parts a resync relies on: it keeps the sets, bumps resourceVersion on every
 * write and refuses a write made against an older one.
 */
import { cloneJson, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import type { PodEvent, PodEventSink, PodPages, SidecarSetEvent, SidecarSetEventSink, SidecarSetStatusWriter } from '../ports.ts';
import { sidecarSetName } from '../sidecarset/match.ts';
import { summarizePod } from '../sidecarset/status.ts';
import type { SidecarSet, SidecarSetStatus } from '../sidecarset/types.ts';
import { StatusConflictError } from '../ports/errors.ts';
import { ANNOTATION_STALL_KEY, type RecordedStalls } from '../status-sync/rollout-state.ts';

/** The pods, summarised one page at a time as the live list does. */
export function memoryPodPages(pods: readonly Pod[], pageSize = 500): PodPages {
  return {
    async *pages() {
      for (let start = 0; start < pods.length; start += pageSize) {
        // A turn of the event loop per page, as pages from the API server arrive.
        await Promise.resolve();
        yield pods.slice(start, start + pageSize).map(summarizePod);
      }
    },
  };
}

/** A status write the memory writer accepted. */
export interface RecordedWrite {
  name: string;
  status: SidecarSetStatus;
}

export interface MemoryStatusWriter extends SidecarSetStatusWriter {
  /** Every accepted write, in order. */
  readonly writes: readonly RecordedWrite[];
  /** The sets as they are now (copies). */
  sets(): SidecarSet[];
}

/** A status writer over copies of `sets`. */
export function memoryStatusWriter(sets: readonly SidecarSet[]): MemoryStatusWriter {
  const stored = new Map(sets.map((set) => [sidecarSetName(set), cloneJson(set)] as const));
  const writes: RecordedWrite[] = [];
  // Opaque to clients, as on a real API server; only a change matters.
  let version = 0;
  return {
    writes,
    sets: () => [...stored.values()].map((set) => cloneJson(set)),
    patchStatus(name, resourceVersion, status) {
      const set = stored.get(name);
      if (set === undefined) return Promise.resolve('gone');
      const current = stringOf(set.metadata?.resourceVersion);
      if (resourceVersion !== undefined && current !== undefined && resourceVersion !== current) {
        return Promise.reject(new StatusConflictError(name, `SidecarSet "${name}" is at resourceVersion ${current}, not ${resourceVersion}`));
      }
      set.status = { ...set.status, ...cloneJson(status) };
      if (current !== undefined) set.metadata = { ...set.metadata, resourceVersion: `${current}.${++version}` };
      writes.push({ name, status: cloneJson(status) });
      return Promise.resolve('written');
    },
    get(name) {
      const set = stored.get(name);
      return Promise.resolve(set === undefined ? undefined : cloneJson(set));
    },
  };
}


/** A sink that keeps every event it is given, in order. */
function keepingSink<T>(): { readonly events: readonly T[]; record(event: T): Promise<void> } {
  const events: T[] = [];
  return {
    events,
    record(event) {
      events.push(event);
      return Promise.resolve();
    },
  };
}

/** Keeps every event recorded. */
export function memoryEventSink(): SidecarSetEventSink & { readonly events: readonly SidecarSetEvent[] } {
  return keepingSink<SidecarSetEvent>();
}

/** Keeps every pod event recorded. */
export function memoryPodEventSink(): PodEventSink & { readonly events: readonly PodEvent[] } {
  return keepingSink<PodEvent>();
}

/** The stalls recorded among `events` (recorded by any number of processes), read as kubeRecordedStalls reads the stored Events. */
export function memoryRecordedStalls(sink: { readonly events: readonly SidecarSetEvent[] }): RecordedStalls {
  return () => {
    const recorded = new Map<string, Set<string>>();
    for (const event of sink.events) {
      const key = event.annotations?.[ANNOTATION_STALL_KEY];
      if (event.reason !== 'RolloutStalled' || key === undefined || event.sidecarSet.uid === '') continue;
      const keys = recorded.get(event.sidecarSet.uid) ?? new Set<string>();
      keys.add(key);
      recorded.set(event.sidecarSet.uid, keys);
    }
    return Promise.resolve(recorded);
  };
}
