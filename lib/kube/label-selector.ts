/**
 * meta/v1 LabelSelector semantics: matchLabels and matchExpressions are ANDed;
 * an empty selector matches everything; a selector that is not well formed
 * matches nothing (as metav1.LabelSelectorAsSelector failing does in Kruise).
 * JSON null in an optional field means unset, as Go decodes it (YAML
 * `matchLabels:` with nothing after it arrives as null).
 */
import { FieldPath, type FieldError } from './field-errors.ts';
import { isObject } from './json.ts';
import { labelValueErrors, qualifiedNameErrors } from './names.ts';
import type { LabelSelector } from './types.ts';

export const SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;
export type SelectorOperator = (typeof SELECTOR_OPERATORS)[number];

/** True when the selector has neither matchLabels nor matchExpressions entries. */
export function isEmptySelector(selector: LabelSelector): boolean {
  const labels = isObject(selector.matchLabels) ? Object.keys(selector.matchLabels).length : 0;
  const exprs = Array.isArray(selector.matchExpressions) ? selector.matchExpressions.length : 0;
  return labels === 0 && exprs === 0;
}

/**
 * The first term of a selector that `labels` fail, as {@link selectorMismatch}
 * finds it: the matchLabels key and the value it wants, or the
 * matchExpressions requirement (its index, key, operator and values), with
 * the pod's value of the key (undefined when it has none). `malformed` is a
 * selector, or a part of it, that is not well formed and so matches nothing.
 */
export type SelectorMismatch =
  | { readonly term: 'matchLabels'; readonly key: string; readonly want: string; readonly have: string | undefined }
  | { readonly term: 'matchExpressions'; readonly index: number; readonly key: string; readonly operator: SelectorOperator; readonly values: readonly string[]; readonly have: string | undefined }
  | { readonly term: 'malformed'; readonly what: string };

const has = (labels: Readonly<Record<string, string>>, key: string): string | undefined => (Object.hasOwn(labels, key) ? labels[key] : undefined);

/**
 * Whether `labels` satisfy `selector`. A selector that fails {@link validateLabelSelector}
 * matches nothing, so malformed input never widens a match.
 */
export function selectorMatches(selector: unknown, labels: Readonly<Record<string, string>>): boolean {
  return selectorMismatch(selector, labels) === undefined;
}

/**
 * The term of `selector` that `labels` fail first (matchLabels in key order,
 * then matchExpressions in order), or undefined when they satisfy it: the one
 * decision {@link selectorMatches} reads, so an explanation names the term
 * that really decided. Allocates only for a mismatch.
 */
export function selectorMismatch(selector: unknown, labels: Readonly<Record<string, string>>): SelectorMismatch | undefined {
  if (!isObject(selector)) return { term: 'malformed', what: 'the selector is not an object' };
  // Read as unknown: the declared type is what a valid selector holds, not what JSON may carry.
  const matchLabels: unknown = selector.matchLabels;
  const matchExpressions: unknown = selector.matchExpressions;
  if (matchLabels !== undefined && matchLabels !== null) {
    const mismatch = matchLabelsMismatch(matchLabels, labels);
    if (mismatch !== undefined) return mismatch;
  }
  if (matchExpressions !== undefined && matchExpressions !== null) {
    if (!Array.isArray(matchExpressions)) return { term: 'malformed', what: 'matchExpressions is not a list' };
    for (let index = 0; index < matchExpressions.length; index++) {
      const mismatch = requirementMismatch(matchExpressions[index], index, labels);
      if (mismatch !== undefined) return mismatch;
    }
  }
  return undefined;
}

function matchLabelsMismatch(matchLabels: unknown, labels: Readonly<Record<string, string>>): SelectorMismatch | undefined {
  if (!isObject(matchLabels)) return { term: 'malformed', what: 'matchLabels is not a map' };
  // Keys, not entries: every stored set is matched against every pod, and entries allocate a pair per label.
  for (const k of Object.keys(matchLabels)) {
    const v = matchLabels[k];
    if (typeof v !== 'string') return { term: 'malformed', what: `matchLabels[${k}] is not a string` };
    if (!Object.hasOwn(labels, k) || labels[k] !== v) return { term: 'matchLabels', key: k, want: v, have: has(labels, k) };
  }
  return undefined;
}

