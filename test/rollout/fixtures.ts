/** SidecarSets and pods for the rollout tables: a defaulted set and pods injected by it at an old or the current hash. */
import type { Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { newRevision, type ControllerRevision } from '../../lib/sidecarset/revisions.ts';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { ANNOTATION_FENCE_CONTAINERS, ANNOTATION_FENCE_KEYS } from '../../lib/sidecarset/rollout-fence.ts';

export const NEW_IMAGE = 'centos:6.8';
export const OLD_IMAGE = 'centos:6.7';

/** `test-sidecarset` of rollout.md §2.2 (one sidecar `sidecar1`), at `image`, with an update strategy. */
export function rolloutSet(opts: { image?: string; strategy?: SidecarSetUpdateStrategy; name?: string; command?: string[] } = {}): SidecarSet {
  return defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: opts.name ?? 'test-sidecarset', uid: 'uid-1', generation: 2 },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [
        { name: 'sidecar1', image: opts.image ?? NEW_IMAGE, command: opts.command ?? ['sleep', '999d'], volumeMounts: [{ name: 'log-volume', mountPath: '/var/log' }] },
      ],
      volumes: [{ name: 'log-volume', emptyDir: {} }],
      updateStrategy: opts.strategy ?? { type: 'RollingUpdate' },
    },
  });
}

export function hashOf(set: SidecarSet): string {
  return set.metadata!.annotations!['kruise.io/sidecarset-hash']!;
}

export function withoutImageOf(set: SidecarSet): string {
  return set.metadata!.annotations!['kruise.io/sidecarset-hash-without-image']!;
}

export interface PodOptions {
  name: string;
  namespace?: string;
  /** Recorded as updated to `set` (its hash); otherwise to the old image's hash. */
  updated?: boolean;
  /** Updated but the sidecar has not restarted yet (in-place state still shows its old imageID). */
  inconsistent?: boolean;
  ready?: boolean;
  /** The without-image hash recorded at injection differs from the set's (§1.6). */
  otherFields?: boolean;
  labels?: Record<string, string>;
  nodeName?: string;
  phase?: string;
  created?: string;
  readySince?: string;
  restarts?: number;
  /** The sidecar container's status says ready (default: the pod's readiness). */
  sidecarReady?: boolean;
}

/** The set at the old image, by name: read for its hash only, made once (large tables make thousands of pods). */
const oldSets = new Map<string, SidecarSet>();
function oldSetOf(name: string): SidecarSet {
  let set = oldSets.get(name);
  if (set === undefined) oldSets.set(name, (set = rolloutSet({ image: OLD_IMAGE, name })));
  return set;
}

/** A pod injected by `set`'s name with its sidecar and an app container, listed with a resourceVersion. */
export function rolloutPod(set: SidecarSet, o: PodOptions): Pod {
  const setName = set.metadata!.name!;
  const old = oldSetOf(setName);
  const updated = o.updated === true;
  const recordedHash = updated ? hashOf(set) : hashOf(old);
  const withoutImage = o.otherFields ? 'other-fields-hash' : withoutImageOf(set);
  const image = updated ? NEW_IMAGE : OLD_IMAGE;
  const ready = o.ready !== false;
  const annotations: Record<string, string> = {
    'kruise.io/sidecarset-injected-list': setName,
    'kruise.io/sidecarset-hash': JSON.stringify({
      [setName]: { updateTimestamp: '2025-01-01T00:00:00Z', hash: recordedHash, sidecarSetName: setName, sidecarList: ['sidecar1'], controllerRevision: 'rev-old' },
    }),
    'kruise.io/sidecarset-hash-without-image': JSON.stringify({
      [setName]: { updateTimestamp: '2025-01-01T00:00:00Z', hash: withoutImage, sidecarSetName: setName, sidecarList: ['sidecar1'] },
    }),
    // The rollout fence pod-inject writes (lib/sidecarset/rollout-fence.ts): sidecar1 may be re-imaged.
    [ANNOTATION_FENCE_CONTAINERS]: 'sidecar1',
    [ANNOTATION_FENCE_KEYS]: '',
  };
  if (o.inconsistent) {
    annotations['kruise.io/sidecarset-inplace-update-state'] = JSON.stringify({
      [setName]: { revision: recordedHash, updateTimestamp: '2025-01-02T00:00:00Z', lastContainerStatuses: { sidecar1: { imageID: 'id-old' } } },
    });
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: o.name,
      namespace: o.namespace ?? 'default',
      resourceVersion: '100',
      labels: { app: 'web', ...o.labels },
      annotations,
      ...(o.created ? { creationTimestamp: o.created } : {}),
    },
    spec: {
      ...(o.nodeName !== undefined ? { nodeName: o.nodeName } : { nodeName: 'node-1' }),
      containers: [
        { name: 'sidecar1', image },
        { name: 'app', image: 'nginx:1' },
      ],
    },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', ...(o.readySince ? { lastTransitionTime: o.readySince } : {}) }],
      containerStatuses: [
        {
          name: 'sidecar1',
          image: o.inconsistent ? OLD_IMAGE : image,
          imageID: o.inconsistent ? 'id-old' : `id-${image}`,
          ready: o.sidecarReady ?? ready,
          restartCount: o.restarts ?? 0,
        },
        { name: 'app', image: 'nginx:1', imageID: 'id-nginx', ready, restartCount: 0 },
      ],
    },
  };
}

/** `count` pods named p-000…, the first `updated` updated, of which the first `consistent` consistent. */
export function podsOf(set: SidecarSet, count: number, updated: number, consistent: number, extra: Partial<PodOptions> = {}): Pod[] {
  return Array.from({ length: count }, (_, i) =>
    rolloutPod(set, { name: `p-${String(i).padStart(5, '0')}`, updated: i < updated, inconsistent: i < updated && i >= consistent, ...extra }),
  );
}

export const NO_NAMESPACES = new Map<string, Record<string, string>>();

/** Stored revisions as the API server returns them (data parsed, a creation time). */
export function storedRevision(set: SidecarSet, number: number, collision = 0): ControllerRevision {
  const r = newRevision(set, 'kruise-system', number, collision);
  return { ...r, metadata: { ...r.metadata, creationTimestamp: '2026-01-01T00:00:00Z' } };
}

/** The rollout set with one pull secret `secret-<n>`: a distinct spec per n. */
export function withSecret(n: number): SidecarSet {
  const base = rolloutSet();
  return { ...base, spec: { ...base.spec, imagePullSecrets: [{ name: `secret-${n}` }] } };
}
