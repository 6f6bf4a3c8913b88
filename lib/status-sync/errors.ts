/** The status pass's own failures (the ports' typed failures are in lib/ports/errors.ts). */

/** A set's status could not be written this pass; the message says why, the cause what failed last. */
export class StatusNotWrittenError extends Error {
  readonly sidecarSet: string;
  constructor(sidecarSet: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StatusNotWrittenError';
    this.sidecarSet = sidecarSet;
  }
}
