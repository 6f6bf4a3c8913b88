/**
 * The reads a requeued set's reconcile starts from: the set and its
 * ControllerRevisions, read at once (neither needs the other, and both stand
 * between a freed slot and its next write). Only the controller writes the
 * revisions meanwhile (its reconciles do not overlap).
 */
import type { ControllerRevision } from '../sidecarset/revisions.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import type { ReconcileDeps } from './set-reconcile.ts';

/** A set's reads for its reconcile; the set's failure is kept, not thrown, until the reconcile reads it. */
export interface SetReads {
  set: Promise<{ value: SidecarSet | undefined } | { error: unknown }>;
  revisions: Promise<readonly ControllerRevision[] | undefined>;
}

/** Starts the reads of `name`'s reconcile; a set already read (`known`) is not read again. */
export function readSet(name: string, deps: Pick<ReconcileDeps, 'statuses' | 'rollout'>, signal: AbortSignal | undefined, known?: SidecarSet): SetReads {
  return {
    set:
      known === undefined
        ? deps.statuses.get(name, signal).then(
            (value) => ({ value }),
            (error: unknown) => ({ error }),
          )
        : Promise.resolve({ value: known }),
    // A list that failed is made again by the reconcile, which reports its failure as registering's.
    revisions: deps.rollout.revisions.list(name, {}, signal).catch(() => undefined),
  };
}

/**
 * How long after a debounce ends the reads started during it still serve a
 * reconcile: a worker may reach the set later than its debounce ends (other sets'
 * reconciles first), and past this reads again rather than decide from an older set.
 */
export const MAX_EARLY_READ_AGE_MS = 250;

/**
 * Reads started while a set's watch event is debounced, for the set's next reconcile:
 * the debounce hides their time. Each serves until {@link MAX_EARLY_READ_AGE_MS}
 * after its debounce ends.
 */
export class EarlyReads {
  private readonly reads = new Map<string, { reads: SetReads; until: number }>();

  /** Starts `name`'s reads now, to serve a reconcile after `debounceMs`. */
  start(name: string, reads: SetReads, debounceMs: number): void {
    this.reads.set(name, { reads, until: performance.now() + debounceMs + MAX_EARLY_READ_AGE_MS });
  }

  /** The set's early reads while they may still serve; taken either way. */
  take(name: string): SetReads | undefined {
    const started = this.reads.get(name);
    this.reads.delete(name);
    return started !== undefined && performance.now() <= started.until ? started.reads : undefined;
  }
}
