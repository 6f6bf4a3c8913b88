/**
 * A container's `volumeDevices` (raw block devices), as Kubernetes 1.32's
 * ValidateVolumeDevices checks them for Kruise 1.9 (as 1.30's did), with its paths and
 * messages; and the names and paths a container's mounts and devices may
 * not share.
 */
import { root, type FieldError, type FieldPath } from '../kube/field-errors.ts';
import { isObject } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import { forEachObjectAt, listAt, stringAt } from './validate-shape.ts';

/**
 * What a mount or device needs to know of a valid volume: a claim
 * (persistentVolumeClaim or ephemeral) is the only kind a block device may
 * use; an image volume's mounts may not take a subPath.
 */
export type VolumeKind = 'claim' | 'image' | 'other';

/** Name to path of a container's mounts or devices (Go's GetVolumeMountMap/GetVolumeDeviceMap: the last of a name wins), with the set of paths. */
export interface NamedPaths {
  byName: ReadonlyMap<string, string>;
  paths: ReadonlySet<string>;
}

/** The names and paths of a container's `volumeMounts` (pathKey `mountPath`) or `volumeDevices` (`devicePath`), read once. */
export function namedPaths(list: unknown, pathKey: 'mountPath' | 'devicePath'): NamedPaths {
  const byName = new Map<string, string>();
  for (const item of listAt(list, root, [])) {
    if (!isObject(item)) continue;
    const name = typeof item.name === 'string' ? item.name : '';
    byName.set(name, typeof item[pathKey] === 'string' ? item[pathKey] : '');
  }
  return { byName, paths: new Set(byName.values()) };
}

/**
 * `volumeDevices` of `container` at `path`. `volumes` maps the names of the
 * volumes without errors to their kind: a claim (persistentVolumeClaim or
 * ephemeral) is the only kind a block device may use.
 */
export function validateVolumeDevices(container: JsonObject, path: FieldPath, volumes: ReadonlyMap<string, VolumeKind>, mounts: NamedPaths, errs: FieldError[]): void {
  const names = new Set<string>();
  const paths = new Set<string>();
  forEachObjectAt(container.volumeDevices, path, errs, (device, p) => {
    const name = stringAt(device.name, p.child('name'), errs) ?? '';
    const devicePath = stringAt(device.devicePath, p.child('devicePath'), errs) ?? '';
    const kind = volumes.get(name);
    if (name === '') errs.push(p.child('name').required());
    if (names.has(name)) errs.push(p.child('name').invalid(name, 'must be unique'));
    if (kind !== undefined && kind !== 'claim') errs.push(p.child('name').invalid(name, 'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode'));
    if (kind === undefined) errs.push(p.child('name').notFound(name));
    if (devicePath === '') errs.push(p.child('devicePath').required());
    if (paths.has(devicePath)) errs.push(p.child('devicePath').invalid(devicePath, 'must be unique'));
    if (devicePath !== '' && devicePath.split('/').includes('..')) {
      errs.push(p.child('devicePath').invalid(devicePath, "can not contain backsteps ('..')"));
    } else {
      paths.add(devicePath);
    }
    if (mounts.byName.has(name)) errs.push(p.child('name').invalid(name, 'must not already exist in volumeMounts'));
    if (mounts.paths.has(devicePath)) errs.push(p.child('devicePath').invalid(devicePath, 'must not already exist as a path in volumeMounts'));
    if (name !== '') names.add(name);
  });
}
