/**
 * The cloud and network disk volume sources, as Kubernetes 1.30's
 * validateVolumeSource checks them for Kruise 1.8: mostly the fields each
 * needs, with Kubernetes' paths (including `persistentDisk` for
 * gcePersistentDisk) and messages.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { dns1123LabelErrors } from '../kube/names.ts';
import type { JsonObject } from '../kube/types.ts';
import { text } from './validate-paths.ts';
import { integerAt, isUnset, listAt, objectAt, stringAt } from './validate-shape.ts';

type Check = (source: JsonObject, path: FieldPath, errs: FieldError[]) => void;

/** Each of `fields` must be a non-empty string (or, for lists, a non-empty list). */
function required(source: JsonObject, path: FieldPath, fields: readonly string[], errs: FieldError[]): void {
  for (const key of fields) {
    const value = source[key];
    const empty = Array.isArray(value) ? value.length === 0 : text(value, path.child(key), errs) === '';
    if (empty) errs.push(path.child(key).required());
  }
}

/** The same required fields checked under another path, as Kubernetes does for gcePersistentDisk. */
function requiring(fields: readonly string[], extra?: Check, pathName?: string): { check: Check; pathName?: string } {
  return {
    check: (source, path, errs) => {
      required(source, path, fields, errs);
      extra?.(source, path, errs);
    },
    ...(pathName === undefined ? {} : { pathName }),
  };
}

const PARTITION_MESSAGE = 'must be between 1 and 255, inclusive';
const LUN_MESSAGE = 'must be between 0 and 255, inclusive';

function partition(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const n = integerAt(source.partition, path.child('partition'), errs);
  if (n !== undefined && (n < 0 || n > 255)) errs.push(path.child('partition').invalid(n, PARTITION_MESSAGE));
}

const IQN = /iqn\.\d{4}-\d{2}\.([A-Za-z0-9.-]+)(:[^,;*&$|\t\n\f\r ]+)$/;
const EUI = /^eui.[A-Za-z0-9]{16}$/;
const NAA = /^naa.[A-Za-z0-9]{32}$/;

/** The iSCSI qualified name formats; undefined when the name has a known prefix and matches it. */
function iscsiNameError(name: string): string | undefined {
  if (name.startsWith('iqn')) return IQN.test(name) ? undefined : 'must be valid format';
  if (name.startsWith('eui')) return EUI.test(name) ? undefined : 'must be valid format';
  if (name.startsWith('naa')) return NAA.test(name) ? undefined : 'must be valid format';
  return 'must be valid format starting with iqn, eui, or naa';
}

function iscsi(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  required(source, path, ['targetPortal'], errs);
  const iqn = text(source.iqn, path.child('iqn'), errs);
  if (iqn === '') errs.push(path.child('iqn').required());
  else {
    const msg = iscsiNameError(iqn);
    if (msg !== undefined) errs.push(path.child('iqn').invalid(iqn, msg));
  }
  const lun = integerAt(source.lun, path.child('lun'), errs);
  if (lun !== undefined && (lun < 0 || lun > 255)) errs.push(path.child('lun').invalid(lun, LUN_MESSAGE));
  if ((source.chapAuthDiscovery === true || source.chapAuthSession === true) && isUnset(source.secretRef)) {
    errs.push(path.child('secretRef').required());
  }
  const initiator = stringAt(source.initiatorName, path.child('initiatorName'), errs);
  if (initiator !== undefined) {
    // Kubernetes reports the initiator under a lower-case `initiatorname`.
    const msg = iscsiNameError(initiator);
    if (msg !== undefined) errs.push(path.child('initiatorname').invalid(initiator, msg));
  }
}

function flocker(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const name = text(source.datasetName, path.child('datasetName'), errs);
  const uuid = text(source.datasetUUID, path.child('datasetUUID'), errs);
  if (name === '' && uuid === '') errs.push(path.required('one of datasetName and datasetUUID is required'));
  if (name !== '' && uuid !== '') errs.push(path.invalid('resource', 'datasetName and datasetUUID can not be specified simultaneously'));
  if (name.includes('/')) errs.push(path.child('datasetName').invalid(name, "must not contain '/'"));
}

/** Go's net.SplitHostPort succeeds: `host:port` or `[host]:port`, one unbracketed colon. */
function isHostPort(pair: string): boolean {
  if (pair.startsWith('[')) return /^\[[^\]]*\]:[^:\]]*$/.test(pair);
  return /^[^:[\]]*:[^:[\]]*$/.test(pair);
}

function quobyte(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const registry = text(source.registry, path.child('registry'), errs);
  const tenant = text(source.tenant, path.child('tenant'), errs);
  const registryMessage = 'must be a host:port pair or multiple pairs separated by commas';
  if (registry === '') errs.push(path.child('registry').required(registryMessage));
  else if (Buffer.byteLength(tenant) >= 65) {
    errs.push(path.child('tenant').required('must be a UUID and may not exceed a length of 64 characters'));
  } else {
    for (const pair of registry.split(',')) {
      if (!isHostPort(pair)) errs.push(path.child('registry').invalid(registry, registryMessage));
    }
  }
  required(source, path, ['volume'], errs);
}

