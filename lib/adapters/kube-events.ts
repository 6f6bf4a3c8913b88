/**
 * Core/v1 Events: the reconciler's, about SidecarSets and pods (each new,
 * with a generated name, never updated: `create` on events is all it
 * needs), and the rollout view's read of the RevisionWriteFailed ones
 * (lib/status-view/revision-failures.ts).
 */
import { objectOf, stringOf } from '../kube/json.ts';
import type { AdmissionConfigEventSink, PodEventSink, SidecarSetEventSink } from '../ports.ts';
import { GROUP, KIND } from '../sidecarset/types.ts';
import { REVISION_WRITE_FAILED } from '../status-sync/revision-failure.ts';
import { ANNOTATION_STALL_KEY, type RecordedStalls } from '../status-sync/rollout-state.ts';
import type { RevisionFailureEvent, RevisionFailureSource } from '../status-view/revision-failures.ts';
import { fixedSidecarSetVersion, type SidecarSetVersions } from './kube-sidecarsets-version.ts';
import { listAll } from './kube-paged-list.ts';
import { expectObject, type KubeClient } from './kube-request.ts';

/** The component events name as their source. */
export const EVENT_SOURCE = 'sidecarset-status-sync';
/**
 * Where events about a cluster-scoped object go: client-go's recorder uses
 * `default` too, and `kubectl describe` finds them there.
 */
export const EVENT_NAMESPACE = 'default';

/** A DNS-1123 label from an object name (a SidecarSet name may hold upper case and edge dashes). */
function eventNamePrefix(objectName: string, fallback: string): string {
  const label = objectName.toLowerCase().replace(/[^a-z0-9-]/g, '').replace(/^-+|-+$/g, '');
  return `${label === '' ? fallback : label}.`;
}

interface EventTarget {
  namespace: string;
  involvedObject: { apiVersion: string; kind: string; name: string; uid: string; namespace?: string };
  /** For the error message, e.g. `SidecarSet "agent"`. */
  what: string;
}

/** When events are stamped; tests fix it. */
export interface EventOptions {
  now?: () => Date;
}

/** Creates one new core/v1 Event (generated name, never updated; sent once, as a repeat would record it twice). */
function eventCreator(client: KubeClient, options: EventOptions) {
  const now = options.now ?? (() => new Date());
  return async (target: EventTarget, event: { type: string; reason: string; message: string; annotations?: Readonly<Record<string, string>> }, signal: AbortSignal | undefined): Promise<void> => {
    const at = now().toISOString();
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        generateName: eventNamePrefix(target.involvedObject.name, target.involvedObject.kind.toLowerCase()),
        namespace: target.namespace,
        ...(event.annotations === undefined ? {} : { annotations: { ...event.annotations } }),
      },
      involvedObject: target.involvedObject,
      type: event.type,
      reason: event.reason,
      // events.k8s.io caps notes at 1 kB; stay inside it for either API.
      message: event.message.slice(0, 1024),
      source: { component: EVENT_SOURCE },
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
    };
    await expectObject(client, { method: 'POST', path: `/api/v1/namespaces/${encodeURIComponent(target.namespace)}/events`, operation: `create event on ${target.what}`, body, ...(signal === undefined ? {} : { signal }) });
  };
}

/**
 * Core/v1 Events about SidecarSets (needs `create` on events, and nothing
 * more: each event is new, with a generated name, never updated). The set is
 * named in the version the cluster stores it in (`versions`, the one the
 * sets are read in; v1alpha1 when not given), as Kruise 1.9's recorder names
 * its v1beta1 objects.
 */
export function kubeEventSink(client: KubeClient, options: EventOptions & { versions?: SidecarSetVersions } = {}): SidecarSetEventSink {
  const create = eventCreator(client, options);
  const versions = options.versions ?? fixedSidecarSetVersion('v1alpha1');
  return {
    record: async (event, signal) =>
      create(
        {
          namespace: EVENT_NAMESPACE,
          involvedObject: { apiVersion: `${GROUP}/${await versions.current(signal)}`, kind: KIND, name: event.sidecarSet.name, uid: event.sidecarSet.uid },
          what: `SidecarSet "${event.sidecarSet.name}"`,
        },
        event,
        signal,
      ),
  };
}

