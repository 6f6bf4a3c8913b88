/**
 * Rules 8-10 of the SidecarSet validation: how existing pods are updated and
 * how new pods are injected.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { isObject, objectOf } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import { validateNonEmptySelector } from './validate-selectors.ts';
import { enumAt, integerAt, isUnset, listAt, objectAt, stringAt, forEachObjectAt } from './validate-shape.ts';
import { REVISION_POLICIES, UPDATE_STRATEGY_TYPES } from './types.ts';

const PERCENT = /^[0-9]+%$/;

/** appsvalidation.ValidatePositiveIntOrPercent: a non-negative integer or "N%". */
function validateIntOrPercent(value: unknown, path: FieldPath, errs: FieldError[]): void {
  if (typeof value === 'string') {
    if (!PERCENT.test(value)) {
      errs.push(
        path.invalid(value, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"),
      );
    }
  } else if (typeof value === 'number' && Number.isInteger(value)) {
    if (value < 0) errs.push(path.invalid(value, 'must be greater than or equal to 0'));
  } else {
    errs.push(path.invalid(value, "must be an integer or percentage (e.g '5%')"));
  }
}

/** UpdatePriorityStrategy.FieldsValidation, with every problem reported rather than the first. */
function validatePriorityStrategy(strategy: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const weights = listAt(strategy.weightPriority, path.child('weightPriority'), errs);
  const orders = listAt(strategy.orderPriority, path.child('orderPriority'), errs);
  if (weights.length > 0 && orders.length > 0) errs.push(path.forbidden('only one of weightPriority and orderPriority can be used'));
  weights.forEach((term, i) => {
    const p = path.child('weightPriority').index(i);
    if (!isObject(term)) {
      errs.push(p.invalid(term, 'must be an object'));
      return;
    }
    const weight = integerAt(term.weight, p.child('weight'), errs);
    if (isUnset(term.weight) || (weight !== undefined && (weight < 1 || weight > 100))) {
      errs.push(p.child('weight').invalid(term.weight ?? 0, 'weight must be valid number in the range 1-100'));
    }
    if (isUnset(term.matchSelector)) errs.push(p.child('matchSelector').required('selector can not be empty'));
    else validateNonEmptySelector(term.matchSelector, p.child('matchSelector'), errs);
  });
  orders.forEach((term, i) => {
    const p = path.child('orderPriority').index(i);
    if (!isObject(term)) {
      errs.push(p.invalid(term, 'must be an object'));
      return;
    }
    const key = stringAt(term.orderedKey, p.child('orderedKey'), errs);
    if (isUnset(term.orderedKey) || key === '') errs.push(p.child('orderedKey').required('order key can not be empty'));
  });
}

/** UpdateScatterStrategy.FieldsValidation: non-empty keys, no term twice. */
function validateScatterStrategy(value: unknown, path: FieldPath, errs: FieldError[]): void {
  const seen = new Set<string>();
  forEachObjectAt(value, path, errs, (term, p) => {
    const key = stringAt(term.key, p.child('key'), errs);
    const termValue = stringAt(term.value, p.child('value'), errs) ?? '';
    if (isUnset(term.key) || key === '') {
      errs.push(p.child('key').required('key should not be empty'));
      return;
    }
    if (key === undefined) return;
    const id = JSON.stringify([key, termValue]);
    if (seen.has(id)) errs.push(p.duplicate({ key, value: termValue }));
    seen.add(id);
  });
}

/** Kruise's intStrIsSet: any percentage, or an integer other than 0. */
function partitionIsSet(partition: unknown): boolean {
  return typeof partition === 'string' || (typeof partition === 'number' && partition !== 0);
}

/**
 * Rules 8 and 9 for `spec` at `path`. The type must be one of the two
 * values (the defaulting webhook sets RollingUpdate); the rest is checked
 * only for RollingUpdate, as Kruise does, since NotUpdate ignores it.
 */
export function validateUpdateStrategy(spec: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const sp = path.child('updateStrategy');
  const strategy = objectAt(spec.updateStrategy, sp, errs) ?? {};
  const type = enumAt(strategy.type, UPDATE_STRATEGY_TYPES, sp.child('type'), errs);
  if (type !== 'RollingUpdate') return;

  // Rule 9. Kruise refuses every native sidecar (restartable init container) here and never updates one
  // (kruise#1671); this rolls a cold one in place like a container (sidecarset.md "Native sidecars rolled
  // in place"). A hot upgrade of one would split it into two init containers that run for ever and swap
  // them, which nothing here does: refused, named, rather than injected split and left at its old image.
  listAt(spec.initContainers, path.child('initContainers'), []).forEach((c, i) => {
    if (isObject(c) && c.restartPolicy === 'Always' && objectOf(c.upgradeStrategy)?.upgradeType === 'HotUpgrade') {
      errs.push(
        path
          .child('initContainers')
          .index(i)
          .child('upgradeStrategy')
          .child('upgradeType')
          .forbidden('a native sidecar (an init container with restartPolicy Always) is rolled in place, never hot upgraded; use upgradeType ColdUpgrade, or updateStrategy.type NotUpdate'),
      );
    }
  });

  const hasSelector = !isUnset(strategy.selector);
  if (hasSelector) validateNonEmptySelector(strategy.selector, sp.child('selector'), errs);
  if (!isUnset(strategy.partition)) {
    validateIntOrPercent(strategy.partition, sp.child('partition'), errs);
    if (hasSelector && partitionIsSet(strategy.partition)) {
      errs.push(sp.child('partition').invalid(strategy.partition, 'Partition and Selector cannot be used together'));
    }
  }
  if (!isUnset(strategy.maxUnavailable)) validateIntOrPercent(strategy.maxUnavailable, sp.child('maxUnavailable'), errs);
  const priority = objectAt(strategy.priorityStrategy, sp.child('priorityStrategy'), errs);
  if (priority) validatePriorityStrategy(priority, sp.child('priorityStrategy'), errs);
  validateScatterStrategy(strategy.scatterStrategy, sp.child('scatterStrategy'), errs);
}

/**
 * The most old revisions a set may keep. Each revision is a whole copy of the
 * sidecars, read on every reconcile that rolls the set and by every injection that
 * pins one; Kruise sets no bound, so a set asking for millions made every reconcile
 * list (and keep) that many. 100 is ten times the default and far more than
 * any rollback needs.
 */
export const MAX_REVISION_HISTORY_LIMIT = 100;

/** `revisionHistoryLimit`, when set, an integer of at most {@link MAX_REVISION_HISTORY_LIMIT}. */
export function validateRevisionHistoryLimit(spec: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const lp = path.child('revisionHistoryLimit');
  const limit = integerAt(spec.revisionHistoryLimit, lp, errs);
  if (limit !== undefined && limit > MAX_REVISION_HISTORY_LIMIT) {
    errs.push(lp.invalid(limit, `must be at most ${MAX_REVISION_HISTORY_LIMIT} (each kept revision is read on every reconcile)`));
  }
}

/** Rule 10 for `spec` at `path`: a pinned injection revision names one, with a known policy. */
export function validateInjectionStrategy(spec: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const ip = path.child('injectionStrategy');
  const injection = objectAt(spec.injectionStrategy, ip, errs);
  const rp = ip.child('revision');
  const revision = objectAt(injection?.revision, rp, errs);
  if (!revision) return;
  // Kruise tests for nil pointers, so "" passes there and then fails to find a
  // ControllerRevision; an empty name pins nothing, so it counts as unset here.
  const name = stringAt(revision.revisionName, rp.child('revisionName'), errs) ?? '';
  const version = stringAt(revision.customVersion, rp.child('customVersion'), errs) ?? '';
  if (name === '' && version === '') {
    errs.push(rp.required('revisionName and customVersion cannot be empty simultaneously'));
  }
  const policy = isUnset(revision.policy) ? '' : revision.policy;
  if (!(REVISION_POLICIES as readonly unknown[]).includes(policy)) {
    errs.push(rp.child('policy').unsupported(policy, REVISION_POLICIES.filter((p) => p !== '')));
  }
}
