/**
 * A container's `env` and `envFrom`, as Kubernetes 1.30's ValidateEnv and
 * ValidateEnvFrom check them for Kruise 1.8 (which passes no
 * AllowRelaxedEnvironmentVariableValidation, so names follow the strict
 * C-identifier-like rule), with Kubernetes' paths and messages.
 *
 * Go reads the object into structs first, so an unset string and "" are the
 * same thing here, as they are there.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { configMapKeyErrors, dns1123SubdomainErrors, dns1123SubdomainPrefixErrors, envVarNameErrors, qualifiedNameErrors } from '../kube/names.ts';
import { canonicalQuantity, compareQuantities, quantityFromJson } from '../kube/quantity.ts';
import type { JsonObject } from '../kube/types.ts';
import { text } from './validate-paths.ts';
import { forEachObjectAt, isUnset, objectAt } from './validate-shape.ts';

/** The pod fields an env var may read through the downward API (validEnvDownwardAPIFieldPathExpressions), sorted as Go lists them. */
const ENV_FIELD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
] as const;

/** Every label the API converts for a v1 pod (ConvertDownwardAPIFieldLabel); spec.host is an old alias of spec.nodeName. */
const CONVERTIBLE_LABELS: ReadonlySet<string> = new Set([
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.serviceAccountName',
  'spec.schedulerName',
  'status.phase',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
]);

const RESOURCE_FIELD_PATHS = [
  'limits.cpu',
  'limits.ephemeral-storage',
  'limits.memory',
  'requests.cpu',
  'requests.ephemeral-storage',
  'requests.memory',
] as const;
const RESOURCE_FIELD_PATH_SET: ReadonlySet<string> = new Set(RESOURCE_FIELD_PATHS);
const HUGEPAGES_PREFIXES = ['limits.hugepages-', 'requests.hugepages-'] as const;

const CPU_DIVISORS: ReadonlySet<string> = new Set(['1m', '1']);
const BYTE_DIVISORS: ReadonlySet<string> = new Set(['1', '1k', '1M', '1G', '1T', '1P', '1E', '1Ki', '1Mi', '1Gi', '1Ti', '1Pi', '1Ei']);
const BYTE_DIVISORS_TEXT = '1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei';

/** Splits `metadata.labels['k']` as Kubernetes' fieldpath.SplitMaybeSubscriptedPath does. */
export function splitSubscript(fieldPath: string): [string, string] | undefined {
  if (!fieldPath.endsWith("']")) return undefined;
  const at = fieldPath.indexOf("['");
  if (at <= 0) return undefined;
  return [fieldPath.slice(0, at), fieldPath.slice(at + 2, -2)];
}

/** podshelper.ConvertDownwardAPIFieldLabel's error for a label, or undefined when it converts. */
function conversionError(apiVersion: string, label: string): string | undefined {
  if (apiVersion !== 'v1') return `unsupported pod version: ${apiVersion}`;
  const split = splitSubscript(label);
  if (split !== undefined) {
    return split[0] === 'metadata.annotations' || split[0] === 'metadata.labels'
      ? undefined
      : `field label does not support subscript: ${label}`;
  }
  return CONVERTIBLE_LABELS.has(label) || label === 'spec.host' ? undefined : `field label not supported: ${label}`;
}

/**
 * validateObjectFieldSelector: a downward API field reference whose field is
 * one of `allowed` (env vars and volume files allow different ones).
 */
export function validateDownwardFieldRef(ref: JsonObject, allowed: readonly string[], path: FieldPath, errs: FieldError[]): void {
  const apiVersion = text(ref.apiVersion, path.child('apiVersion'), errs);
  const fieldPath = text(ref.fieldPath, path.child('fieldPath'), errs);
  if (apiVersion === '') {
    errs.push(path.child('apiVersion').required());
    return;
  }
  if (fieldPath === '') {
    errs.push(path.child('fieldPath').required());
    return;
  }
  const failure = conversionError(apiVersion, fieldPath);
  if (failure !== undefined) {
    errs.push(path.child('fieldPath').invalid(fieldPath, `error converting fieldPath: ${failure}`));
    return;
  }
  const internal = fieldPath === 'spec.host' ? 'spec.nodeName' : fieldPath;
  const split = splitSubscript(internal);
  if (split !== undefined) {
    const [base, key] = split;
    // Annotation keys are checked lower-cased, as Kubernetes does.
    const msgs = qualifiedNameErrors(base === 'metadata.annotations' ? key.toLowerCase() : key);
    for (const msg of msgs) errs.push(path.invalid(key, msg));
  } else if (!allowed.includes(internal)) {
    errs.push(path.child('fieldPath').unsupported(internal, allowed));
  }
}

function validateFieldRef(ref: JsonObject, path: FieldPath, errs: FieldError[]): void {
  validateDownwardFieldRef(ref, ENV_FIELD_PATHS, path, errs);
}

