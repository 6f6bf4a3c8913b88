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

export interface SidecarContainer extends Container {
  podInjectPolicy?: string;
  upgradeStrategy?: { upgradeType?: string; hotUpgradeEmptyImage?: string; [key: string]: unknown };
  shareVolumePolicy?: { type?: string; [key: string]: unknown };
  transferEnv?: TransferEnvVar[];
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
