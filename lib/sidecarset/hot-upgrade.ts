/**
 * What injection writes for a HotUpgrade sidecar (rollout.md §3.1, after
 * Kruise's injectHotUpgradeContainers): the sidecar `x` becomes `x-1`, the
 * working container with the set's image, and `x-2`, the same container with
 * `hotUpgradeEmptyImage`; the pod records their versions and which one works.
 */
import { cloneJson, objectOf, parseJsonObject, stringOf } from '../kube/json.ts';
import type { EnvVar } from '../kube/types.ts';
import { compareGoStrings, goJsonString } from './go-json.ts';
import type { SidecarContainer } from './types.ts';

/** The env vars a hot sidecar reads its own versions from (the two processes hand over by them). */
export const SIDECARSET_VERSION_ENV = 'SIDECARSET_VERSION';
export const SIDECARSET_VERSION_ALT_ENV = 'SIDECARSET_VERSION_ALT';

/** `version.sidecarset.kruise.io/<container>`: the version a hot container runs, "0" for the empty one. */
export function versionAnnotation(containerName: string): string {
  return `version.sidecarset.kruise.io/${containerName}`;
}

/** `versionalt.sidecarset.kruise.io/<container>`: the version of its partner, as it last knew it. */
export function versionAltAnnotation(containerName: string): string {
  return `versionalt.sidecarset.kruise.io/${containerName}`;
}

/** The sidecar's `hotUpgradeEmptyImage`, '' when unset (validation refuses that; a stored set may still carry it). */
export function hotUpgradeEmptyImage(sidecar: SidecarContainer): string {
  return stringOf(objectOf(sidecar.upgradeStrategy)?.hotUpgradeEmptyImage) ?? '';
}

/** The two pod containers of the HotUpgrade sidecar `name`: `[name-1, name-2]`. */
export function hotUpgradeContainerNames(name: string): [string, string] {
  return [`${name}-1`, `${name}-2`];
}

/**
 * Splits a built sidecar (its env, IS_INJECTED, transferred envs and shared
 * mounts already in) into its two containers, in order. Each gets the version
 * envs appended, pointing at its own annotations; appended, not merged, as
 * Kruise does, so a sidecar that declares one of them itself keeps both.
 */
export function splitHotUpgradeSidecar(sidecar: SidecarContainer): [SidecarContainer, SidecarContainer] {
  const [working, empty] = hotUpgradeContainerNames(sidecar.name);
  const emptyImage = hotUpgradeEmptyImage(sidecar);
  // A deep copy, so the pod never holds one object in two places (the answer's diff and later writes rely on it).
  const idle: SidecarContainer = { ...cloneJson(sidecar), name: empty, image: emptyImage };
  // Go omits an empty image (omitempty); validation requires one, but a stored set is not validated again.
  if (emptyImage === '') delete idle.image;
  return [withVersionEnv({ ...sidecar, name: working }), withVersionEnv(idle)];
}

function withVersionEnv(container: SidecarContainer): SidecarContainer {
  const fieldRef = (annotation: string): EnvVar['valueFrom'] => ({ fieldRef: { fieldPath: `metadata.annotations['${annotation}']` } });
  const env: EnvVar[] = [
    ...(container.env ?? []),
    { name: SIDECARSET_VERSION_ENV, valueFrom: fieldRef(versionAnnotation(container.name)) },
    { name: SIDECARSET_VERSION_ALT_ENV, valueFrom: fieldRef(versionAltAnnotation(container.name)) },
  ];
  return { ...container, env };
}

/**
 * The four version annotations of a freshly injected hot sidecar: the working
 * container runs version "1" and its partner "0" (empty), and each knows the
 * other's.
 */
export function initialVersionAnnotations(name: string): [string, string][] {
  const [working, empty] = hotUpgradeContainerNames(name);
  return [
    [versionAnnotation(working), '1'],
    [versionAltAnnotation(working), '0'],
    [versionAnnotation(empty), '0'],
    [versionAltAnnotation(empty), '1'],
  ];
}

/**
 * The pod's working-container map as Kruise decodes it into a
 * map[string]string: text that is not a JSON object gives an empty map; an
 * entry whose value is not a string is kept with "" (Go stores the zero
 * value and reports an error Kruise ignores), so writing the map back keeps
 * every key Kruise keeps.
 */
export function parseWorkingHotUpgrade(value: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, entry] of Object.entries(parseJsonObject(value) ?? {})) out.set(key, typeof entry === 'string' ? entry : '');
  return out;
}

/** The map as Go's json.Marshal writes a map[string]string: keys in byte order, strings escaped as Go does. */
export function formatWorkingHotUpgrade(map: ReadonlyMap<string, string>): string {
  const keys = [...map.keys()].sort(compareGoStrings);
  return `{${keys.map((k) => `${goJsonString(k)}:${goJsonString(map.get(k) ?? '')}`).join(',')}}`;
}

