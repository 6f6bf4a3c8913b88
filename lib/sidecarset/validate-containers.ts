/**
 * Rules 4-7 of the SidecarSet validation: the sidecar containers and the
 * volumes they mount.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { isObject } from '../kube/json.ts';
import { qualifiedNameErrors } from '../kube/names.ts';
import type { JsonObject } from '../kube/types.ts';
import {
  validateAppContainerRules,
  validateContainerCommon,
  validateImageWhitespace,
  validateInitContainerRules,
  validateInitRestartPolicy,
} from './validate-core-container.ts';
import { splitSubscript } from './validate-env.ts';
import { validateHostPortConflicts } from './validate-ports.ts';
import { validateResourcesPolicy } from './validate-resources-policy.ts';
import { enumAt, isUnset, listAt, objectAt, stringAt, forEachObjectAt } from './validate-shape.ts';
import { validateVolumes } from './validate-volumes.ts';
import { POD_INJECT_POLICIES, SHARE_VOLUME_POLICIES, UPGRADE_TYPES } from './types.ts';

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

/**
 * Rules 6 and 7: the fields a SidecarContainer adds to a core Container.
 * Kruise checks podInjectPolicy, shareVolumePolicy and transferEnv on
 * `spec.containers` only, and so do we: an init container with any other
 * value is accepted and injected as Kruise injects it.
 */
function validateSidecarFields(c: JsonObject, path: FieldPath, errs: FieldError[]): void {
  enumAt(c.podInjectPolicy, POD_INJECT_POLICIES, path.child('podInjectPolicy'), errs);
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
 * The upgrade type, checked on every sidecar (the status and update logic
 * read it for both lists). A HotUpgrade sidecar that injection splits in two
 * (any in `containers`, a native sidecar among the init containers) needs
 * `hotUpgradeEmptyImage` for its idle copy: Kruise does not check, and every
 * pod it selects is then refused at creation for a container without an
 * image. A plain init container runs once and is injected as written, so
 * there it is not needed.
 */
function validateUpgradeType(c: JsonObject, path: FieldPath, init: boolean, errs: FieldError[]): void {
  const up = path.child('upgradeStrategy');
  const upgrade = objectAt(c.upgradeStrategy, up, errs);
  const type = enumAt(upgrade?.upgradeType, UPGRADE_TYPES, up.child('upgradeType'), errs);
  if (type !== 'HotUpgrade' || (init && c.restartPolicy !== 'Always')) return;
  const emptyImage = stringAt(upgrade?.hotUpgradeEmptyImage, up.child('hotUpgradeEmptyImage'), errs);
  if (isUnset(upgrade?.hotUpgradeEmptyImage) || emptyImage === '') {
    errs.push(up.child('hotUpgradeEmptyImage').required('a HotUpgrade sidecar needs the image of its idle copy'));
  }
}

function goName(c: JsonObject): string {
  return typeof c.name === 'string' ? c.name : '';
}

/** The items of a container list, each either an object or reported. */
function containerObjects(items: readonly unknown[], path: FieldPath, errs: FieldError[]): { c: JsonObject; p: FieldPath }[] {
  const out: { c: JsonObject; p: FieldPath }[] = [];
  items.forEach((c, i) => {
    const p = path.index(i);
    if (isObject(c)) out.push({ c, p });
    else errs.push(p.invalid(c, 'must be an object'));
  });
  return out;
}

/**
 * Rules 4-7 for `spec` at `path`: at least one sidecar; the SidecarContainer
 * fields of the app sidecars; then what Kubernetes' pod validation finds in
 * the volumes, app containers and init containers, in its order: each
 * container well formed, names unique across both lists (as in the pod),
 * host ports not taken twice, and images without surrounding spaces last.
 */
export function validateContainers(spec: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const initPath = path.child('initContainers');
  const appPath = path.child('containers');
  const initItems = listAt(spec.initContainers, initPath, errs);
  const appItems = listAt(spec.containers, appPath, errs);
  if (initItems.length === 0 && appItems.length === 0) {
    errs.push(appPath.required('no initContainer or container defined for SidecarSet'));
    return;
  }
  const inits = containerObjects(initItems, initPath, errs);
  const apps = containerObjects(appItems, appPath, errs);
  for (const { c, p } of apps) validateSidecarFields(c, p, errs);
  for (const { c, p } of inits) validateUpgradeType(c, p, true, errs);
  for (const { c, p } of apps) validateUpgradeType(c, p, false, errs);
  for (const { c, p } of inits) validateResourcesPolicy(c, p, true, errs);
  for (const { c, p } of apps) validateResourcesPolicy(c, p, false, errs);

  const volumeNames = validateVolumes(spec.volumes, path.child('volumes'), errs);

  const appNames = new Set<string>();
  for (const { c, p } of apps) {
    validateContainerCommon(c, p, volumeNames, errs);
    // Go compares the names it decoded, so an empty (or, for us, mistyped) name is "".
    const name = goName(c);
    if (appNames.has(name)) errs.push(p.child('name').duplicate(name));
    appNames.add(name);
    validateAppContainerRules(c, p, errs);
  }
  validateHostPortConflicts(appItems, appPath, errs);

  const allNames = new Set(appNames);
  for (const { c, p } of inits) {
    validateContainerCommon(c, p, volumeNames, errs);
    const restartAlways = validateInitRestartPolicy(c, p, errs);
    const name = goName(c);
    if (allNames.has(name)) errs.push(p.child('name').duplicate(name));
    else if (name !== '') allNames.add(name);
    validateHostPortConflicts([c], initPath, errs);
    validateInitContainerRules(c, p, restartAlways, errs);
  }

  for (const { c, p } of apps) validateImageWhitespace(c, p, errs);
  for (const { c, p } of inits) validateImageWhitespace(c, p, errs);
}
