/**
 * A container's `volumeMounts`, as Kubernetes 1.32's ValidateVolumeMounts
 * checks them for Kruise 1.9 (1.30's rules, and no subPath or subPathExpr on
 * a mount of an image volume), with its paths and messages, including its
 * quirks: an empty name is both required and not found, and the subPath,
 * subPathExpr, mountPropagation and recursiveReadOnly errors are reported on
 * the list's path, without the mount's index.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import type { JsonObject } from '../kube/types.ts';
import { forEachObjectAt, stringAt } from './validate-shape.ts';
import type { NamedPaths, VolumeKind } from './validate-volume-devices.ts';
import { validateLocalDescendingPath } from './validate-paths.ts';

const PROPAGATIONS = ['Bidirectional', 'HostToContainer', 'None'] as const;
const RECURSIVE_READ_ONLY = ['Disabled', 'Enabled', 'IfPossible'] as const;

/** validateMountPropagation for a mount of `container`. */
function validatePropagation(propagation: string, container: JsonObject, path: FieldPath, errs: FieldError[]): void {
  if (!(PROPAGATIONS as readonly string[]).includes(propagation)) errs.push(path.unsupported(propagation, PROPAGATIONS));
  const sc = container.securityContext;
  const privileged = typeof sc === 'object' && sc !== null && (sc as JsonObject).privileged === true;
  if (propagation === 'Bidirectional' && !privileged) {
    errs.push(path.forbidden('Bidirectional mount propagation is available only to privileged containers'));
  }
}

/** validateMountRecursiveReadOnly. */
function validateRecursiveReadOnly(mount: JsonObject, value: string, propagation: string | undefined, path: FieldPath, errs: FieldError[]): void {
  if (value === 'Disabled') return;
  if (value === 'Enabled' || value === 'IfPossible') {
    if (mount.readOnly !== true) errs.push(path.forbidden('may only be specified when readOnly is true'));
    if (propagation !== undefined && propagation !== 'None') {
      errs.push(path.forbidden('may only be specified when mountPropagation is None or not specified'));
    }
    return;
  }
  errs.push(path.unsupported(value, RECURSIVE_READ_ONLY));
}

/**
 * `volumeMounts` of `container` at `path`; `volumeNames` are the volumes
 * without errors and their kinds (see validate-volumes.ts), `devices` the container's
 * volumeDevices, whose names and paths a mount may not reuse.
 */
export function validateVolumeMounts(
  container: JsonObject,
  path: FieldPath,
  volumeNames: ReadonlyMap<string, VolumeKind>,
  devices: NamedPaths,
  errs: FieldError[],
): void {
  const mountPaths = new Set<string>();
  forEachObjectAt(container.volumeMounts, path, errs, (mount, p) => {
    const name = stringAt(mount.name, p.child('name'), errs) ?? '';
    if (name === '') errs.push(p.child('name').required());
    if (!volumeNames.has(name)) errs.push(p.child('name').notFound(name));
    const mountPath = stringAt(mount.mountPath, p.child('mountPath'), errs) ?? '';
    if (mountPath === '') errs.push(p.child('mountPath').required());
    if (mountPaths.has(mountPath)) errs.push(p.child('mountPath').invalid(mountPath, 'must be unique'));
    mountPaths.add(mountPath);
    if (devices.byName.has(name)) errs.push(p.child('name').invalid(name, 'must not already exist in volumeDevices'));
    if (devices.paths.has(mountPath)) errs.push(p.child('mountPath').invalid(mountPath, 'must not already exist as a path in volumeDevices'));

    const subPath = stringAt(mount.subPath, p.child('subPath'), errs) ?? '';
    const subPathExpr = stringAt(mount.subPathExpr, p.child('subPathExpr'), errs) ?? '';
    if (volumeNames.get(name) === 'image') {
      if (subPath !== '') errs.push(p.child('subPath').invalid(subPath, 'not allowed in image volume sources'));
      if (subPathExpr !== '') errs.push(p.child('subPathExpr').invalid(subPathExpr, 'not allowed in image volume sources'));
    }
    if (subPath !== '') validateLocalDescendingPath(subPath, path.child('subPath'), errs);
    if (subPathExpr !== '') {
      if (subPath !== '') errs.push(p.child('subPathExpr').invalid(subPathExpr, 'subPathExpr and subPath are mutually exclusive'));
      validateLocalDescendingPath(subPathExpr, path.child('subPathExpr'), errs);
    }
    const propagation = stringAt(mount.mountPropagation, p.child('mountPropagation'), errs);
    if (propagation !== undefined) validatePropagation(propagation, container, path.child('mountPropagation'), errs);
    const rro = stringAt(mount.recursiveReadOnly, p.child('recursiveReadOnly'), errs);
    if (rro !== undefined) validateRecursiveReadOnly(mount, rro, propagation, path.child('recursiveReadOnly'), errs);
  });
}
