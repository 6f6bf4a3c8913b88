/** One SidecarSet's rollout world in memory for the set-reconcile and controller tables: its ports, and every write logged in order. */
import { memoryNamespaceSource } from '../../lib/adapters/memory.ts';
import { memoryPods, memoryRevisionStore } from '../../lib/adapters/memory-rollout.ts';
import { memoryEventSink, memoryPodEventSink, memoryStatusWriter } from '../../lib/adapters/memory-status-sync.ts';
import type { Pod } from '../../lib/kube/types.ts';
import type { PodWriter, SetPodSource, SidecarSetEventSink, SidecarSetStatusWriter } from '../../lib/ports.ts';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { rolloutStateEvents } from '../../lib/status-sync/rollout-state.ts';
import type { ReconcileDeps } from '../../lib/status-sync/set-reconcile.ts';
import { podsOf, rolloutSet } from '../rollout/fixtures.ts';

export const NOW = new Date('2026-12-01T00:00:00Z');

export function storedRolloutSet(strategy: SidecarSetUpdateStrategy = { type: 'RollingUpdate', maxUnavailable: 2 }, extra: (set: SidecarSet) => void = () => undefined): SidecarSet {
  const set = rolloutSet({ strategy });
  set.metadata = { ...set.metadata, resourceVersion: '1' };
  extra(set);
  return set;
}

/** The set's ports in memory, each write also logged in one list in the order it was made. */
export function world(set: SidecarSet, pods: Pod[], overrides: { statuses?: Partial<SidecarSetStatusWriter>; setPods?: Partial<SetPodSource>; writer?: Partial<PodWriter>; events?: Partial<SidecarSetEventSink> } = {}) {
  const log: string[] = [];
  const statuses = memoryStatusWriter([set]);
  const events = memoryEventSink();
  const podEvents = memoryPodEventSink();
  const cluster = memoryPods(pods);
  const revisions = memoryRevisionStore();
  const writer: PodWriter = { ...cluster.writer, ...overrides.writer };
  const deps: ReconcileDeps = {
    statuses: {
      ...statuses,
      ...overrides.statuses,
      async patchStatus(name, resourceVersion, status, signal) {
        const outcome = await (overrides.statuses?.patchStatus ?? statuses.patchStatus)(name, resourceVersion, status, signal);
        log.push(`status ${name}`);
        return outcome;
      },
    },
    events: {
      async record(event, signal) {
        await (overrides.events?.record ?? events.record)(event, signal);
        log.push(`event ${event.reason}`);
      },
    },
    namespaces: memoryNamespaceSource([]),
    rollout: {
      revisions,
      setPods: { ...cluster.source, ...overrides.setPods },
      pods: {
        async patch(namespace, name, operations, signal) {
          const write = await writer.patch(namespace, name, operations, signal);
          log.push(`patch ${name}`);
          return write;
        },
        async patchStatus(namespace, name, patch, signal) {
          const write = await writer.patchStatus(namespace, name, patch, signal);
          log.push(`condition ${name} ${String((patch as { status: { conditions: { status: string }[] } }).status.conditions[0]?.status)}`);
          return write;
        },
      },
      podEvents: {
        async record(event, signal) {
          await podEvents.record(event, signal);
          log.push(`pod event ${event.reason} ${event.pod.name}`);
        },
      },
      clock: { now: () => NOW },
      states: rolloutStateEvents(),
    },
  };
  return { deps, log, statuses, events, podEvents, cluster, revisions };
}

/** A world of a NotUpdate set and `pods` pods whose SidecarSet reads are counted (by name, in `reads`). */
export function countedReads(pods = 3) {
  const set = storedRolloutSet({ type: 'NotUpdate' });
  const w = world(set, podsOf(set, pods, 0, 0));
  const reads: string[] = [];
  const get = w.deps.statuses.get.bind(w.deps.statuses);
  w.deps.statuses = {
    ...w.deps.statuses,
    get: (name, signal) => {
      reads.push(name);
      return get(name, signal);
    },
  };
  return { w, reads, name: set.metadata?.name ?? '', uid: set.metadata?.uid ?? '' };
}
