/**
 * The small interfaces the pure core needs from the outside world. Adapters in
 * lib/adapters/ implement them over files, memory, or the Kubernetes API.
 */
import type { JsonPatchOperation } from './admission/json-patch.ts';
import type { JsonObject, Pod } from './kube/types.ts';
import type { PodScope } from './rollout/pod-scope.ts';
import type { ControllerRevision } from './sidecarset/revisions.ts';
import type { NamespaceLabels } from './sidecarset/match.ts';
import type { PodSummary } from './sidecarset/status.ts';
import type { SidecarSet, SidecarSetStatus } from './sidecarset/types.ts';

/** The cluster's SidecarSets. */
export interface SidecarSetSource {
  /** Every SidecarSet; rejects when they cannot be listed (the caller answers with a failed call). */
  list(signal?: AbortSignal): Promise<readonly SidecarSet[]>;
}

/** One pod read by name (the eviction webhook reads the pod an Eviction names). */
export interface PodSource {
  /**
   * The pod as stored; undefined when there is none of that name.
   * @throws when it cannot be read (the caller refuses: it cannot decide).
   */
  get(namespace: string, name: string, signal?: AbortSignal): Promise<Pod | undefined>;
}

/** Namespace labels, for `namespaceSelector`. */
export interface NamespaceSource {
  /** Labels of the named namespaces; a namespace that does not exist is absent from the result. */
  labels(names: readonly string[], signal?: AbortSignal): Promise<NamespaceLabels>;
}

/**
 * Every pod of the cluster, one page at a time and reduced to what status
 * needs, so that a resync over 100k pods never holds them all.
 */
export interface PodPages {
  /**
   * One complete, consistent list; iterating again starts a new one.
   * @throws ListExpiredError (lib/ports/errors.ts) when the API server
   *   expired the list's continue token (HTTP 410): the caller may start over.
   *   Any other error means the list cannot be completed.
   */
  pages(signal?: AbortSignal): AsyncIterable<readonly PodSummary[]>;
}

/** Reads and writes the status subresource of SidecarSets. */
export interface SidecarSetStatusWriter {
  /**
   * Merge-patches the set's status, on condition that the set is still at
   * `resourceVersion` (no condition when undefined).
   * @returns 'gone' when the set no longer exists.
   * @throws StatusConflictError (lib/ports/errors.ts) when the set changed since (HTTP 409).
   */
  patchStatus(name: string, resourceVersion: string | undefined, status: SidecarSetStatus, signal?: AbortSignal): Promise<'written' | 'gone'>;
  /** The set as stored now; undefined when it no longer exists. */
  get(name: string, signal?: AbortSignal): Promise<SidecarSet | undefined>;
}

/** An event about a SidecarSet, for `kubectl describe sidecarset` and `kubectl get events`. */
export interface SidecarSetEvent {
  sidecarSet: { name: string; uid: string };
  type: 'Normal' | 'Warning';
  /** UpperCamelCase, as Kubernetes reasons are. */
  reason: string;
  message: string;
  /** Annotations of the Event (a RolloutStalled Event's stall key, which a later process reads). */
  annotations?: Readonly<Record<string, string>>;
}

/** Where events about SidecarSets go. */
export interface SidecarSetEventSink {
  record(event: SidecarSetEvent, signal?: AbortSignal): Promise<void>;
}

