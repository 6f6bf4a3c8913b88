/**
 * The resync's own failures, and what a reconcile reports of the ones it met
 * (the ports' typed failures, which adapters translate HTTP answers into,
 * are in lib/ports/errors.ts). Below every other file of the resync,
 * so none of them imports another for an error type.
 */

/** Something the reconcile could not do; the rest of the reconcile went on. */
export interface ReconcileError {
  /** The set affected, when it is one set. */
  sidecarSet?: string;
  /** `list pods`, `patch status`, ... */
  operation: string;
  message: string;
}



/** A set's status could not be written this reconcile; the message says why, the cause what failed last. */
export class StatusNotWrittenError extends Error {
  readonly sidecarSet: string;
  constructor(sidecarSet: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StatusNotWrittenError';
    this.sidecarSet = sidecarSet;
  }
}



/** What was being written when a ControllerRevision write failed. */
export type RevisionWrite = 'create' | 'renumber' | 'label';

/** The words for a revision write done, in messages about one that failed. */
export const REVISION_WRITE_DONE: Record<RevisionWrite, string> = { create: 'created', renumber: 'renumbered (a rollback to it)', label: 'labelled' };

/** A write of the set's ControllerRevision failed; `reason` is the whole explanation (the API server's, uncut). */
export class RevisionWriteError extends Error {
  readonly write: RevisionWrite;
  readonly revision: string;
  readonly reason: string;
  constructor(write: RevisionWrite, revision: string, reason: string, options?: ErrorOptions) {
    super(`ControllerRevision ${revision} could not be ${REVISION_WRITE_DONE[write]}: ${reason}`, options);
    this.name = 'RevisionWriteError';
    this.write = write;
    this.revision = revision;
    this.reason = reason;
  }
}
