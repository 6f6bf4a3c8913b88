/**
 * `spec.volumes`, as Kubernetes 1.30's ValidateVolumes checks a pod's volumes
 * for Kruise 1.8: a valid unique name, exactly one volume source, and that
 * source well formed, with Kubernetes' paths and messages (including its
 * `downwarAPI` spelling in one path).
 *
 * As in Kubernetes, a volume with any error is left out of the names the
 * volume mounts may use, so its mounts are also reported as not found.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { dns1123LabelErrors, dns1123SubdomainErrors } from '../kube/names.ts';
import { canonicalQuantity, compareQuantities, quantityFromJson } from '../kube/quantity.ts';
import type { JsonObject } from '../kube/types.ts';
import { isObject } from '../kube/json.ts';
import { validateDownwardFieldRef, validateResourceFieldRef } from './validate-env.ts';
import { forEachObjectAt, integerAt, isUnset, listAt, objectAt, stringAt } from './validate-shape.ts';

const FILE_MODE_MESSAGE = 'must be a number between 0 and 0777 (octal), both inclusive';
const MAX_FILE_MODE = 0o777;

/** The volume sources in the order Kubernetes tests them; the second one found is the one reported. */
const VOLUME_SOURCES = [
  'emptyDir',
  'hostPath',
  'gitRepo',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'flocker',
  'persistentVolumeClaim',
  'rbd',
  'cinder',
  'cephfs',
  'quobyte',
  'downwardAPI',
  'fc',
  'flexVolume',
  'configMap',
  'azureFile',
  'vsphereVolume',
  'photonPersistentDisk',
  'portworxVolume',
  'azureDisk',
  'storageos',
  'projected',
  'scaleIO',
  'csi',
  'ephemeral',
] as const;
type VolumeSource = (typeof VOLUME_SOURCES)[number];

/** Where Kubernetes reports a second source; it spells two of them differently from the JSON field. */
const EXTRA_SOURCE_PATH: Partial<Record<VolumeSource, string>> = { cephfs: 'cephFS', downwardAPI: 'downwarAPI' };

/** Sorted as Go's sets.List prints them; "" is Kubernetes' HostPathUnset. */
const HOST_PATH_TYPES = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'] as const;
const HOST_PATH_TYPE_SET: ReadonlySet<string> = new Set(HOST_PATH_TYPES);

const VOLUME_FIELD_PATHS = ['metadata.annotations', 'metadata.labels', 'metadata.name', 'metadata.namespace', 'metadata.uid'] as const;

/** A string field as Go's struct holds it: "" when unset or (reported) of another type. */
function text(value: unknown, path: FieldPath, errs: FieldError[]): string {
  return stringAt(value, path, errs) ?? '';
}

/** validatePathNoBacksteps: no `..` element. */
function noBackstepErrors(target: string, path: FieldPath, errs: FieldError[]): void {
  if (target.split('/').includes('..')) errs.push(path.invalid(target, "must not contain '..'"));
}

/** validateLocalDescendingPath: relative, and no `..` element. Exported for volume mounts' subPath. */
export function validateLocalDescendingPath(target: string, path: FieldPath, errs: FieldError[]): void {
  if (target.startsWith('/')) errs.push(path.invalid(target, 'must be a relative path'));
  noBackstepErrors(target, path, errs);
}

/** ValidateLocalNonReservedPath: a descending path that does not start with `..` either. */
function validateLocalNonReservedPath(target: string, path: FieldPath, errs: FieldError[]): void {
  validateLocalDescendingPath(target, path, errs);
  if (target.startsWith('..') && !target.startsWith('../')) errs.push(path.invalid(target, "must not start with '..'"));
}

function validateFileMode(value: unknown, path: FieldPath, errs: FieldError[]): void {
  const mode = integerAt(value, path, errs);
  if (mode !== undefined && (mode < 0 || mode > MAX_FILE_MODE)) errs.push(path.invalid(mode, FILE_MODE_MESSAGE));
}

