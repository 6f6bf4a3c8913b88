/**
 * A container's `resources`, as Kubernetes' ValidateResourceRequirements
 * checks them: known resource names, quantities that parse and are not
 * negative, and no request above its limit.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { qualifiedNameErrors } from '../kube/names.ts';
import { canonicalQuantity, compareQuantities, MAX_QUANTITY_LENGTH, quantityFromJson, type Quantity } from '../kube/quantity.ts';
import type { JsonObject } from '../kube/types.ts';
import { objectAt } from './validate-shape.ts';

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const ZERO: Quantity = { unscaled: 0n, exponent: 0, format: 'DecimalSI' };

/** Go's resource.ErrFormatWrong, which the API server answers when a quantity does not parse. */
const FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** validateContainerResourceName: a qualified name, and a standard one when it has no domain prefix. */
function resourceNameErrors(name: string): string[] {
  const errs = qualifiedNameErrors(name);
  if (errs.length === 0 && !name.includes('/') && !STANDARD_CONTAINER_RESOURCES.has(name) && !name.startsWith('hugepages-')) {
    errs.push('must be a standard resource for containers');
  }
  return errs;
}

/** The parsed quantities of `limits` or `requests`, with errors for bad names and values. */
function validateResourceList(value: unknown, path: FieldPath, errs: FieldError[]): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  const list = objectAt(value, path, errs);
  if (!list) return out;
  for (const [name, raw] of Object.entries(list)) {
    const p = path.key(name);
    for (const msg of resourceNameErrors(name)) errs.push(p.invalid(name, msg));
    const q = quantityFromJson(raw);
    if (typeof raw === 'string' && raw.length > MAX_QUANTITY_LENGTH) {
      errs.push(p.invalid(raw, `must be no more than ${MAX_QUANTITY_LENGTH} characters`));
    } else if (q === undefined) {
      errs.push(p.invalid(raw, FORMAT_WRONG));
    } else if (compareQuantities(q, ZERO) < 0) {
      errs.push(p.invalid(canonicalQuantity(q), 'must be greater than or equal to 0'));
    } else {
      out.set(name, q);
    }
  }
  return out;
}

/** `resources` of one container at `path` (e.g. `spec.containers[0].resources`). */
export function validateResources(resources: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const limits = validateResourceList(resources.limits, path.child('limits'), errs);
  const requests = validateResourceList(resources.requests, path.child('requests'), errs);
  for (const [name, request] of requests) {
    const limit = limits.get(name);
    if (limit !== undefined && compareQuantities(request, limit) > 0) {
      errs.push(
        path
          .child('requests')
          .key(name)
          .invalid(canonicalQuantity(request), `must be less than or equal to ${name} limit of ${canonicalQuantity(limit)}`),
      );
    }
  }
}
