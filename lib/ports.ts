/**
 * The small interfaces the pure core needs from the outside world. Adapters in
 * lib/adapters/ implement them over files, memory, or the Kubernetes API.
 */
import type { NamespaceLabels } from './sidecarset/match.ts';
import type { PodSummary } from './sidecarset/status.ts';
import type { SidecarSet, SidecarSetStatus } from './sidecarset/types.ts';

/** The cluster's SidecarSets. */
export interface SidecarSetSource {
  /** Every SidecarSet; rejects when they cannot be listed (the caller answers with a failed call). */
  list(signal?: AbortSignal): Promise<readonly SidecarSet[]>;
}

/** Namespace labels, for `namespaceSelector`. */
export interface NamespaceSource {
  /** Labels of the named namespaces; a namespace that does not exist is absent from the result. */
  labels(names: readonly string[], signal?: AbortSignal): Promise<NamespaceLabels>;
}

/**
 * Every pod of the cluster, one page at a time and reduced to what status
 * needs, so that a pass over 100k pods never holds them all.
 */
export interface PodPages {
  /**
   * One complete, consistent list; iterating again starts a new one.
   * @throws ListExpiredError (lib/status-sync/errors.ts) when the API server
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
   * @throws StatusConflictError (lib/status-sync/errors.ts) when the set changed since (HTTP 409).
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
}

/** Where events about SidecarSets go. */
export interface SidecarSetEventSink {
  record(event: SidecarSetEvent, signal?: AbortSignal): Promise<void>;
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
