/**
 * Downward API files and projected volumes, as Kubernetes 1.30's
 * validateDownwardAPIVolumeFile and validateProjectionSources check them for
 * Kruise 1.8, with Kubernetes' paths and messages.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import type { JsonObject } from '../kube/types.ts';
import { validateDownwardFieldRef, validateResourceFieldRef } from './validate-env.ts';
import { text, validateFileMode, validateKeyToPath, validateLocalNonReservedPath } from './validate-paths.ts';
import { forEachObjectAt, integerAt, isUnset, objectAt, stringAt } from './validate-shape.ts';

const VOLUME_FIELD_PATHS = ['metadata.annotations', 'metadata.labels', 'metadata.name', 'metadata.namespace', 'metadata.uid'] as const;

/** validateDownwardAPIVolumeFile. Kubernetes reports a file's problems on `path`, without the file's index. */
export function validateDownwardAPIFile(file: JsonObject, path: FieldPath, errs: FieldError[]): string {
  const target = text(file.path, path.child('path'), errs);
  if (target === '') errs.push(path.child('path').required());
  validateLocalNonReservedPath(target, path.child('path'), errs);
  const fieldRef = objectAt(file.fieldRef, path.child('fieldRef'), errs);
  const resourceRef = objectAt(file.resourceFieldRef, path.child('resourceFieldRef'), errs);
  if (fieldRef !== undefined) {
    validateDownwardFieldRef(fieldRef, VOLUME_FIELD_PATHS, path.child('fieldRef'), errs);
    if (resourceRef !== undefined) {
      errs.push(path.invalid('resource', 'fieldRef and resourceFieldRef can not be specified simultaneously'));
    }
  } else if (resourceRef !== undefined) {
    validateResourceFieldRef(resourceRef, path.child('resourceFieldRef'), true, errs);
  } else {
    errs.push(path.required('one of fieldRef and resourceFieldRef is required'));
  }
  validateFileMode(file.mode, path.child('mode'), errs);
  return target;
}

export function validateDownwardAPI(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  validateFileMode(source.defaultMode, path.child('defaultMode'), errs);
  forEachObjectAt(source.items, path.child('items'), errs, (file) => {
    validateDownwardAPIFile(file, path, errs);
  });
}

const MIN_TOKEN_SECONDS = 10 * 60;
const MAX_TOKEN_SECONDS = 2 ** 32;

/** A secret or configMap projection: its name, and each item's key and path (claimed for the volume). */
function validateObjectProjection(ref: JsonObject, refPath: FieldPath, claim: (filePath: string, shown: unknown) => void, errs: FieldError[]): void {
  const name = text(ref.name, refPath.child('name'), errs);
  if (name === '') errs.push(refPath.child('name').required());
  forEachObjectAt(ref.items, refPath.child('items'), errs, (item, itemPath) => {
    validateKeyToPath(item, itemPath, errs);
    const filePath = typeof item.path === 'string' ? item.path : '';
    if (filePath !== '') claim(filePath, name);
  });
}

/** A serviceAccountToken projection: its lifetime, and its path, reported on the volume source as Kubernetes does. */
function validateTokenProjection(token: JsonObject, tokenAt: FieldPath, volumePath: FieldPath, errs: FieldError[]): void {
  const tp = tokenAt.child('expirationSeconds');
  const seconds = isUnset(token.expirationSeconds) ? 0 : integerAt(token.expirationSeconds, tp, errs);
  if (seconds !== undefined && seconds < MIN_TOKEN_SECONDS) errs.push(tp.invalid(seconds, 'may not specify a duration less than 10 minutes'));
  if (seconds !== undefined && seconds > MAX_TOKEN_SECONDS) errs.push(tp.invalid(seconds, 'may not specify a duration larger than 2^32 seconds'));
  const tokenPath = text(token.path, tokenAt.child('path'), errs);
  if (tokenPath === '') errs.push(volumePath.child('path').required());
  else validateLocalNonReservedPath(tokenPath, volumePath.child('path'), errs);
}

/**
 * validateProjectionSources: each source is one kind, and no two files of
 * the volume share a path. Kubernetes reports path clashes and a token's
 * missing path on the volume source itself (`projected`, `projected.path`).
 */
export function validateProjected(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  validateFileMode(source.defaultMode, path.child('defaultMode'), errs);
  const paths = new Set<string>();
  const claim = (filePath: string, shown: unknown): void => {
    if (paths.has(filePath)) errs.push(path.invalid(shown, 'conflicting duplicate paths'));
    else paths.add(filePath);
  };
  forEachObjectAt(source.sources, path.child('sources'), errs, (projection, srcPath) => {
    let kinds = 0;
    for (const kind of ['secret', 'configMap'] as const) {
      const ref = objectAt(projection[kind], srcPath.child(kind), errs);
      if (ref === undefined) continue;
      kinds++;
      validateObjectProjection(ref, srcPath.child(kind), claim, errs);
    }
    const downward = objectAt(projection.downwardAPI, srcPath.child('downwardAPI'), errs);
    if (downward !== undefined) {
      kinds++;
      forEachObjectAt(downward.items, srcPath.child('downwardAPI').child('items'), errs, (file) => {
        const filePath = validateDownwardAPIFile(file, srcPath.child('downwardAPI'), errs);
        if (filePath !== '') claim(filePath, filePath);
      });
    }
    const token = objectAt(projection.serviceAccountToken, srcPath.child('serviceAccountToken'), errs);
    if (token !== undefined) {
      kinds++;
      validateTokenProjection(token, srcPath.child('serviceAccountToken'), path, errs);
    }
    const bundle = objectAt(projection.clusterTrustBundle, srcPath.child('clusterTrustBundle'), errs);
    if (bundle !== undefined) {
      kinds++;
      validateClusterTrustBundle(bundle, srcPath.child('clusterTrustBundle'), errs);
      const bundlePath = typeof bundle.path === 'string' ? bundle.path : '';
      claim(bundlePath, bundlePath);
    }
    // Kubernetes 1.32's words (Kruise 1.9); 1.30 said "more than 1 volume type" and reported the bundle at clusterTrustBundlePEM.
    if (kinds > 1) errs.push(srcPath.forbidden('may not specify more than 1 volume type per source'));
  });
}

/**
 * The shape rules of a clusterTrustBundle projection (reported under
 * `clusterTrustBundle`, as Kubernetes 1.32 does): exactly one of name and signerName,
 * and a local path. The syntax of the name and signer name is not checked
 * here; see docs/DIFFERENCES-FROM-KRUISE-1.9.md.
 */
function validateClusterTrustBundle(bundle: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const name = stringAt(bundle.name, path.child('name'), errs);
  const signer = stringAt(bundle.signerName, path.child('signerName'), errs);
  if (name !== undefined && signer !== undefined) {
    errs.push(path.invalid(bundle, 'only one of name and signerName may be used'));
  } else if (name !== undefined) {
    if (name === '') errs.push(path.child('name').required('must be a valid object name'));
    if (!isUnset(bundle.labelSelector)) {
      errs.push(path.child('labelSelector').invalid(bundle.labelSelector, 'labelSelector must be unset if name is specified'));
    }
  } else if (signer !== undefined) {
    if (signer === '') errs.push(path.child('signerName').required('must be a valid signer name'));
  } else {
    errs.push(path.required('either name or signerName must be specified'));
  }
  const target = text(bundle.path, path.child('path'), errs);
  if (target === '') errs.push(path.child('path').required());
  validateLocalNonReservedPath(target, path.child('path'), errs);
}

