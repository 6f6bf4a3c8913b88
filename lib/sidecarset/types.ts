/**
 * apps.kruise.io/v1alpha1 SidecarSet, as OpenKruise v1.8 defines it.
 * Unknown fields are kept (see lib/kube/types.ts for why).
 */
import type {
  Container,
  LabelSelector,
  LocalObjectReference,
  ObjectFieldSelector,
  ObjectMeta,
  Volume,
} from '../kube/types.ts';

export const GROUP = 'apps.kruise.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'SidecarSet';

/** Annotation on the SidecarSet and, keyed by set name, on injected pods. */
export const ANNOTATION_HASH = 'kruise.io/sidecarset-hash';
/** The same hash computed with every image removed. */
export const ANNOTATION_HASH_WITHOUT_IMAGE = 'kruise.io/sidecarset-hash-without-image';
/** Comma-separated, sorted names of the SidecarSets injected into a pod. */
export const ANNOTATION_INJECTED_LIST = 'kruise.io/sidecarset-injected-list';

export type PodInjectPolicy = 'BeforeAppContainer' | 'AfterAppContainer';
export const POD_INJECT_POLICIES: readonly PodInjectPolicy[] = ['BeforeAppContainer', 'AfterAppContainer'];
export const UPGRADE_TYPES = ['ColdUpgrade', 'HotUpgrade'] as const;
export const SHARE_VOLUME_POLICIES = ['enabled', 'disabled'] as const;
export const UPDATE_STRATEGY_TYPES = ['NotUpdate', 'RollingUpdate'] as const;
export const PATCH_POLICIES = ['Retain', 'Overwrite', 'MergePatchJson'] as const;
export const REVISION_POLICIES = ['', 'Always', 'Partial'] as const;

export interface TransferEnvVar {
  sourceContainerName?: string;
  sourceContainerNameFrom?: { fieldRef?: ObjectFieldSelector; [key: string]: unknown };
  envName?: string;
  envNames?: string[];
  [key: string]: unknown;
}

/** How a sidecar's resources are aggregated from its target containers (OpenKruise 1.9). */
export const TARGET_CONTAINERS_MODES = ['sum', 'max'] as const;
export type TargetContainersMode = (typeof TARGET_CONTAINERS_MODES)[number];
/** The regex the API server writes when `targetContainersNameRegex` is absent (the CRD's default): every container. */
export const DEFAULT_TARGET_CONTAINERS_NAME_REGEX = '.*';

/** Expressions for one of `limits` or `requests` (OpenKruise 1.9 ResourceExprLimits / ResourceExprRequests). */
export interface ResourceExprs {
  cpu?: string;
  memory?: string;
  [key: string]: unknown;
}

/**
 * OpenKruise 1.9 `resourcesPolicy`: the sidecar's resources computed at pod
 * creation from the pod's own containers (lib/sidecarset/resources-policy.ts).
 */
export interface ResourcesPolicy {
  targetContainersMode?: string;
  targetContainersNameRegex?: string;
  resourcesExpr?: { limits?: ResourceExprs; requests?: ResourceExprs; [key: string]: unknown };
  [key: string]: unknown;
}

export interface SidecarContainer extends Container {
  podInjectPolicy?: string;
  upgradeStrategy?: { upgradeType?: string; hotUpgradeEmptyImage?: string; [key: string]: unknown };
  shareVolumePolicy?: { type?: string; [key: string]: unknown };
  /** OpenKruise 1.9: share the app containers' volumeDevices (absent means disabled, and leaves the hash as 1.8's). */
  shareVolumeDevicePolicy?: { type?: string; [key: string]: unknown };
  transferEnv?: TransferEnvVar[];
  /** OpenKruise 1.9: resources computed from the pod's containers; exclusive with `resources`. */
  resourcesPolicy?: ResourcesPolicy;
}

/** A Kubernetes IntOrString: an integer or a percentage such as "20%". */
export type IntOrString = number | string;

export interface SidecarSetUpdateStrategy {
  type?: string;
  paused?: boolean;
  selector?: LabelSelector;
  partition?: IntOrString;
  maxUnavailable?: IntOrString;
  priorityStrategy?: {
    weightPriority?: { weight: number; matchSelector: LabelSelector; [key: string]: unknown }[];
    orderPriority?: { orderedKey: string; [key: string]: unknown }[];
    [key: string]: unknown;
  };
  scatterStrategy?: { key: string; value: string; [key: string]: unknown }[];
  [key: string]: unknown;
}

export interface SidecarSetInjectionStrategy {
  paused?: boolean;
  revision?: { customVersion?: string; revisionName?: string; policy?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface SidecarSetPatchPodMetadata {
  annotations?: Record<string, string>;
  patchPolicy?: string;
  [key: string]: unknown;
}

export interface SidecarSetSpec {
  selector?: LabelSelector;
  namespace?: string;
  namespaceSelector?: LabelSelector;
  initContainers?: SidecarContainer[];
  containers?: SidecarContainer[];
  volumes?: Volume[];
  updateStrategy?: SidecarSetUpdateStrategy;
  injectionStrategy?: SidecarSetInjectionStrategy;
  imagePullSecrets?: LocalObjectReference[];
  revisionHistoryLimit?: number;
  patchPodMetadata?: SidecarSetPatchPodMetadata[];
  [key: string]: unknown;
}

export interface SidecarSetStatus {
  observedGeneration?: number;
  matchedPods?: number;
  updatedPods?: number;
  readyPods?: number;
  updatedReadyPods?: number;
  latestRevision?: string;
  collisionCount?: number;
  [key: string]: unknown;
}

export interface SidecarSet {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: SidecarSetSpec;
  status?: SidecarSetStatus;
  [key: string]: unknown;
}
