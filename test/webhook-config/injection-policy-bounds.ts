/**
 * The largest set the rule gives the policy and the largest pod the policy
 * injects (POLICY_SET_BOUNDS, POLICY_POD_BOUNDS), for measuring the policy's
 * CEL against the API server's cost budget: every sidecar shares the pod's
 * mounts and devices and transfers env from an app container of 256 vars
 * (named, and named by a pod annotation),
 * and two of them are HotUpgrade pairs.
 */
import type { Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { ANNOTATION_INJECTION_PATH, POLICY_SET_BOUNDS } from '../../lib/sidecarset/injection-path.ts';
import type { SidecarContainer, SidecarSet } from '../../lib/sidecarset/types.ts';
import { POLICY_POD_BOUNDS } from '../../lib/webhook-config/injection-policy.ts';

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
/** The pod annotation naming the app container the sidecars transfer env from. */
const SOURCE_ANNOTATION = 'example.com/env-source';
const S = POLICY_SET_BOUNDS;
const P = POLICY_POD_BOUNDS;

/** A sidecar of `set` at every per-container bound (times `scale`), named `name`. */
function sidecar(set: string, name: string, init: boolean, scale: number, hot = false): SidecarContainer {
  return {
    name,
    image: `${name}:1`,
    ...(init ? { restartPolicy: 'Always', podInjectPolicy: 'BeforeAppContainer' } : {}),
    ...(hot ? { upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } } : {}),
    env: range(S.listItems * scale).map((i) => ({ name: `OWN_${i}`, value: `v${i}` })),
    volumeMounts: range(S.listItems * scale).map((i) => ({ name: `${set}-v${i % S.volumes}`, mountPath: `/${name}/m${i}` })),
    shareVolumePolicy: { type: 'enabled' },
    shareVolumeDevicePolicy: { type: 'enabled' },
    // Half by the container's name, half by the annotation naming it.
    transferEnv: [
      { sourceContainerName: 'app00', envNames: range((S.transferredEnv * scale) / 2).map((i) => `E${(i * 16) % 256}${i >= 16 ? `_${i}` : ''}`) },
      { sourceContainerNameFrom: { fieldRef: { fieldPath: `metadata.annotations['${SOURCE_ANNOTATION}']` } }, envNames: range((S.transferredEnv * scale) / 2).map((i) => `E${(i * 16 + 8) % 256}${i >= 8 ? `_${i}` : ''}`) },
    ],
  };
}

/**
 * The set: its containers and init containers together at the bound, every
 * list at its most; with `scale` 2, twice that, given to the policy all the
 * same (the margin the bounds keep).
 */
export function setAtBounds(name: string, selector: Record<string, string>, scale = 1): SidecarSet {
  const inits = 2 * scale;
  const hot = 2 * scale;
  const set = defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: selector },
      updateStrategy: { type: 'NotUpdate' },
      initContainers: range(inits).map((i) => sidecar(name, `${name}-init${String(i).padStart(2, '0')}`, true, scale)),
      // Two HotUpgrade sidecars (two pod containers each), then plain ones up to the bound.
      containers: range(S.containers * scale - inits - hot).map((i) => sidecar(name, `${name}-c${String(i).padStart(2, '0')}`, false, scale, i < hot)),
      volumes: range(S.volumes).map((i) => ({ name: `${name}-v${i}`, emptyDir: {} })),
      imagePullSecrets: range(S.imagePullSecrets).map((i) => ({ name: `${name}-pull${i}` })),
    },
  });
  return { ...set, metadata: { ...set.metadata, annotations: { ...set.metadata?.annotations, [ANNOTATION_INJECTION_PATH]: 'policy' } } };
}

/** The pod: every pod-side bound at its most (its devices on claims, its mounts on emptyDirs). */
export function podAtBounds(name: string, namespace: string, labels: Record<string, string>): Pod {
  const perContainer = P.appMounts / P.containers;
  const devices = P.appDevices / P.containers;
  const claims = P.appDevices;
  const dirs = P.volumes - claims;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels, annotations: { [SOURCE_ANNOTATION]: 'app00' } },
    spec: {
      containers: range(P.containers).map((c) => ({
        name: `app${String(c).padStart(2, '0')}`,
        image: 'app:1',
        env: range(P.envPerContainer).map((i) => ({ name: `E${i}`, value: `${c}-${i}` })),
        volumeMounts: range(perContainer).map((i) => ({ name: `dir${(c * perContainer + i) % dirs}`, mountPath: `/app${c}/m${i}` })),
        volumeDevices: range(devices).map((i) => ({ name: `claim${c * devices + i}`, devicePath: `/dev/app${c}-${i}` })),
      })),
      volumes: [...range(dirs).map((i) => ({ name: `dir${i}`, emptyDir: {} })), ...range(claims).map((i) => ({ name: `claim${i}`, persistentVolumeClaim: { claimName: `claim${i}` } }))],
      imagePullSecrets: range(P.imagePullSecrets).map((i) => ({ name: `pod-pull${i}` })),
    },
  };
}
