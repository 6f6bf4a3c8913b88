/**
 * The small interfaces the pure core needs from the outside world. Adapters in
 * lib/adapters/ implement them over files, memory, or the Kubernetes API.
 */
import type { NamespaceLabels } from './sidecarset/match.ts';
import type { SidecarSet } from './sidecarset/types.ts';

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
