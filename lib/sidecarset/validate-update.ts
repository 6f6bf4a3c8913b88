/**
 * Rule 12 of the SidecarSet validation: what an UPDATE may not change.
 *
 * Pods keep the sidecars they were injected with, and the in-place updater
 * can only swap images of containers the pods already have; so an update may
 * not introduce a container, nor switch a container between cold and hot
 * upgrade (hot upgrade needs a second, empty container in every pod). Like
 * Kruise, this applies to `spec.containers` only. A native sidecar added to
 * `spec.initContainers` by an update changes the without-image hash, so the
 * rollout leaves every pod injected before as not upgradable and says so,
 * as for any change beyond an image.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';

/** Rule 12 for `spec` at `path`, against the object as stored before the update. */
export function validateUpdate(spec: JsonObject, oldObject: unknown, path: FieldPath, errs: FieldError[]): void {
  const oldSpec = objectOf(objectOf(oldObject)?.spec);
  if (!oldSpec) return;
  // container name -> its upgrade type before the update ('' when it had none)
  const oldTypes = new Map<string, string>();
  for (const c of arrayOf(oldSpec.containers)) {
    if (isObject(c) && typeof c.name === 'string') {
      oldTypes.set(c.name, stringOf(objectOf(c.upgradeStrategy)?.upgradeType) ?? '');
    }
  }
  arrayOf(spec.containers).forEach((c, i) => {
    if (!isObject(c) || typeof c.name !== 'string') return;
    const p = path.child('containers').index(i);
    const oldType = oldTypes.get(c.name);
    if (oldType === undefined) {
      errs.push(p.child('name').forbidden(`container ${c.name} is not found in the existing SidecarSet; containers may not be added by an update`));
      return;
    }
    const newType = stringOf(objectOf(c.upgradeStrategy)?.upgradeType) ?? '';
    // An old object that never had a type (stored before defaulting) may still get one.
    if (oldType !== '' && newType !== oldType) {
      errs.push(p.child('upgradeStrategy').child('upgradeType').invalid(newType, `container ${c.name} upgradeType is immutable`));
    }
  });
}
