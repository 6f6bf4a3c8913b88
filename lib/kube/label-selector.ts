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
 * Whether `labels` satisfy `selector`. A selector that fails {@link validateLabelSelector}
 * matches nothing, so malformed input never widens a match.
 */
export function selectorMatches(selector: unknown, labels: Readonly<Record<string, string>>): boolean {
  if (!isObject(selector)) return false;
  // Read as unknown: the declared type is what a valid selector holds, not what JSON may carry.
  const matchLabels: unknown = selector.matchLabels;
  const matchExpressions: unknown = selector.matchExpressions;
  if (matchLabels !== undefined && matchLabels !== null) {
    if (!isObject(matchLabels)) return false;
    // Keys, not entries: every stored set is matched against every pod, and entries allocate a pair per label.
    for (const k of Object.keys(matchLabels)) {
      const v = matchLabels[k];
      if (typeof v !== 'string' || !Object.hasOwn(labels, k) || labels[k] !== v) return false;
    }
  }
  if (matchExpressions !== undefined && matchExpressions !== null) {
    if (!Array.isArray(matchExpressions)) return false;
    for (const req of matchExpressions) {
      if (!isObject(req) || typeof req.key !== 'string') return false;
      const has = Object.hasOwn(labels, req.key);
      const values: unknown = req.values;
      const list = Array.isArray(values) ? values : [];
      switch (req.operator) {
        case 'In':
          if (list.length === 0 || !has || !list.includes(labels[req.key])) return false;
          break;
        case 'NotIn':
          if (list.length === 0) return false;
          if (has && list.includes(labels[req.key])) return false;
          break;
        case 'Exists':
          if (list.length > 0 || !has) return false;
          break;
        case 'DoesNotExist':
          if (list.length > 0 || has) return false;
          break;
        default:
          return false;
      }
    }
  }
  return true;
}

/** Syntax errors of a label selector (unmetav1validation.ValidateLabelSelector), with paths under `path`. */
export function validateLabelSelector(selector: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObject(selector)) return [path.invalid(selector, 'must be an object')];
  const { matchLabels, matchExpressions } = selector;
  if (matchLabels !== undefined && matchLabels !== null) {
    const p = path.child('matchLabels');
    if (!isObject(matchLabels)) {
      errs.push(p.invalid(matchLabels, 'must be a map of string to string'));
    } else {
      for (const [k, v] of Object.entries(matchLabels)) {
        for (const e of qualifiedNameErrors(k)) errs.push(p.invalid(k, e));
        if (typeof v !== 'string') errs.push(p.key(k).invalid(v, 'must be a string'));
        else for (const e of labelValueErrors(v)) errs.push(p.invalid(v, e));
      }
    }
  }
  if (matchExpressions !== undefined && matchExpressions !== null) {
    const p = path.child('matchExpressions');
    if (!Array.isArray(matchExpressions)) {
      errs.push(p.invalid(matchExpressions, 'must be a list'));
    } else {
      matchExpressions.forEach((req: unknown, i) => {
        const rp = p.index(i);
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
      });
    }
  }
  return errs;
}
