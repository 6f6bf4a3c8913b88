/**
 * A container's `resources`, as Kubernetes' ValidateResourceRequirements
 * (1.32, as Kruise 1.9 runs it; 1.30's for all but the claims' `request`) checks them: known resource names,
 * quantities that parse and are not negative, whole vendor resources, no
 * request above its limit (or, for hugepages and vendor resources, other than
 * its limit), and no resource claims (the pod Kruise checks in has none).
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { dns1123LabelErrors, qualifiedNameErrors } from '../kube/names.ts';
import { canonicalQuantity, compareQuantities, MAX_QUANTITY_LENGTH, quantityFromJson, type Quantity } from '../kube/quantity.ts';
import { isObject } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import { listAt, objectAt } from './validate-shape.ts';

const STANDARD_CONTAINER_RESOURCES: ReadonlySet<string> = new Set(['cpu', 'memory', 'ephemeral-storage']);
/** helper.standardResources: what a resource name without a domain may be anywhere in Kubernetes. */
const STANDARD_RESOURCES: ReadonlySet<string> = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'storage',
  'requests.storage',
  'services.nodeports',
  'services.loadbalancers',
]);
const ZERO: Quantity = { unscaled: 0n, exponent: 0, format: 'DecimalSI' };

/** Go's resource.ErrFormatWrong, which the API server answers when a quantity does not parse. */
const FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const isHugePages = (name: string): boolean => name.startsWith('hugepages-');
/** helper.IsNativeResource: no domain, or a kubernetes.io one. */
const isNative = (name: string): boolean => !name.includes('/') || name.includes('kubernetes.io/');
/** helper.IsExtendedResourceName: a vendor resource (`example.com/gpu`), counted in whole units. */
function isExtended(name: string): boolean {
  if (isNative(name) || name.startsWith('requests.')) return false;
  return qualifiedNameErrors(`requests.${name}`).length === 0;
}
/** helper.IsOvercommitAllowed: native resources other than hugepages may request less than their limit. */
const overcommitAllowed = (name: string): boolean => isNative(name) && !isHugePages(name);

/** validateContainerResourceName, with validateResourceName before it. */
function resourceNameErrors(name: string): string[] {
  const errs = qualifiedNameErrors(name);
  if (errs.length > 0) return errs;
  if (!name.includes('/')) {
    if (!STANDARD_RESOURCES.has(name) && !isHugePages(name) && !name.startsWith('requests.hugepages-')) {
      errs.push('must be a standard resource type or fully qualified');
    }
    if (!STANDARD_CONTAINER_RESOURCES.has(name) && !isHugePages(name)) errs.push('must be a standard resource for containers');
  } else if (!isNative(name) && !isExtended(name)) {
    errs.push("doesn't follow extended resource name standard");
  }
  return errs;
}

/** Whether Go's Quantity.MilliValue() (rounded up) is a whole number of units. */
function milliIsWhole(q: Quantity): boolean {
  const shift = q.exponent + 3;
  if (shift >= 0) return (q.unscaled * 10n ** BigInt(shift)) % 1000n === 0n;
  const div = 10n ** BigInt(-shift);
  let milli = q.unscaled / div;
  if (q.unscaled % div !== 0n && q.unscaled > 0n) milli += 1n;
  return milli % 1000n === 0n;
}

/** The parsed quantities of `limits` or `requests`, with errors for bad names and values (ValidateResourceQuantityValue). */
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
      continue;
    }
    if (q === undefined) {
      errs.push(p.invalid(raw, FORMAT_WRONG));
      continue;
    }
    if (compareQuantities(q, ZERO) < 0) errs.push(p.invalid(canonicalQuantity(q), 'must be greater than or equal to 0'));
    if (isExtended(name) && !milliIsWhole(q)) errs.push(p.invalid(canonicalQuantity(q), 'must be an integer'));
    out.set(name, q);
  }
  return out;
}

/**
 * validateResourceClaimNames, as Kubernetes 1.32 has it for Kruise 1.9: a
 * claim may name one of its requests (`request`, a DNS-1123 label), and an
 * entry repeats another when it names the same claim and request, or the
 * whole claim after a request of it (or a request of it after the whole
 * claim, caught as the same name). The pod Kruise validates in declares no
 * resource claims, so every named claim is also reported as not found.
 */
function validateClaims(value: unknown, path: FieldPath, errs: FieldError[]): void {
  // The entries named so far: "claim", or "claim/request"; and how many of them hold a "/", by what precedes it
  // (Kubernetes walks its set for those: counted here, so a long list is read once).
  const names = new Set<string>();
  const withSlash = new Map<string, number>();
  listAt(value, path, errs).forEach((claim, i) => {
    const p = path.index(i);
    const name = isObject(claim) && typeof claim.name === 'string' ? claim.name : '';
    if (name === '') {
      errs.push(p.required());
      return;
    }
    if (names.has(name)) {
      // Every request of that claim was already referenced.
      errs.push(p.duplicate(name));
    } else {
      const request = isObject(claim) && typeof claim.request === 'string' ? claim.request : '';
      let key = name;
      if (request !== '') {
        for (const msg of dns1123LabelErrors(request)) errs.push(p.child('request').invalid(request, msg));
        key = `${name}/${request}`;
      }
      // The same entry again; or the whole claim after some of its requests (Kubernetes adds one error per request
      // named before, all alike, which its aggregate prints once: so does this).
      if (names.has(key)) errs.push(p.duplicate(key));
      else if (request === '' && (withSlash.get(name) ?? 0) > 0) errs.push(p.duplicate(name));
      if (!names.has(key)) {
        names.add(key);
        const slash = key.indexOf('/');
        if (slash >= 0) withSlash.set(key.slice(0, slash), (withSlash.get(key.slice(0, slash)) ?? 0) + 1);
      }
    }
    errs.push({ path: String(p), type: 'Not found', value: name, detail: 'must be one of the names in pod.spec.resourceClaims which is empty' });
  });
}

/** `resources` of one container at `path` (ValidateResourceRequirements), e.g. `spec.containers[0].resources`. */
export function validateResources(resources: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const limPath = path.child('limits');
  const reqPath = path.child('requests');
  const limits = validateResourceList(resources.limits, limPath, errs);
  const requests = validateResourceList(resources.requests, reqPath, errs);
  // Kubernetes reports these on the requests map, not on the entry.
  for (const [name, request] of requests) {
    const limit = limits.get(name);
    if (limit !== undefined) {
      const order = compareQuantities(request, limit);
      if (order !== 0 && !overcommitAllowed(name)) {
        errs.push(reqPath.invalid(canonicalQuantity(request), `must be equal to ${name} limit of ${canonicalQuantity(limit)}`));
      } else if (order > 0) {
        errs.push(reqPath.invalid(canonicalQuantity(request), `must be less than or equal to ${name} limit of ${canonicalQuantity(limit)}`));
      }
    } else if (!overcommitAllowed(name)) {
      errs.push(limPath.required('Limit must be set for non overcommitable resources'));
    }
  }
  const names = [...limits.keys(), ...requests.keys()];
  if (names.some(isHugePages) && !names.some((n) => n === 'cpu' || n === 'memory')) errs.push(path.forbidden('HugePages require cpu or memory'));
  validateClaims(resources.claims, path.child('claims'), errs);
}
