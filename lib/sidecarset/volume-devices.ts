/**
 * OpenKruise 1.9's `shareVolumeDevicePolicy`: a sidecar with `type: enabled`
 * also gets the `volumeDevices` of the pod's app containers (not those of
 * injected sidecars), as Kruise's GetInjectedVolumeDevices and
 * MergeVolumeDevices give them: the sidecar's own devices first, then each
 * app device whose `devicePath` is not taken yet, by one of the sidecar's
 * devices or one of its mounts (the shared mounts included, which Kruise
 * merges first). The volumes those devices name are the pod's own.
 * Without the policy, or with it absent (a pointer in Kruise), nothing is
 * shared and the hash is 1.8's.
 */
import { arrayOf, cloneJson, isObject, objectOf } from '../kube/json.ts';
import type { Container, JsonObject } from '../kube/types.ts';
import type { SidecarContainer } from './types.ts';

/** `shareVolumeDevicePolicy.type: enabled`. */
export function sharesVolumeDevices(sidecar: SidecarContainer): boolean {
  return objectOf(sidecar.shareVolumeDevicePolicy)?.type === 'enabled';
}

/**
 * The sidecar's volumeDevices with the app containers' merged in, as copies;
 * the sidecar's own list when it does not share them.
 */
export function mergedVolumeDevices(sidecar: SidecarContainer, apps: readonly Container[]): unknown {
  if (!sharesVolumeDevices(sidecar)) return sidecar.volumeDevices;
  const own = arrayOf<JsonObject>(sidecar.volumeDevices);
  const taken = new Set<unknown>([
    ...own.map((d) => objectOf(d)?.devicePath),
    ...arrayOf<JsonObject>(sidecar.volumeMounts).map((m) => objectOf(m)?.mountPath),
  ]);
  const devices: unknown[] = [...own];
  for (const app of apps) {
    for (const device of arrayOf<JsonObject>(app.volumeDevices)) {
      if (!isObject(device) || taken.has(device.devicePath)) continue;
      taken.add(device.devicePath);
      devices.push(cloneJson(device));
    }
  }
  return devices.length === 0 ? sidecar.volumeDevices : devices;
}