/**
 * Core/v1 Events about the project's webhook configurations and the
 * SidecarSet CRD, in `default`. Without the object's uid (the reconciler
 * does not read it for this): `kubectl get events --field-selector
 * reason=<reason>` finds them.
 */
export function kubeAdmissionConfigEventSink(client: KubeClient, options: EventOptions = {}): AdmissionConfigEventSink {
  const create = eventCreator(client, options);
  return {
    record: (event, signal) =>
      create({ namespace: EVENT_NAMESPACE, involvedObject: { ...event.object, uid: '' }, what: `${event.object.kind} "${event.object.name}"` }, event, signal),
  };
}

/** Core/v1 Events about pods, in the pod's namespace, as Kruise's recorder writes them for a HotUpgrade flip. */
export function kubePodEventSink(client: KubeClient, options: EventOptions = {}): PodEventSink {
  const create = eventCreator(client, options);
  return {
    record: (event, signal) =>
      create(
        {
          namespace: event.pod.namespace,
          involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: event.pod.namespace, name: event.pod.name, uid: event.pod.uid },
          what: `pod ${event.pod.namespace}/${event.pod.name}`,
        },
        event,
        signal,
      ),
  };
}

/**
 * The stalls the reconciler already recorded Events for (rollout-state.ts): one list of the
 * RolloutStalled Events on SidecarSets in the namespace it writes them to
 * (needs `list` on events there), each set uid's stall keys from their
 * annotation. Events without it (another writer's, or older than it) are
 * left out. Events expire (the API server's --event-ttl, an hour by
 * default): a stall recorded longer ago than that is recorded once more by a new process.
 */
export function kubeRecordedStalls(client: KubeClient): RecordedStalls {
  const fieldSelector = 'involvedObject.kind=SidecarSet,reason=RolloutStalled';
  return async (signal) => {
    const { items } = await listAll(client, `/api/v1/namespaces/${EVENT_NAMESPACE}/events`, { fieldSelector }, `list RolloutStalled events in "${EVENT_NAMESPACE}"`, signal);
    const recorded = new Map<string, Set<string>>();
    for (const item of items) {
      const event = objectOf(item) ?? {};
      const uid = stringOf(objectOf(event.involvedObject)?.uid);
      const key = stringOf(objectOf(objectOf(event.metadata)?.annotations)?.[ANNOTATION_STALL_KEY]);
      if (uid === undefined || uid === '' || key === undefined) continue;
      const keys = recorded.get(uid) ?? new Set<string>();
      keys.add(key);
      recorded.set(uid, keys);
    }
    return recorded;
  };
}

/** The reconciler's RevisionWriteFailed Events on SidecarSets, in the namespace it writes them to. */
export function kubeRevisionFailures(client: KubeClient): RevisionFailureSource {
  const fieldSelector = `involvedObject.kind=SidecarSet,reason=${REVISION_WRITE_FAILED}`;
  return async (signal) => {
    const operation = `list ${REVISION_WRITE_FAILED} events in "${EVENT_NAMESPACE}"`;
    const { items } = await listAll(client, `/api/v1/namespaces/${EVENT_NAMESPACE}/events`, { fieldSelector }, operation, signal);
    return items.map((item): RevisionFailureEvent => {
      const event = objectOf(item) ?? {};
      const involved = objectOf(event.involvedObject) ?? {};
      return {
        uid: stringOf(involved.uid) ?? '',
        name: stringOf(involved.name) ?? '',
        message: stringOf(event.message) ?? '',
        at: stringOf(event.lastTimestamp) ?? stringOf(event.eventTime) ?? stringOf(objectOf(event.metadata)?.creationTimestamp) ?? '',
      };
    });
  };
}
