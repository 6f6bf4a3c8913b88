/**
 * The core/v1 and meta/v1 shapes the SidecarSet logic reads and writes.
 *
 * Every interface keeps an index signature: admitted objects are never
 * narrowed to known fields, because a key dropped on the way in would become
 * a `remove` operation in the JSON Patch on the way out.
 */

/** Any JSON object with unknown fields kept. */
export type JsonObject = Record<string, unknown>;

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
  [key: string]: unknown;
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
  [key: string]: unknown;
}

export interface ObjectFieldSelector {
  apiVersion?: string;
  fieldPath: string;
  [key: string]: unknown;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: ObjectFieldSelector; [key: string]: unknown };
  [key: string]: unknown;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  [key: string]: unknown;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  hostPort?: number;
  protocol?: string;
  [key: string]: unknown;
}

export interface Container {
  name: string;
  image?: string;
  env?: EnvVar[];
  ports?: ContainerPort[];
  volumeMounts?: VolumeMount[];
  restartPolicy?: string;
  imagePullPolicy?: string;
  [key: string]: unknown;
}

export interface Volume {
  name: string;
  [key: string]: unknown;
}

export interface LocalObjectReference {
  name?: string;
  [key: string]: unknown;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  imagePullSecrets?: LocalObjectReference[];
  [key: string]: unknown;
}

export interface PodCondition {
  type: string;
  status: string;
  [key: string]: unknown;
}

export interface PodStatus {
  phase?: string;
  conditions?: PodCondition[];
  containerStatuses?: JsonObject[];
  [key: string]: unknown;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: PodSpec;
  status?: PodStatus;
  [key: string]: unknown;
}

export interface Namespace {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [key: string]: unknown;
}
