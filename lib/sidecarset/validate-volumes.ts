/**
 * `spec.volumes`, as Kubernetes 1.32's ValidateVolumes checks a pod's volumes
 * for Kruise 1.9: a valid unique name, exactly one volume source, and that
 * source well formed, with Kubernetes' paths and messages (including its
 * `downwarAPI` spelling in one path). 1.32 knows the `image` source (an OCI
 * image mounted read-only), which 1.30 did not.
 *
 * As in Kubernetes, a volume with any error is left out of the names the
 * volume mounts may use, so its mounts are also reported as not found.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { dns1123LabelErrors, dns1123SubdomainErrors } from '../kube/names.ts';
import { canonicalQuantity, compareQuantities, quantityFromJson } from '../kube/quantity.ts';
import { isObject } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import { noBackstepErrors, text, validateFileMode, validateKeyToPathItems, validateLocalDescendingPath } from './validate-paths.ts';
import { isUnset, listAt, objectAt, stringAt } from './validate-shape.ts';
import type { VolumeKind } from './validate-volume-devices.ts';
import { DISK_CHECKS, validateIscsiNameLength } from './validate-volume-disks.ts';
import { validateDownwardAPI, validateProjected } from './validate-volume-projected.ts';

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
  'image',
] as const;
type VolumeSource = (typeof VOLUME_SOURCES)[number];

/** Where Kubernetes reports a second source; it spells two of them differently from the JSON field. */
const EXTRA_SOURCE_PATH: Partial<Record<VolumeSource, string>> = { cephfs: 'cephFS', downwardAPI: 'downwarAPI' };

/** Sorted as Go's sets.List prints them; "" is Kubernetes' HostPathUnset. */
const HOST_PATH_TYPES = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'] as const;
const HOST_PATH_TYPE_SET: ReadonlySet<string> = new Set(HOST_PATH_TYPES);


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

/** validatePullPolicy's values, as Go's sets.List sorts them. */
export const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;

/**
 * validateImageVolumeSource with Kruise's options (ResourceIsPod false: a
 * SidecarSet's volume may leave `reference` empty, as a workload template's
 * may). `pullPolicy` is required: Kubernetes defaults it only when its
 * ImageVolume feature gate is on, which Kruise 1.9's webhook leaves off (alpha
 * in 1.32), so nothing fills it in before validation.
 */
function validateImage(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  text(source.reference, path.child('reference'), errs);
  const p = path.child('pullPolicy');
  const policy = text(source.pullPolicy, p, errs);
  if (policy === '') errs.push(p.required());
  else if (!(PULL_POLICIES as readonly string[]).includes(policy)) errs.push(p.unsupported(policy, PULL_POLICIES));
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
 * The sources whose own fields are checked here; the cloud and network
 * disks are in validate-volume-disks.ts.
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
  image: validateImage,
};

/** The checks of one volume source; the disk sources report under their own path name. */
function checkSource(key: VolumeSource, value: unknown, path: FieldPath, errs: FieldError[]): void {
  const source = objectAt(value, path.child(key), errs);
  if (source === undefined) return;
  const check = SOURCE_CHECKS[key];
  const disk = DISK_CHECKS[key];
  if (check !== undefined) check(source, path.child(key), errs);
  else if (disk !== undefined) disk.check(source, path.child(disk.pathName ?? key), errs);
}

/** validateVolumeSource: exactly one source, checked. */
function validateVolumeSource(volume: JsonObject, path: FieldPath, errs: FieldError[]): void {
  let sources = 0;
  for (const key of VOLUME_SOURCES) {
    if (isUnset(volume[key])) continue;
    if (sources > 0) {
      errs.push(path.child(EXTRA_SOURCE_PATH[key] ?? key).forbidden('may not specify more than 1 volume type'));
    } else {
      sources++;
      checkSource(key, volume[key], path, errs);
    }
    if (key === 'iscsi') validateIscsiNameLength(volume, path.child('name'), errs);
  }
  if (sources === 0) errs.push(path.required('must specify a volume type'));
}

function kindOf(volume: JsonObject): VolumeKind {
  if (!isUnset(volume.persistentVolumeClaim) || !isUnset(volume.ephemeral)) return 'claim';
  return isUnset(volume.image) ? 'other' : 'image';
}

/**
 * Every problem with `spec.volumes` at `path`. Returns the volumes without
 * problems, which are the ones a volume mount or device may use, by name.
 */
export function validateVolumes(value: unknown, path: FieldPath, errs: FieldError[]): Map<string, VolumeKind> {
  const names = new Map<string, VolumeKind>();
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
    if (own.length === 0) names.set(name, kindOf(volume));
    else errs.push(...own);
  });
  return names;
}