/** validateContainerResourceDivisor: only the divisors the kubelet can apply to the resource. */
function validateDivisor(resource: string, raw: unknown, path: FieldPath, errs: FieldError[]): void {
  if (isUnset(raw)) return;
  const q = quantityFromJson(raw);
  if (q === undefined) {
    errs.push(path.child('divisor').invalid(raw, 'must be a quantity'));
    return;
  }
  if (compareQuantities(q, { unscaled: 0n, exponent: 0, format: 'DecimalSI' }) === 0) return;
  const shown = canonicalQuantity(q);
  const p = path.child('divisor');
  if (resource === 'limits.cpu' || resource === 'requests.cpu') {
    if (!CPU_DIVISORS.has(shown)) errs.push(p.invalid(resource, "only divisor's values 1m and 1 are supported with the cpu resource"));
  } else if (resource === 'limits.memory' || resource === 'requests.memory') {
    if (!BYTE_DIVISORS.has(shown)) {
      errs.push(p.invalid(resource, `only divisor's values ${BYTE_DIVISORS_TEXT} are supported with the memory resource`));
    }
  } else if (resource === 'limits.ephemeral-storage' || resource === 'requests.ephemeral-storage') {
    if (!BYTE_DIVISORS.has(shown)) {
      errs.push(p.invalid(resource, `only divisor's values ${BYTE_DIVISORS_TEXT} are supported with the local ephemeral storage resource`));
    }
  }
  if (HUGEPAGES_PREFIXES.some((prefix) => resource.startsWith(prefix)) && !BYTE_DIVISORS.has(shown)) {
    errs.push(p.invalid(resource, `only divisor's values ${BYTE_DIVISORS_TEXT} are supported with the hugepages resource`));
  }
}

/**
 * validateContainerResourceFieldSelector. A volume file must name its
 * container; an env var reads its own container's resources.
 */
export function validateResourceFieldRef(ref: JsonObject, path: FieldPath, volume: boolean, errs: FieldError[]): void {
  const containerName = text(ref.containerName, path.child('containerName'), errs);
  const resource = text(ref.resource, path.child('resource'), errs);
  if (volume && containerName === '') {
    errs.push(path.child('containerName').required());
  } else if (resource === '') {
    errs.push(path.child('resource').required());
  } else if (!RESOURCE_FIELD_PATH_SET.has(resource) && !HUGEPAGES_PREFIXES.some((prefix) => resource.startsWith(prefix))) {
    errs.push(path.child('resource').unsupported(resource, RESOURCE_FIELD_PATHS));
  }
  validateDivisor(resource, ref.divisor, path, errs);
}

/** validateConfigMapKeySelector and validateSecretKeySelector, which are the same. */
function validateKeySelector(ref: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const name = text(ref.name, path.child('name'), errs);
  for (const msg of dns1123SubdomainErrors(name)) errs.push(path.child('name').invalid(name, msg));
  const key = text(ref.key, path.child('key'), errs);
  if (key === '') errs.push(path.child('key').required());
  else for (const msg of configMapKeyErrors(key)) errs.push(path.child('key').invalid(key, msg));
}

const VALUE_FROM_SOURCES = [
  ['fieldRef', validateFieldRef],
  [
    'resourceFieldRef',
    (ref: JsonObject, path: FieldPath, errs: FieldError[]) => {
      validateResourceFieldRef(ref, path, false, errs);
    },
  ],
  ['configMapKeyRef', validateKeySelector],
  ['secretKeyRef', validateKeySelector],
] as const;

/** validateEnvVarValueFrom: exactly one source, and no `value` beside it. */
function validateValueFrom(item: JsonObject, value: string, path: FieldPath, errs: FieldError[]): void {
  const from = objectAt(item.valueFrom, path, errs);
  if (from === undefined) return;
  let sources = 0;
  for (const [key, check] of VALUE_FROM_SOURCES) {
    const source = objectAt(from[key], path.child(key), errs);
    if (source === undefined) continue;
    sources++;
    // Kruise passes AllowHostIPsField, so Kubernetes' Forbidden for status.hostIPs never applies.
    check(source, path.child(key), errs);
  }
  if (sources === 0) {
    errs.push(path.invalid('', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
  } else if (value !== '') {
    errs.push(path.invalid('', 'may not be specified when `value` is not empty'));
  } else if (sources > 1) {
    errs.push(path.invalid('', 'may not have more than one field specified at a time'));
  }
}

/** `env` of one container at `path` (e.g. `spec.containers[0].env`). */
export function validateEnv(value: unknown, path: FieldPath, errs: FieldError[]): void {
  forEachObjectAt(value, path, errs, (item, itemPath) => {
    const name = text(item.name, itemPath.child('name'), errs);
    if (name === '') errs.push(itemPath.child('name').required());
    else for (const msg of envVarNameErrors(name)) errs.push(itemPath.child('name').invalid(name, msg));
    const envValue = text(item.value, itemPath.child('value'), errs);
    validateValueFrom(item, envValue, itemPath.child('valueFrom'), errs);
  });
}

/** validateConfigMapEnvSource / validateSecretEnvSource: a name that could be a generateName prefix. */
function validateEnvSourceName(ref: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const name = text(ref.name, path.child('name'), errs);
  if (name === '') errs.push(path.child('name').required());
  else for (const msg of dns1123SubdomainPrefixErrors(name)) errs.push(path.child('name').invalid(name, msg));
}

/**
 * `envFrom` of one container at `path`. As in Kubernetes, the "one source"
 * errors are reported on the list (`envFrom`), not on the item.
 */
export function validateEnvFrom(value: unknown, path: FieldPath, errs: FieldError[]): void {
  forEachObjectAt(value, path, errs, (item, itemPath) => {
    const prefix = text(item.prefix, itemPath.child('prefix'), errs);
    if (prefix !== '') for (const msg of envVarNameErrors(prefix)) errs.push(itemPath.child('prefix').invalid(prefix, msg));
    let sources = 0;
    for (const key of ['configMapRef', 'secretRef'] as const) {
      const ref = objectAt(item[key], itemPath.child(key), errs);
      if (ref === undefined) continue;
      sources++;
      validateEnvSourceName(ref, itemPath.child(key), errs);
    }
    if (sources === 0) errs.push(path.invalid('', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (sources > 1) errs.push(path.invalid('', 'may not have more than one field specified at a time'));
  });
}