/** validateKeyToPath: one item of a secret or configMap volume or projection. */
function validateKeyToPath(item: JsonObject, p: FieldPath, errs: FieldError[]): void {
  if (text(item.key, p.child('key'), errs) === '') errs.push(p.child('key').required());
  const target = text(item.path, p.child('path'), errs);
  if (target === '') errs.push(p.child('path').required());
  validateLocalNonReservedPath(target, p.child('path'), errs);
  validateFileMode(item.mode, p.child('mode'), errs);
}

function validateKeyToPathItems(value: unknown, path: FieldPath, errs: FieldError[]): void {
  forEachObjectAt(value, path, errs, (item, p) => {
    validateKeyToPath(item, p, errs);
  });
}

function validateEmptyDir(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  if (isUnset(source.sizeLimit)) return;
  const limit = quantityFromJson(source.sizeLimit);
  if (limit === undefined) errs.push(path.child('sizeLimit').invalid(source.sizeLimit, 'must be a quantity'));
  else if (compareQuantities(limit, { unscaled: 0n, exponent: 0, format: 'DecimalSI' }) < 0) {
    errs.push(path.child('sizeLimit').forbidden('SizeLimit field must be a valid resource quantity'));
  }
}

function validateHostPath(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const hostPath = text(source.path, path.child('path'), errs);
  if (hostPath === '') {
    errs.push(path.child('path').required());
    return;
  }
  noBackstepErrors(hostPath, path.child('path'), errs);
  const type = stringAt(source.type, path.child('type'), errs);
  if (type !== undefined && !HOST_PATH_TYPE_SET.has(type)) errs.push(path.child('type').unsupported(type, HOST_PATH_TYPES));
}

function validateGitRepo(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  if (text(source.repository, path.child('repository'), errs) === '') errs.push(path.child('repository').required());
  validateLocalDescendingPath(text(source.directory, path.child('directory'), errs), path.child('directory'), errs);
}

function validateSecret(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  if (text(source.secretName, path.child('secretName'), errs) === '') errs.push(path.child('secretName').required());
  validateFileMode(source.defaultMode, path.child('defaultMode'), errs);
  validateKeyToPathItems(source.items, path.child('items'), errs);
}

function validateConfigMap(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  if (text(source.name, path.child('name'), errs) === '') errs.push(path.child('name').required());
  validateFileMode(source.defaultMode, path.child('defaultMode'), errs);
  validateKeyToPathItems(source.items, path.child('items'), errs);
}

function validateNfs(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  if (text(source.server, path.child('server'), errs) === '') errs.push(path.child('server').required());
  const nfsPath = text(source.path, path.child('path'), errs);
  if (nfsPath === '') errs.push(path.child('path').required());
  if (!nfsPath.startsWith('/')) errs.push(path.child('path').invalid(nfsPath, 'must be an absolute path'));
}

function validatePersistentVolumeClaim(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  if (text(source.claimName, path.child('claimName'), errs) === '') errs.push(path.child('claimName').required());
}

