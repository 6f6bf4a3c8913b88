/**
 * Field errors in the shape and wording of k8s.io/apimachinery's field.Error,
 * so a rejected object reads the way kubectl users know:
 * `spec.containers[0].image: Required value`.
 */

export type FieldErrorType =
  | 'Required value'
  | 'Invalid value'
  | 'Unsupported value'
  | 'Duplicate value'
  | 'Forbidden'
  | 'Not found'
  | 'Too long';

export interface FieldError {
  path: string;
  type: FieldErrorType;
  /** The offending value, when showing it helps. */
  value?: unknown;
  detail?: string;
}

/** A field path builder: `root.child('spec').child('containers').index(0)`. */
export class FieldPath {
  readonly #text: string;
  constructor(text: string) {
    this.#text = text;
  }
  child(name: string): FieldPath {
    return new FieldPath(this.#text === '' ? name : `${this.#text}.${name}`);
  }
  index(i: number): FieldPath {
    return new FieldPath(`${this.#text}[${i}]`);
  }
  key(k: string): FieldPath {
    return new FieldPath(`${this.#text}[${k}]`);
  }
  toString(): string {
    return this.#text;
  }

  required(detail?: string): FieldError {
    return withDetail({ path: this.#text, type: 'Required value' }, detail);
  }
  invalid(value: unknown, detail: string): FieldError {
    return { path: this.#text, type: 'Invalid value', value, detail };
  }
  unsupported(value: unknown, allowed: readonly string[]): FieldError {
    return {
      path: this.#text,
      type: 'Unsupported value',
      value,
      detail: `supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
    };
  }
  duplicate(value: unknown): FieldError {
    return { path: this.#text, type: 'Duplicate value', value };
  }
  forbidden(detail: string): FieldError {
    return { path: this.#text, type: 'Forbidden', detail };
  }
  notFound(value: unknown): FieldError {
    return { path: this.#text, type: 'Not found', value };
  }
  /**
   * field.TooLong: printed without the value, as Go does, in the words of
   * Kubernetes 1.32's apimachinery (Kruise 1.9's; 1.30's said "must have at
   * most N bytes").
   */
  tooLong(value: unknown, maxLength: number): FieldError {
    return { path: this.#text, type: 'Too long', value, detail: `may not be more than ${maxLength} bytes` };
  }
}

function withDetail(error: FieldError, detail: string | undefined): FieldError {
  return detail === undefined ? error : { ...error, detail };
}

/** The root of a field path. */
export const root = new FieldPath('');

/**
 * Bounds on what a message quotes. The message goes back in the denial, which
 * must fit Lambda's 6 MB response and be read by a person: a field holding
 * megabytes, a path through a huge map key, or thousands of bad containers
 * would otherwise be echoed whole, once per error.
 */
const MAX_VALUE_SHOWN = 200;
const MAX_ERROR_TEXT = 1_000;
const MAX_ERRORS_LISTED = 100;

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

/** One error as `path: Type: value: detail`, matching field.Error.Error(), cut short when very long. */
export function formatFieldError(e: FieldError): string {
  let s = `${e.path}: ${e.type}`;
  if (e.value !== undefined && e.type !== 'Required value' && e.type !== 'Forbidden' && e.type !== 'Too long') {
    s += `: ${formatValue(e.value)}`;
  }
  if (e.detail !== undefined && e.detail !== '') s += `: ${e.detail}`;
  return cut(s, MAX_ERROR_TEXT);
}

function formatValue(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return cut(JSON.stringify(value), MAX_VALUE_SHOWN);
}

/**
 * Several errors as one message, `[a, b]` when there is more than one, as
 * utilerrors.NewAggregate prints them; past the first hundred, only their
 * number.
 */
export function formatFieldErrors(errors: readonly FieldError[]): string {
  const parts = errors.slice(0, MAX_ERRORS_LISTED).map(formatFieldError);
  if (errors.length > MAX_ERRORS_LISTED) parts.push(`and ${errors.length - MAX_ERRORS_LISTED} more errors`);
  return parts.length === 1 ? (parts[0] ?? '') : `[${parts.join(', ')}]`;
}
