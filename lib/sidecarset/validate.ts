/**
 * SidecarSet validation (spec section 3), for the validating webhook on
 * SidecarSet CREATE and UPDATE.
 *
 * The object arrives as untrusted JSON after the defaulting webhook and
 * before the CRD schema check, so every field may hold any type: problems
 * become field errors, never exceptions. All problems are collected and
 * returned together, with Kubernetes-style paths
 * (`spec.containers[0].image: Required value`). Everything the rules need
 * from the cluster (other sets, Namespace labels) is passed in, so the
 * validation is pure.
 */
import { root, type FieldError, type FieldPath } from '../kube/field-errors.ts';
import { isObject } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import { canaryBaseOf } from './canary.ts';
import { validateCanary } from './validate-canary.ts';
import { validateContainers } from './validate-containers.ts';
import { validateAgainstOthers } from './validate-cross.ts';
import { validatePatchPodMetadata } from './validate-patch-metadata.ts';
import { validateSelectors } from './validate-selectors.ts';
import { validateSpecSize } from './validate-size.ts';
import { isUnset, objectAt, stringAt } from './validate-shape.ts';
import { validateInjectionStrategy, validateRevisionHistoryLimit, validateUpdateStrategy } from './validate-strategy.ts';
import { validateUpdate } from './validate-update.ts';
import type { SidecarSet } from './types.ts';

/** What validation needs besides the object itself. */
export interface ValidationContext {
  operation: 'CREATE' | 'UPDATE';
  /** The stored object, on UPDATE. */
  oldObject?: SidecarSet;
  /** The cluster's SidecarSets; may include the object itself (by name), which is skipped. */
  others: readonly SidecarSet[];
  /** Namespace name -> its labels. */
  namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /**
   * The sets a canary's base is looked up among (rule 14), when they are not
   * `others`: the webhook reads them first and compares with the other sets
   * (rule 13) only once every other rule passed, as Kruise does.
   */
  bases?: readonly SidecarSet[];
}

const NAME_MAX_LENGTH = 63;
const NAME_PATTERN = /^[a-zA-Z0-9-]+$/;

/** Rule 1: a name Kruise accepts (it is used in pod annotations and label values). Returns the name. */
function validateName(metadata: JsonObject | undefined, path: FieldPath, errs: FieldError[]): string | undefined {
  const p = path.child('name');
  const name = stringAt(metadata?.name, p, errs);
  if (isUnset(metadata?.name) || name === '') {
    errs.push(p.required('name or generateName is required'));
    return undefined;
  }
  if (name === undefined) return undefined;
  if (!NAME_PATTERN.test(name)) {
    errs.push(
      p.invalid(
        name,
        "sidecarset name must consist of alphanumeric characters or '-' (e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')",
      ),
    );
  }
  if (name.length > NAME_MAX_LENGTH) errs.push(p.invalid(name, `must be no more than ${NAME_MAX_LENGTH} characters`));
  return name;
}

/**
 * Every problem with a SidecarSet, or [] when it may be admitted.
 *
 * Rules 1-12 look at the object (and, on UPDATE, the old one); rule 14, a
 * canary's annotations, also looks up its base in `ctx.bases` (or
 * `ctx.others`), so a canary is validated with the cluster's sets from the
 * start. Rule 13, the
 * conflicts with other sets, runs only when they found nothing, as in Kruise:
 * comparing a malformed set with others would mostly report noise.
 */
export function validateSidecarSet(object: unknown, ctx: ValidationContext): FieldError[] {
  if (!isObject(object)) return [root.invalid(object, 'a SidecarSet must be a JSON object')];
  const errs: FieldError[] = [];
  const metadata = objectAt(object.metadata, root.child('metadata'), errs);
  const name = validateName(metadata, root.child('metadata'), errs);
  if (name !== undefined) validateCanary(object, name, ctx.oldObject, ctx.bases ?? ctx.others, root.child('metadata'), errs);

  const specPath = root.child('spec');
  const spec = objectAt(object.spec, specPath, errs);
  if (isUnset(object.spec)) errs.push(specPath.required());
  if (spec) {
    validateSelectors(spec, specPath, errs);
    validateContainers(spec, specPath, errs);
    validateUpdateStrategy(spec, specPath, errs);
    validateInjectionStrategy(spec, specPath, errs);
    validateRevisionHistoryLimit(spec, specPath, errs);
    validatePatchPodMetadata(spec, specPath, errs);
    validateSpecSize(spec, specPath, errs);
    if (ctx.operation === 'UPDATE') validateUpdate(spec, ctx.oldObject, specPath, errs);
  }
  if (errs.length > 0 || spec === undefined || name === undefined) return errs;

  validateAgainstOthers(name, canaryBaseOf(object), spec, specPath, ctx, errs);
  return errs;
}

/**
 * Rule 13 alone, for an object {@link validateSidecarSet} found nothing wrong
 * with when given no other sets (and, for a canary, these same sets as
 * `bases`): rules 1-12 read only the object and, on UPDATE, the old one, so
 * with the cluster's sets they would find nothing again. The result is then
 * what validateSidecarSet gives with `ctx`.
 */
export function validateSidecarSetAgainstCluster(object: unknown, ctx: ValidationContext): FieldError[] {
  const metadata = isObject(object) ? object.metadata : undefined;
  const name = isObject(metadata) ? metadata.name : undefined;
  const spec = isObject(object) ? object.spec : undefined;
  // Not an object that passed rules 1-12: run them all rather than trust the caller.
  if (typeof name !== 'string' || name === '' || !isObject(spec)) return validateSidecarSet(object, ctx);
  const errs: FieldError[] = [];
  validateAgainstOthers(name, canaryBaseOf(object as SidecarSet), spec, root.child('spec'), ctx, errs);
  return errs;
}