/** An event about a pod (the HotUpgrade flip's outcome), for `kubectl describe pod`. */
export interface PodEvent {
  pod: { namespace: string; name: string; uid: string };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/**
 * An event about one of the project's webhook configurations or the
 * SidecarSet CRD (cluster-scoped objects: recorded in `default`, as client-go's
 * recorder does).
 */
export interface AdmissionConfigEvent {
  object: { apiVersion: string; kind: string; name: string };
  type: 'Warning';
  reason: string;
  message: string;
}

/** Where events about the webhook configurations and the CRD go. */
export interface AdmissionConfigEventSink {
  record(event: AdmissionConfigEvent, signal?: AbortSignal): Promise<void>;
}

/** Where events about pods go (in the pod's namespace). */
export interface PodEventSink {
  record(event: PodEvent, signal?: AbortSignal): Promise<void>;
}

/**
 * Reads the ControllerRevisions that record SidecarSet specs (rollout.md §2),
 * in the one namespace they live in (default `kruise-system`, Kruise's).
 */
export interface RevisionSource {
  /** The namespace the revisions are read from. */
  readonly namespace: string;
  /**
   * The revision of that name; undefined when it does not exist.
   * @throws when it cannot be read (the caller answers "cannot decide").
   */
  get(name: string, signal?: AbortSignal): Promise<ControllerRevision | undefined>;
  /**
   * Every revision labelled `kruise.io/sidecarset-name=<setName>` that also
   * carries every label of `labels`, in any order.
   * @throws when they cannot be listed.
   */
  list(setName: string, labels?: Readonly<Record<string, string>>, signal?: AbortSignal): Promise<readonly ControllerRevision[]>;
}

/**
 * ControllerRevisions as the reconciler keeps them (rollout.md §2.1): the
 * reads of {@link RevisionSource} and the writes of registering and trimming.
 */
export interface RevisionStore extends RevisionSource {
  /** Every revision labelled with a SidecarSet name, in one list (a resync reads them once for all sets). */
  listAll(signal?: AbortSignal): Promise<readonly ControllerRevision[]>;
  /** @throws ObjectExistsError (lib/ports/errors.ts) when the name is taken. */
  create(revision: ControllerRevision, signal?: AbortSignal): Promise<ControllerRevision>;
  /**
   * Sets `.revision` (a rollback makes an old revision the newest), on
   * condition that the revision is unchanged since it was read.
   * @throws WriteConflictError when it changed or is gone.
   */
  setNumber(revision: ControllerRevision, number: number, signal?: AbortSignal): Promise<ControllerRevision>;
  /** Merges labels into the revision's (the custom-version label). */
  patchLabels(name: string, labels: Readonly<Record<string, string>>, signal?: AbortSignal): Promise<void>;
  /** Deletes the revision if it is still the one read (same uid); already gone is fine. */
  delete(revision: ControllerRevision, signal?: AbortSignal): Promise<void>;
}

/** Where one SidecarSet's pods are: the rollout's type (lib/rollout/pod-scope.ts), the pod ports' parameter. */
export type { PodScope };

/** Whole pods of one set's scope, for its rollout. */
export interface SetPodSource {
  /**
   * One complete, consistent list and its resourceVersion.
   * @throws when the list cannot be completed (a rollout never decides from part of a list).
   */
  list(scope: PodScope, signal?: AbortSignal): Promise<{ pods: readonly Pod[]; resourceVersion: string }>;
  /**
   * Waits until a pod in scope changes after `resourceVersion`, other than by
   * a write whose resulting resourceVersion is in `ignore` (this process's
   * own), or until `timeoutMs` passes. Never rejects: a watch that fails
   * answers 'error' and the caller falls back to waiting out its interval.
   * With `predicate`, a change counts only when `predicate` says so of it (a watch
   * error, which calls for a fresh list, always counts).
   */
  changed(scope: PodScope, resourceVersion: string, ignore: ReadonlySet<string>, timeoutMs: number, signal?: AbortSignal, predicate?: PodPredicate): Promise<'changed' | 'timeout' | 'error'>;
  /**
   * Tells every change of the pods in scope after `resourceVersion`, in the
   * API server's order, to `sink` (a bookmark's version to `sink.progress`),
   * until `signal` aborts ('stopped') or the watch ends: 'ended' (the server
   * closed it), 'expired' (the version is too old: a fresh list is due),
   * 'error' (it could not start, broke, or sent what is not a pod). Never
   * rejects. Optional: the pace loop keeps a followed set's pods from it
   * (status-sync/pod-view.ts), and lists them for every reconcile without it.
   */
  watch?(scope: PodScope, resourceVersion: string, sink: PodWatchSink, signal: AbortSignal): Promise<PodWatchEnd>;
}

/** Where a watch of pods tells what it sees. */
export interface PodWatchSink {
  change(type: PodChangeType, pod: Pod): void;
  /** A bookmark: every change up to this version has been delivered. */
  progress(resourceVersion: string): void;
}

/** How a watch of pods ended (see {@link SetPodSource.watch}). */
export type PodWatchEnd = 'stopped' | 'ended' | 'expired' | 'error';

/** How a pod changed, as a watch of a scope tells it: a pod leaving the scope is DELETED there, one entering it ADDED. */
export type PodChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** Which of a watch's changes are worth waking for: the change, and the pod as it is after it (before it, when DELETED). */
export type PodPredicate = (type: PodChangeType, pod: Pod) => boolean;

/** A write that went through, with the object's new resourceVersion; or the object was gone. */
export type PodWrite = { outcome: 'written'; resourceVersion: string } | { outcome: 'gone' };

/** The rollout's pod writes. */
export interface PodWriter {
  /**
   * Applies a JSON Patch (the rollout's carry a `test` of the pod's
   * resourceVersion first).
   * @throws WriteConflictError when the pod changed since it was read.
   */
  patch(namespace: string, name: string, operations: readonly JsonPatchOperation[], signal?: AbortSignal): Promise<PodWrite>;
  /** A strategic-merge patch of the pod's `status` subresource (the SidecarSetUpgradable condition). */
  patchStatus(namespace: string, name: string, patch: JsonObject, signal?: AbortSignal): Promise<PodWrite>;
}

/** How an eviction ended: done, the pod already gone (or replaced: another uid), or refused for now (429: a PodDisruptionBudget). */
export type EvictionOutcome = { outcome: 'evicted' } | { outcome: 'gone' } | { outcome: 'refused'; message: string };

/** Evicts pods through the Eviction API, so PodDisruptionBudgets and the pod's grace period hold. */
export interface PodEvictor {
  /**
   * Evicts the pod if it is still the one with `uid`.
   * @throws when the API server refuses it for any reason but a disruption budget (or cannot be reached).
   */
  evict(pod: { namespace: string; name: string; uid: string }, signal?: AbortSignal): Promise<EvictionOutcome>;
}

/** Which pods the API server sends to pod-inject: its webhook's selectors, as registered (absent: every namespace, every pod). */
export interface PodWebhookSelectors {
  namespaceSelector?: unknown;
  objectSelector?: unknown;
}

/** The pod-inject webhook as the cluster registers it. */
export interface PodWebhookSource {
  /** Its selectors; undefined when the project's MutatingWebhookConfiguration holds no pod-inject webhook (no pod is injected). */
  selectors(signal?: AbortSignal): Promise<PodWebhookSelectors | undefined>;
}

/**
 * A SidecarSet CREATE or UPDATE the webhooks admitted (never a dry run): the
 * reconciler should reconcile that set now rather than at the next tick.
 * Admission is not yet the write, so the reconcile first waits (bounded) until the
 * change is visible in the API server.
 *
 * `PODS`: not the set but its pods changed (one created, deleted, or its
 * readiness), as the pod webhooks saw it (lib/status-sync/pod-trigger.ts):
 * the set's reconcile runs after a short debounce, so that its status follows.
 * `uid` and `resourceVersion` are '' then.
 */
export interface AdmittedSidecarSet {
  sidecarSet: string;
  /** metadata.uid of the admitted object ('' when the request carried none). */
  uid: string;
  operation: 'CREATE' | 'UPDATE' | 'PODS';
  /**
   * metadata.resourceVersion of the admitted object: '' on CREATE; on UPDATE
   * the stored version the change replaces, so the change is visible once the
   * stored version differs from it.
   */
  resourceVersion: string;
}

/** Starts reconciles for admitted SidecarSet changes and pod changes; fire and forget. */
export interface RolloutTrigger {
  /**
   * Hands `changes` over at once, in one hand-over (on AWS one
   * SendMessageBatch: at most ten). Resolves once it was handed over (not
   * when the reconciles end); rejects when it could not be. The admission answer
   * never depends on it.
   */
  admitted(changes: readonly AdmittedSidecarSet[], signal?: AbortSignal): Promise<void>;
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A structured logger; every line is one JSON object. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * Every SidecarSet as one list with its resourceVersion, and a wait for the
 * next change after it: what the rollout view (`npm run -s status --
 * --watch`) follows.
 */
export interface SidecarSetWatchSource {
  /** @throws when the SidecarSets cannot be listed (unreachable, forbidden, no CRD), naming why. */
  list(signal?: AbortSignal): Promise<{ sets: readonly SidecarSet[]; resourceVersion: string }>;
  /**
   * Waits until a SidecarSet changes after `resourceVersion`, or `timeoutMs`
   * passes. Never rejects: a watch that fails answers 'error'.
   */
  changed(resourceVersion: string, timeoutMs: number, signal?: AbortSignal): Promise<'changed' | 'timeout' | 'error'>;
}
