/**
 * Which fields other than the image changed, for a pod that cannot be
 * updated in place (rollout.md §1.6): Kruise only says "not upgradable";
 * this names what to look at (sidecarset.md §7 "Why is it waiting?").
 *
 * The pod's sidecar containers are compared with the set's, as injection
 * would have made them: a field the set gives must be on the pod as given
 * (the API server defaults what the set leaves out, and injection adds env
 * and mounts, so a field the pod has and the set lacks is only a change for
 * fields nothing defaults). The SidecarSet-only fields (podInjectPolicy,
 * shareVolumePolicy, transferEnv, upgradeStrategy) and removed mounts never
 * reach the pod and cannot be seen this way: then the answer
 * says so. Pure, linear in the containers' size.
 */
import { arrayOf, isObject, jsonEqual, stringOf } from '../kube/json.ts';
import type { Container, JsonObject, Pod } from '../kube/types.ts';
import { hotUpgradeContainerNames } from '../sidecarset/hot-upgrade.ts';
import { SIDECAR_ENV } from '../sidecarset/inject.ts';
import type { SidecarContainer, SidecarSet } from '../sidecarset/types.ts';
import { isHotUpgrade, podContainers, podNativeSidecars, setContainers, setNativeSidecars } from '../sidecarset/pod-state.ts';

/** Fields only a SidecarSet has, and fields a change of which is not a change of the sidecar's spec. */
const NOT_COMPARED = new Set(['name', 'image', 'podInjectPolicy', 'upgradeStrategy', 'shareVolumePolicy', 'transferEnv']);
/** Container fields nothing defaults or adds: present on the pod and absent from the set is a change. */
const NEVER_DEFAULTED = ['command', 'args', 'workingDir', 'envFrom', 'ports', 'lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe', 'stdin', 'stdinOnce', 'tty', 'restartPolicy'];
/** What the answer says when the pod shows no difference. */
export const INVISIBLE_CHANGE = 'a field not visible on the pod (podInjectPolicy, shareVolumePolicy, transferEnv, upgradeStrategy, or a removed mount)';

/** `given` (from the set) is on the pod as `actual`, where the pod may carry more (defaults). */
function containedIn(given: unknown, actual: unknown): boolean {
  if (Array.isArray(given)) {
    return Array.isArray(actual) && given.length === actual.length && given.every((g, i) => containedIn(g, actual[i]));
  }
  if (isObject(given)) {
    if (!isObject(actual)) return false;
    return Object.entries(given).every(([k, v]) => v === undefined || v === null || containedIn(v, actual[k]));
  }
  if (typeof given === 'number' && typeof actual === 'string') return String(given) === actual;
  return jsonEqual(given, actual);
}

/** Every entry of `given` is one of `actual`'s, by its key (env by name, mounts by mountPath). */
function entriesContained(given: unknown, actual: unknown, key: string): boolean {
  const byKey = new Map(arrayOf(actual).filter(isObject).map((e) => [stringOf(e[key]), e]));
  return arrayOf(given).every((g) => isObject(g) && containedIn(g, byKey.get(stringOf(g[key]))));
}

/** Env vars on the pod that neither the set nor injection put there (an env var added to the set is caught by the other direction). */
function foreignEnv(sidecar: SidecarContainer, pod: Container): boolean {
  const allowed = new Set<string>([SIDECAR_ENV, ...arrayOf(sidecar.env).filter(isObject).map((e) => stringOf(e.name) ?? '')]);
  for (const t of arrayOf(sidecar.transferEnv).filter(isObject)) {
    const single = stringOf(t.envName);
    if (single !== undefined) allowed.add(single);
    for (const n of arrayOf(t.envNames)) if (typeof n === 'string') allowed.add(n);
  }
  // HotUpgrade containers carry the version variables Kruise injects (SIDECARSET_VERSION, ..._ALT).
  return arrayOf(pod.env)
    .filter(isObject)
    .some((e) => {
      const name = stringOf(e.name) ?? '';
      return !allowed.has(name) && !name.startsWith('SIDECARSET_');
    });
}

/** The fields of one sidecar that differ between the set and the pod's container. */
function containerChanges(sidecar: SidecarContainer, pod: Container): string[] {
  const out = new Set<string>();
  const given = sidecar as unknown as JsonObject;
  const actual = pod as unknown as JsonObject;
  for (const [field, value] of Object.entries(given)) {
    if (NOT_COMPARED.has(field) || value === undefined || value === null) continue;
    if (field === 'env') {
      if (!entriesContained(value, actual.env, 'name')) out.add('env');
    } else if (field === 'volumeMounts') {
      // Injection adds shared and service-account mounts: only the set's own are looked for.
      if (!entriesContained(value, actual.volumeMounts, 'mountPath')) out.add('volumeMounts');
    } else if (!containedIn(value, actual[field])) out.add(field);
  }
  for (const field of NEVER_DEFAULTED) if ((given[field] === undefined || given[field] === null) && actual[field] !== undefined && actual[field] !== null) out.add(field);
  if (foreignEnv(sidecar, pod)) out.add('env');
  return [...out].sort();
}

/**
 * The changed fields of each of the set's sidecars on the pod, as
 * `env, volumeMounts of sidecar1`; {@link INVISIBLE_CHANGE} when none shows.
 * A HotUpgrade sidecar is compared with its working container.
 */
export function changedFields(pod: Pod, set: SidecarSet): string[] {
  const containers = new Map(podContainers(pod).map((c) => [c.name, c]));
  const out: string[] = [];
  const compare = (sidecar: SidecarContainer, onPod: Container | undefined): void => {
    const fields = onPod === undefined ? [] : containerChanges(sidecar, onPod);
    if (fields.length > 0) out.push(`${fields.join(', ')} of ${sidecar.name}`);
  };
  for (const sidecar of setContainers(set)) {
    const names = isHotUpgrade(sidecar) ? hotUpgradeContainerNames(sidecar.name) : [sidecar.name];
    compare(sidecar, names.map((n) => containers.get(n)).find((c) => c !== undefined));
  }
  // Rolled native sidecars, after the containers, compared with the pod's native sidecars.
  const natives = new Map(podNativeSidecars(pod).map((c) => [c.name, c]));
  for (const sidecar of setNativeSidecars(set)) compare(sidecar, natives.get(sidecar.name));
  return out;
}

/** The changed fields in words: `env, volumeMounts of sidecar1`, or what cannot be seen. */
export function changedFieldsText(pod: Pod, set: SidecarSet): string {
  const fields = changedFields(pod, set);
  return fields.length === 0 ? INVISIBLE_CHANGE : fields.join('; ');
}

/** Names the field names alone across pods (`env`, `volumeMounts`), for a line about many pods. */
export function changedFieldNames(pods: readonly Pod[], set: SidecarSet, limit = 50): string[] {
  const names = new Set<string>();
  let invisible = false;
  for (const pod of pods.slice(0, limit)) {
    const fields = changedFields(pod, set);
    if (fields.length === 0) invisible = true;
    for (const entry of fields) for (const name of entry.slice(0, entry.lastIndexOf(' of ')).split(', ')) names.add(name);
  }
  const out = [...names].sort();
  if (invisible) out.push('fields not visible on the pod');
  return out;
}