/** validateDownwardAPIVolumeFile. Kubernetes reports a file's problems on `path`, without the file's index. */
function validateDownwardAPIFile(file: JsonObject, path: FieldPath, errs: FieldError[]): string {
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

function validateDownwardAPI(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  validateFileMode(source.defaultMode, path.child('defaultMode'), errs);
  forEachObjectAt(source.items, path.child('items'), errs, (file) => {
    validateDownwardAPIFile(file, path, errs);
  });
}

const MIN_TOKEN_SECONDS = 10 * 60;
const MAX_TOKEN_SECONDS = 2 ** 32;

/**
 * validateProjectionSources: each source is one kind, and no two files of
 * the volume share a path. Kubernetes reports path clashes and a token's
 * missing path on the volume source itself (`projected`, `projected.path`).
 */
function validateProjected(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
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
      const name = text(ref.name, srcPath.child(kind).child('name'), errs);
      if (name === '') errs.push(srcPath.child(kind).child('name').required());
      forEachObjectAt(ref.items, srcPath.child(kind).child('items'), errs, (item, itemPath) => {
        validateKeyToPath(item, itemPath, errs);
        const filePath = typeof item.path === 'string' ? item.path : '';
        if (filePath !== '') claim(filePath, name);
      });
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
      const tp = srcPath.child('serviceAccountToken').child('expirationSeconds');
      const seconds = isUnset(token.expirationSeconds) ? 0 : integerAt(token.expirationSeconds, tp, errs);
      if (seconds !== undefined && seconds < MIN_TOKEN_SECONDS) errs.push(tp.invalid(seconds, 'may not specify a duration less than 10 minutes'));
      if (seconds !== undefined && seconds > MAX_TOKEN_SECONDS) errs.push(tp.invalid(seconds, 'may not specify a duration larger than 2^32 seconds'));
      const tokenPath = text(token.path, srcPath.child('serviceAccountToken').child('path'), errs);
      if (tokenPath === '') errs.push(path.child('path').required());
      else validateLocalNonReservedPath(tokenPath, path.child('path'), errs);
    }
    const bundle = objectAt(projection.clusterTrustBundle, srcPath.child('clusterTrustBundle'), errs);
    if (bundle !== undefined) {
      kinds++;
      validateClusterTrustBundle(bundle, srcPath.child('clusterTrustBundlePEM'), errs);
      const bundlePath = typeof bundle.path === 'string' ? bundle.path : '';
      claim(bundlePath, bundlePath);
    }
    if (kinds > 1) errs.push(srcPath.forbidden('may not specify more than 1 volume type'));
  });
}

/**
 * The shape rules of a clusterTrustBundle projection (Kubernetes reports
 * them under `clusterTrustBundlePEM`): exactly one of name and signerName,
 * and a local path. The syntax of the name and signer name is not checked
 * here; see docs/DIFFERENCES-FROM-KRUISE.md.
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

/** ValidateCSIDriverName, and the secret reference a CSI volume may carry. */
function validateCsi(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const p = path.child('driver');
  const driver = text(source.driver, p, errs);
  if (driver === '') errs.push(p.required());
  if (driver.length > 63) errs.push(p.tooLong(driver, 63));
  for (const msg of dns1123SubdomainErrors(driver.toLowerCase())) errs.push(p.invalid(driver, msg));
  const ref = objectAt(source.nodePublishSecretRef, path.child('nodePublishSecretRef'), errs);
  if (ref === undefined) return;
  const name = text(ref.name, path.child('nodePublishSecretRef').child('name'), errs);
  if (name === '') errs.push(path.child('nodePublishSecretRef').child('name').required());
  else for (const msg of dns1123SubdomainErrors(name)) errs.push(path.child('name').invalid(name, msg));
}

const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'] as const;
const VOLUME_MODES = ['Block', 'Filesystem'] as const;

/**
 * validateEphemeralVolumeSource: a claim template whose spec asks for some
 * storage in known access and volume modes (Kubernetes'
 * ValidatePersistentVolumeClaimSpec; the template's metadata, selector and
 * data sources are not checked here).
 */