function fc(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const wwns = listAt(source.targetWWNs, path.child('targetWWNs'), errs);
  const wwids = listAt(source.wwids, path.child('wwids'), errs);
  if (wwns.length === 0 && wwids.length === 0) {
    errs.push(path.child('targetWWNs').required('must specify either targetWWNs or wwids, but not both'));
  }
  if (wwns.length > 0 && wwids.length > 0) {
    errs.push(path.child('targetWWNs').invalid(wwns, 'targetWWNs and wwids can not be specified simultaneously'));
  }
  if (wwns.length === 0) return;
  const lun = integerAt(source.lun, path.child('lun'), errs);
  if (isUnset(source.lun)) errs.push(path.child('lun').required('lun is required if targetWWNs is specified'));
  else if (lun !== undefined && (lun < 0 || lun > 255)) errs.push(path.child('lun').invalid(lun, LUN_MESSAGE));
}

function flexVolume(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  required(source, path, ['driver'], errs);
  const options = objectAt(source.options, path.child('options'), errs);
  for (const key of Object.keys(options ?? {})) {
    const slash = key.indexOf('/');
    const domain = `.${(slash >= 0 ? key.slice(0, slash) : key).toLowerCase()}`;
    if (domain.endsWith('.kubernetes.io') || domain.endsWith('.k8s.io')) {
      errs.push(path.child('options').key(key).invalid(key, 'kubernetes.io and k8s.io namespaces are reserved'));
    }
  }
}

const CACHING_MODES = ['None', 'ReadOnly', 'ReadWrite'] as const;
const DISK_KINDS = ['Dedicated', 'Managed', 'Shared'] as const;

function azureDisk(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  required(source, path, ['diskName', 'diskURI'], errs);
  const uri = typeof source.diskURI === 'string' ? source.diskURI : '';
  const caching = stringAt(source.cachingMode, path.child('cachingMode'), errs);
  if (caching !== undefined && !(CACHING_MODES as readonly string[]).includes(caching)) {
    errs.push(path.child('cachingMode').unsupported(caching, CACHING_MODES));
  }
  const kind = stringAt(source.kind, path.child('kind'), errs);
  if (kind === undefined) return;
  if (!(DISK_KINDS as readonly string[]).includes(kind)) errs.push(path.child('kind').unsupported(kind, DISK_KINDS));
  if (kind === 'Managed' && !uri.startsWith('/subscriptions/')) {
    errs.push(path.child('diskURI').unsupported(uri, ['/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}']));
  }
  if (kind !== 'Managed' && !uri.startsWith('https://')) {
    errs.push(path.child('diskURI').unsupported(uri, ['https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd']));
  }
}

/** A secretRef, when set, names its secret. */
function secretRefName(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const ref = objectAt(source.secretRef, path.child('secretRef'), errs);
  if (ref !== undefined && text(ref.name, path.child('secretRef').child('name'), errs) === '') {
    errs.push(path.child('secretRef').child('name').required());
  }
}

function storageos(source: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const name = text(source.volumeName, path.child('volumeName'), errs);
  if (name === '') errs.push(path.child('volumeName').required());
  else for (const msg of dns1123LabelErrors(name)) errs.push(path.child('volumeName').invalid(name, msg));
  const ns = text(source.volumeNamespace, path.child('volumeNamespace'), errs);
  if (ns !== '') for (const msg of dns1123LabelErrors(ns)) errs.push(path.child('volumeNamespace').invalid(ns, msg));
  secretRefName(source, path, errs);
}

/**
 * The disk sources by JSON field. `pathName` is where Kubernetes reports a
 * source's own fields when it differs from the field's name.
 */
export const DISK_CHECKS: Readonly<Record<string, { check: Check; pathName?: string }>> = {
  gcePersistentDisk: requiring(['pdName'], partition, 'persistentDisk'),
  awsElasticBlockStore: requiring(['volumeID'], partition),
  iscsi: { check: iscsi },
  glusterfs: requiring(['endpoints', 'path']),
  flocker: { check: flocker },
  rbd: requiring(['monitors', 'image']),
  cinder: requiring(['volumeID'], secretRefName),
  cephfs: requiring(['monitors']),
  quobyte: { check: quobyte },
  fc: { check: fc },
  flexVolume: { check: flexVolume },
  azureFile: requiring(['secretName', 'shareName']),
  vsphereVolume: requiring(['volumePath']),
  photonPersistentDisk: requiring(['pdID']),
  portworxVolume: requiring(['volumeID']),
  azureDisk: { check: azureDisk },
  storageos: { check: storageos },
  scaleIO: requiring(['gateway', 'system', 'volumeName']),
};

/**
 * The length rule validateVolumeSource adds for iSCSI: with an initiator
 * name, `<volume name>:<targetPortal>` must fit 64 characters.
 */
export function validateIscsiNameLength(volume: JsonObject, namePath: FieldPath, errs: FieldError[]): void {
  const source = objectAt(volume.iscsi, namePath, []);
  if (source === undefined || isUnset(source.initiatorName)) return;
  const name = typeof volume.name === 'string' ? volume.name : '';
  const portal = typeof source.targetPortal === 'string' ? source.targetPortal : '';
  if (Buffer.byteLength(`${name}:${portal}`) > 64) {
    errs.push(
      namePath.invalid(name, 'Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.'),
    );
  }
}