function requirementMismatch(req: unknown, index: number, labels: Readonly<Record<string, string>>): SelectorMismatch | undefined {
  if (!isObject(req) || typeof req.key !== 'string') return { term: 'malformed', what: `matchExpressions[${index}] has no key` };
  const key = req.key;
  const present = Object.hasOwn(labels, key);
  const values: unknown = req.values;
  const list = Array.isArray(values) ? values : [];
  const operator = req.operator;
  let fails: boolean;
  switch (operator) {
    case 'In':
      fails = list.length === 0 || !present || !list.includes(labels[key]);
      break;
    case 'NotIn':
      fails = list.length === 0 || (present && list.includes(labels[key]));
      break;
    case 'Exists':
      fails = list.length > 0 || !present;
      break;
    case 'DoesNotExist':
      fails = list.length > 0 || present;
      break;
    default:
      return { term: 'malformed', what: `matchExpressions[${index}] has operator ${JSON.stringify(operator)}` };
  }
  if (!fails) return undefined;
  const strings = list.filter((v): v is string => typeof v === 'string');
  return { term: 'matchExpressions', index, key, operator, values: strings, have: has(labels, key) };
}

/** Syntax errors of a label selector (unmetav1validation.ValidateLabelSelector), with paths under `path`. */
export function validateLabelSelector(selector: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObject(selector)) return [path.invalid(selector, 'must be an object')];
  const { matchLabels, matchExpressions } = selector;
  if (matchLabels !== undefined && matchLabels !== null) matchLabelsErrors(matchLabels, path.child('matchLabels'), errs);
  if (matchExpressions !== undefined && matchExpressions !== null) {
    const p = path.child('matchExpressions');
    if (!Array.isArray(matchExpressions)) errs.push(p.invalid(matchExpressions, 'must be a list'));
    else
      matchExpressions.forEach((req: unknown, i) => {
        requirementErrors(req, p.index(i), errs);
      });
  }
  return errs;
}

/** Into `errs`, the errors of a selector's matchLabels. */
function matchLabelsErrors(matchLabels: unknown, p: FieldPath, errs: FieldError[]): void {
  if (!isObject(matchLabels)) {
    errs.push(p.invalid(matchLabels, 'must be a map of string to string'));
    return;
  }
  for (const [k, v] of Object.entries(matchLabels)) {
    for (const e of qualifiedNameErrors(k)) errs.push(p.invalid(k, e));
    if (typeof v !== 'string') errs.push(p.key(k).invalid(v, 'must be a string'));
    else for (const e of labelValueErrors(v)) errs.push(p.invalid(v, e));
  }
}

/** Into `errs`, the errors of one of a selector's matchExpressions. */
function requirementErrors(req: unknown, rp: FieldPath, errs: FieldError[]): void {
  if (!isObject(req)) {
    errs.push(rp.invalid(req, 'must be an object'));
    return;
  }
  const values: unknown = req.values;
  const valuesPath = rp.child('values');
  if (values !== undefined && values !== null && !(Array.isArray(values) && values.every((v) => typeof v === 'string'))) {
    errs.push(valuesPath.invalid(values, 'must be a list of strings'));
  }
  const count = Array.isArray(values) ? values.length : 0;
  switch (req.operator) {
    case 'In':
    case 'NotIn':
      if (count === 0) errs.push(valuesPath.required('must be specified when `operator` is \'In\' or \'NotIn\''));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (count > 0) errs.push(valuesPath.forbidden('may not be specified when `operator` is \'Exists\' or \'DoesNotExist\''));
      break;
    default:
      errs.push(rp.child('operator').invalid(req.operator, 'not a valid selector operator'));
  }
  if (typeof req.key !== 'string') errs.push(rp.child('key').required());
  else for (const e of qualifiedNameErrors(req.key)) errs.push(rp.child('key').invalid(req.key, e));
  if (Array.isArray(values)) {
    values.forEach((v: unknown, j) => {
      if (typeof v === 'string') for (const e of labelValueErrors(v)) errs.push(valuesPath.index(j).invalid(v, e));
    });
  }
}
