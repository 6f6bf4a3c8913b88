/**
 * The typed failures the status pass reacts to (adapters translate HTTP
 * answers into them), and what a pass reports of the ones it met. Below
 * every other file of the status pass, so none of them imports another for
 * an error type.
 */

/** Something the pass could not do; the rest of the pass went on. */
export interface PassError {
  /** The set affected, when it is one set. */
  sidecarSet?: string;
  /** `list pods`, `patch status`, ... */
  operation: string;
  message: string;
}

/**
 * A paged list's continue token expired (HTTP 410 Gone): the pages read so far
 * and the ones still to come would not form one snapshot, so the list must
 * start over.
 */
export class ListExpiredError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ListExpiredError';
  }
}

/**
 * A write's resourceVersion precondition failed (HTTP 409 Conflict): someone
 * changed the object since it was read, so it must be read again before the
 * write is retried.
 */
export class StatusConflictError extends Error {
  readonly sidecarSet: string;
  constructor(sidecarSet: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StatusConflictError';
    this.sidecarSet = sidecarSet;
  }
}

/** A set's status could not be written this pass; the message says why, the cause what failed last. */
export class StatusNotWrittenError extends Error {
  readonly sidecarSet: string;
  constructor(sidecarSet: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StatusNotWrittenError';
    this.sidecarSet = sidecarSet;
  }
}

/** A create met an object of the same name (HTTP 409 AlreadyExists). */
export class ObjectExistsError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ObjectExistsError';
  }
}

/**
 * A guarded write found the object changed since it was read (HTTP 409, or
 * a JSON Patch `test` that failed): the object is skipped this pass and
 * decided again from a fresh read.
 */
export class WriteConflictError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WriteConflictError';
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
