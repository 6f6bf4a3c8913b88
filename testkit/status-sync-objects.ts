/** Builders for the resync tests: stored SidecarSets, pods as the API server lists them, ports in memory. */
import { memoryNamespaceSource, memorySidecarSetSource } from '../lib/adapters/memory.ts';
import { memoryEventSink, memoryPodPages, memoryStatusWriter } from '../lib/adapters/memory-status-sync.ts';
import type { Namespace, Pod } from '../lib/kube/types.ts';
import type { SidecarSet, SidecarSetSpec } from '../lib/sidecarset/types.ts';
import { notInjectedEvents } from '../lib/status-sync/not-injected.ts';
import type { ResyncDeps } from '../lib/status-sync/resync.ts';
import { sidecarSet } from './sidecarset-objects.ts';

/** A set as stored: defaulted, hashed, with a uid and resourceVersion. */
export function storedSet(name: string, spec: Partial<SidecarSetSpec> = {}, status?: SidecarSet['status']): SidecarSet {
  const set = sidecarSet(name, spec);
  set.metadata = { ...set.metadata, uid: `uid-${name}`, resourceVersion: '1' };
  if (status !== undefined) set.status = status;
  return set;
}

export function hashOf(set: SidecarSet): string {
  return set.metadata?.annotations?.['kruise.io/sidecarset-hash'] ?? '';
}

export interface PodOptions {
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
  /** Sets that injected the pod, each with the hash it recorded; none means never injected. */
  injected?: Record<string, string>;
  /** Container names; by default the injected sets' sidecars (`<set>-sidecar`) and `app`. */
  containers?: string[];
  ready?: boolean;
  phase?: string;
}

/** A pod as listed: injected (annotations and sidecars) by the given sets, running and ready unless told otherwise. */
export function listedPod(options: PodOptions = {}): Pod {
  const injected = options.injected ?? {};
  const names = Object.keys(injected).sort();
  const containers = options.containers ?? [...names.map((set) => `${set}-sidecar`), 'app'];
  const ready = options.ready ?? true;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: options.name ?? 'p',
      namespace: options.namespace ?? 'default',
      labels: options.labels ?? { app: 'web' },
      ...(names.length > 0
        ? {
            annotations: {
              'kruise.io/sidecarset-injected-list': names.join(','),
              'kruise.io/sidecarset-hash': JSON.stringify(
                Object.fromEntries(names.map((set) => [set, { updateTimestamp: '2026-11-30T12:00:00Z', hash: injected[set], sidecarSetName: set, sidecarList: [`${set}-sidecar`] }])),
              ),
            },
          }
        : {}),
    },
    spec: { containers: containers.map((name) => ({ name, image: `${name}:1` })) },
    status: {
      phase: options.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      containerStatuses: containers.map((name) => ({ name, ready })),
    },
  };
}

export function namespace(name: string, labels: Record<string, string> = {}): Namespace {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } };
}

/** Ports over memory; any of them can be replaced. */
export function memoryDeps(sets: SidecarSet[], pods: Pod[], overrides: Partial<ResyncDeps> & { namespaceList?: Namespace[] } = {}) {
  const statuses = memoryStatusWriter(sets);
  const events = memoryEventSink();
  const { namespaceList, ...rest } = overrides;
  const deps: ResyncDeps = {
    sidecarSets: memorySidecarSetSource(sets),
    pods: memoryPodPages(pods, 2),
    namespaces: memoryNamespaceSource(namespaceList ?? []),
    statuses,
    events,
    notices: notInjectedEvents(),
    ...rest,
  };
  return { deps, statuses, events };
}
