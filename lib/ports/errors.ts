/**
 * The typed failures the ports (lib/ports.ts) are declared to throw: the live
 * adapters translate HTTP answers into them, the in-memory ones throw them
 * too, and the domain reacts to them without knowing HTTP.
 */

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

/** A create met an object of the same name (HTTP 409 AlreadyExists). */
export class ObjectExistsError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ObjectExistsError';
  }
}

/**
 * A guarded write found the object changed since it was read (HTTP 409, or
 * a JSON Patch `test` that failed): the object is skipped this reconcile and
 * decided again from a fresh read.
 */
export class WriteConflictError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WriteConflictError';
  }
}