function validateEphemeral(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const tp = path.child('volumeClaimTemplate');
  const template = objectAt(source.volumeClaimTemplate, tp, errs);
  if (template === undefined) {
    errs.push(tp.required());
    return;
  }
  const sp = tp.child('spec');
  const spec = objectAt(template.spec, sp, errs) ?? {};
  const modes = listAt(spec.accessModes, sp.child('accessModes'), errs);
  if (modes.length === 0) errs.push(sp.child('accessModes').required('at least 1 access mode is required'));
  let oncePod = false;
  let other = false;
  for (const mode of modes) {
    if (!(ACCESS_MODES as readonly unknown[]).includes(mode)) errs.push(sp.child('accessModes').unsupported(mode, ACCESS_MODES));
    else if (mode === 'ReadWriteOncePod') oncePod = true;
    else other = true;
  }
  if (oncePod && other) errs.push(sp.child('accessModes').forbidden('may not use ReadWriteOncePod with other access modes'));
  const requests = objectAt(objectAt(spec.resources, sp.child('resources'), errs)?.requests, sp.child('resources').child('requests'), errs);
  // Kubernetes reports the storage request under `resources`, without `requests`.
  const storagePath = sp.child('resources').key('storage');
  const storage = requests === undefined || isUnset(requests.storage) ? undefined : quantityFromJson(requests.storage);
  if (requests === undefined || isUnset(requests.storage)) errs.push(storagePath.required());
  else if (storage === undefined) errs.push(storagePath.invalid(requests.storage, 'must be a quantity'));
  else if (compareQuantities(storage, { unscaled: 0n, exponent: 0, format: 'DecimalSI' }) <= 0) {
    errs.push(storagePath.invalid(canonicalQuantity(storage), 'must be greater than zero'));
  }
  const className = stringAt(spec.storageClassName, sp.child('storageClassName'), errs);
  if (className !== undefined && className !== '') {
    for (const msg of dns1123SubdomainErrors(className)) errs.push(sp.child('storageClassName').invalid(className, msg));
  }
  const volumeMode = stringAt(spec.volumeMode, sp.child('volumeMode'), errs);
  if (volumeMode !== undefined && !(VOLUME_MODES as readonly string[]).includes(volumeMode)) {
    errs.push(sp.child('volumeMode').unsupported(volumeMode, VOLUME_MODES));
  }
}

/**
 * The sources whose own fields are checked here. The others (cloud and
 * network disks) are counted for the one-source rule only; see
 * docs/DIFFERENCES-FROM-KRUISE.md.
 */
const SOURCE_CHECKS: Partial<Record<VolumeSource, (source: JsonObject, path: FieldPath, errs: FieldError[]) => void>> = {
  emptyDir: validateEmptyDir,
  hostPath: validateHostPath,
  gitRepo: validateGitRepo,
  secret: validateSecret,
  nfs: validateNfs,
  persistentVolumeClaim: validatePersistentVolumeClaim,
  downwardAPI: validateDownwardAPI,
  configMap: validateConfigMap,
  projected: validateProjected,
  csi: validateCsi,
  ephemeral: validateEphemeral,
};

/** validateVolumeSource: exactly one source, checked. */
function validateVolumeSource(volume: JsonObject, path: FieldPath, errs: FieldError[]): void {
  let sources = 0;
  for (const key of VOLUME_SOURCES) {
    if (isUnset(volume[key])) continue;
    if (sources > 0) {
      errs.push(path.child(EXTRA_SOURCE_PATH[key] ?? key).forbidden('may not specify more than 1 volume type'));
      continue;
    }
    sources++;
    const source = objectAt(volume[key], path.child(key), errs);
    const check = SOURCE_CHECKS[key];
    if (source !== undefined && check !== undefined) check(source, path.child(key), errs);
  }
  if (sources === 0) errs.push(path.required('must specify a volume type'));
}

/**
 * Every problem with `spec.volumes` at `path`. Returns the names of the
 * volumes without problems, which are the ones a volume mount may use.
 */
export function validateVolumes(value: unknown, path: FieldPath, errs: FieldError[]): Set<string> {
  const names = new Set<string>();
  listAt(value, path, errs).forEach((volume, i) => {
    const p = path.index(i);
    if (!isObject(volume)) {
      errs.push(p.invalid(volume, 'must be an object'));
      return;
    }
    const own: FieldError[] = [];
    validateVolumeSource(volume, p, own);
    const name = text(volume.name, p.child('name'), own);
    if (name === '') own.push(p.child('name').required());
    else for (const msg of dns1123LabelErrors(name)) own.push(p.child('name').invalid(name, msg));
    if (names.has(name)) own.push(p.child('name').duplicate(name));
    if (own.length === 0) names.add(name);
    else errs.push(...own);
  });
  return names;
}
