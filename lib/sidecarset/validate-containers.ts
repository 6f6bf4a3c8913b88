/**
 * Rules 4-7 of the SidecarSet validation: the sidecar containers and the
 * volumes they mount.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { isObject } from '../kube/json.ts';
import { dns1123LabelErrors, qualifiedNameErrors } from '../kube/names.ts';
import type { JsonObject } from '../kube/types.ts';
import { validateContainerName, validateCoreContainer } from './validate-core-container.ts';
import { enumAt, isUnset, listAt, objectAt, stringAt, forEachObjectAt } from './validate-shape.ts';
import { POD_INJECT_POLICIES, SHARE_VOLUME_POLICIES, UPGRADE_TYPES } from './types.ts';

/** Rule 5: volume names are unique DNS-1123 labels. Returns the names, for the volumeMount check. */
function validateVolumes(value: unknown, path: FieldPath, errs: FieldError[]): Set<string> {
  const names = new Set<string>();
  forEachObjectAt(value, path, errs, (volume, itemPath) => {
    const p = itemPath.child('name');
    const name = stringAt(volume.name, p, errs);
    if (isUnset(volume.name) || name === '') {
      errs.push(p.required());
    } else if (name !== undefined) {
      for (const msg of dns1123LabelErrors(name)) errs.push(p.invalid(name, msg));
      if (names.has(name)) errs.push(p.duplicate(name));
      names.add(name);
    }
  });
  return names;
}

/** Splits `metadata.labels['k']` as Kubernetes' fieldpath.SplitMaybeSubscriptedPath does. */
function splitSubscript(fieldPath: string): [string, string] | undefined {
  if (!fieldPath.endsWith("']")) return undefined;
  const at = fieldPath.indexOf("['");
  if (at <= 0) return undefined;
  return [fieldPath.slice(0, at), fieldPath.slice(at + 2, -2)];
}

/**
 * Rule 7: a transferEnv source name read from the pod must come from one
 * label or annotation (Kruise's ConvertDownwardAPIFieldLabel accepts only
 * those, subscripted, for apiVersion v1).
 */
function validateTransferEnvFieldRef(ref: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const apiVersion = stringAt(ref.apiVersion, path.child('apiVersion'), errs);
  if (isUnset(ref.apiVersion) || apiVersion === '') {
    errs.push(path.child('apiVersion').required());
    return;
  }
  const fpPath = path.child('fieldPath');
  const fieldPath = stringAt(ref.fieldPath, fpPath, errs);
  if (isUnset(ref.fieldPath) || fieldPath === '') {
    errs.push(fpPath.required());
    return;
  }
  if (apiVersion === undefined || fieldPath === undefined) return;
  if (apiVersion !== 'v1') {
    errs.push(path.child('apiVersion').unsupported(apiVersion, ['v1']));
    return;
  }
  const split = splitSubscript(fieldPath);
  if (split === undefined) {
    errs.push(fpPath.invalid(fieldPath, "must be metadata.labels['<key>'] or metadata.annotations['<key>']"));
    return;
  }
  const [base, key] = split;
  if (base !== 'metadata.labels' && base !== 'metadata.annotations') {
    errs.push(fpPath.invalid(fieldPath, `field path not supported: ${base}`));
    return;
  }
  // Annotation keys are checked lower-cased, as Kubernetes does for the downward API.
  const msgs = qualifiedNameErrors(base === 'metadata.annotations' ? key.toLowerCase() : key);
  for (const msg of msgs) errs.push(fpPath.invalid(fieldPath, msg));
}

/** Rules 6 and 7: the fields a SidecarContainer adds to a core Container. */
function validateSidecarFields(c: JsonObject, path: FieldPath, errs: FieldError[]): void {
  enumAt(c.podInjectPolicy, POD_INJECT_POLICIES, path.child('podInjectPolicy'), errs);
  const upgrade = objectAt(c.upgradeStrategy, path.child('upgradeStrategy'), errs);
  enumAt(upgrade?.upgradeType, UPGRADE_TYPES, path.child('upgradeStrategy').child('upgradeType'), errs);
  const share = objectAt(c.shareVolumePolicy, path.child('shareVolumePolicy'), errs);
  enumAt(share?.type, SHARE_VOLUME_POLICIES, path.child('shareVolumePolicy').child('type'), errs);

  const tePath = path.child('transferEnv');
  forEachObjectAt(c.transferEnv, tePath, errs, (item, p) => {
    const from = objectAt(item.sourceContainerNameFrom, p.child('sourceContainerNameFrom'), errs);
    const refPath = p.child('sourceContainerNameFrom').child('fieldRef');
    const ref = objectAt(from?.fieldRef, refPath, errs);
    if (ref) validateTransferEnvFieldRef(ref, refPath, errs);
  });
}

/**
 * Rules 4-7 for `spec` at `path`: at least one sidecar; names unique across
 * init and normal containers (as they must be in the pod); each container
 * well formed, mounting only `spec.volumes`, with valid SidecarContainer
 * fields. Kruise checks podInjectPolicy, shareVolumePolicy and transferEnv
 * only on normal containers; init containers are injected with the same
 * fields, so they are checked the same way here.
 */
export function validateContainers(spec: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const volumeNames = validateVolumes(spec.volumes, path.child('volumes'), errs);
  const initContainers = listAt(spec.initContainers, path.child('initContainers'), errs);
  const containers = listAt(spec.containers, path.child('containers'), errs);
  if (initContainers.length === 0 && containers.length === 0) {
    errs.push(path.child('containers').required('no initContainer or container defined for SidecarSet'));
    return;
  }
  const names = new Set<string>();
  const groups = [
    { key: 'initContainers', init: true, items: initContainers },
    { key: 'containers', init: false, items: containers },
  ];
  for (const { key, init, items } of groups) {
    items.forEach((c, i) => {
      const p = path.child(key).index(i);
      if (!isObject(c)) {
        errs.push(p.invalid(c, 'must be an object'));
        return;
      }
      const name = validateContainerName(c, p, errs);
      if (name !== undefined) {
        if (names.has(name)) errs.push(p.child('name').duplicate(name));
        names.add(name);
      }
      validateCoreContainer(c, p, { init, volumeNames }, errs);
      validateSidecarFields(c, p, errs);
    });
  }
}
