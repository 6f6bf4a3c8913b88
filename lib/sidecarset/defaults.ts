/**
 * SidecarSet defaulting (spec section 2), following OpenKruise's
 * SetDefaultsSidecarSet and the Kubernetes container/volume defaulters it
 * calls. Works on untrusted JSON: values of the wrong type are left for
 * validation to report, never "fixed" here.
 */
import { arrayOf, cloneJson, isObject, objectOf } from '../kube/json.ts';
import { imageTag } from '../kube/image-reference.ts';
import type { JsonObject } from '../kube/types.ts';
import { sidecarSetHashes } from './hash.ts';
import { ANNOTATION_INJECTION_PATH, injectionPath } from './injection-path.ts';
import { ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, DEFAULT_TARGET_CONTAINERS_NAME_REGEX, type SidecarSet } from './types.ts';

/** Sets `obj[key] = value` when the key is absent, null or the empty string (Go's zero value for these fields). */
function setIfEmpty(obj: JsonObject, key: string, value: unknown): void {
  const current = obj[key];
  if (current === undefined || current === null || current === '') obj[key] = value;
}

/** The object at `obj[key]`, created when absent or null; undefined when another type is there. */
function ensureObject(obj: JsonObject, key: string): JsonObject | undefined {
  const current = obj[key];
  if (current === undefined || current === null) {
    const created: JsonObject = {};
    obj[key] = created;
    return created;
  }
  return objectOf(current);
}

function forEachObject(value: unknown, fn: (item: JsonObject) => void): void {
  for (const item of arrayOf(value)) if (isObject(item)) fn(item);
}

function defaultFieldRef(holder: unknown): void {
  const ref = objectOf(objectOf(holder)?.fieldRef);
  if (ref) setIfEmpty(ref, 'apiVersion', 'v1');
}

/** Probe defaults (SetDefaults_Probe) are applied only where a zero was given, as Go's int32 zero value. */
function defaultProbe(probe: JsonObject): void {
  for (const [key, value] of [
    ['timeoutSeconds', 1],
    ['periodSeconds', 10],
    ['successThreshold', 1],
    ['failureThreshold', 3],
  ] as const) {
    if (probe[key] === undefined || probe[key] === null || probe[key] === 0) probe[key] = value;
  }
  defaultHttpGet(probe.httpGet);
}

function defaultHttpGet(value: unknown): void {
  const httpGet = objectOf(value);
  if (!httpGet) return;
  setIfEmpty(httpGet, 'path', '/');
  setIfEmpty(httpGet, 'scheme', 'HTTP');
}

/** Kubernetes' container defaults, limited to what Kruise's setDefaultContainer applies. */
function defaultContainer(c: JsonObject): void {
  if (c.imagePullPolicy === undefined || c.imagePullPolicy === null || c.imagePullPolicy === '') {
    const image = typeof c.image === 'string' ? c.image : '';
    c.imagePullPolicy = imageTag(image) === 'latest' ? 'Always' : 'IfNotPresent';
  }
  setIfEmpty(c, 'terminationMessagePath', '/dev/termination-log');
  setIfEmpty(c, 'terminationMessagePolicy', 'File');
  forEachObject(c.ports, (p) => {
    setIfEmpty(p, 'protocol', 'TCP');
  });
  forEachObject(c.env, (e) => {
    defaultFieldRef(e.valueFrom);
  });
  // Kruise defaults only liveness and readiness probes, not startupProbe; the
  // hash depends on it, so the same holds here.
  for (const key of ['livenessProbe', 'readinessProbe']) {
    const probe = objectOf(c[key]);
    if (probe) defaultProbe(probe);
  }
  const lifecycle = objectOf(c.lifecycle);
  if (lifecycle) {
    for (const key of ['postStart', 'preStop']) defaultHttpGet(objectOf(lifecycle[key])?.httpGet);
  }
}

function defaultSidecarContainer(c: JsonObject, injectPolicy: string): void {
  setIfEmpty(c, 'podInjectPolicy', injectPolicy);
  const upgrade = ensureObject(c, 'upgradeStrategy');
  if (upgrade) setIfEmpty(upgrade, 'upgradeType', 'ColdUpgrade');
  const share = ensureObject(c, 'shareVolumePolicy');
  if (share) setIfEmpty(share, 'type', 'disabled');
  // The CRD's schema default, which the API server applies before any webhook (Kruise's own defaulting does not):
  // an absent or null pattern becomes ".*"; "" is a value, left for validation to refuse.
  const policy = objectOf(c.resourcesPolicy);
  if (policy && (policy.targetContainersNameRegex === undefined || policy.targetContainersNameRegex === null)) {
    policy.targetContainersNameRegex = DEFAULT_TARGET_CONTAINERS_NAME_REGEX;
  }
  defaultContainer(c);
  forEachObject(c.transferEnv, (t) => {
    defaultFieldRef(t.sourceContainerNameFrom);
  });
}

/** Every core/v1 VolumeSource key: a volume with none of them set is an emptyDir. */
const VOLUME_SOURCES = [
  'hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs', 'iscsi',
  'glusterfs', 'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'downwardAPI', 'fc',
  'azureFile', 'configMap', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'projected',
  'portworxVolume', 'scaleIO', 'storageos', 'csi', 'ephemeral', 'image',
] as const;

/** 0644, the mode Kubernetes gives projected files by default. */
const DEFAULT_MODE = 420;

function defaultVolume(v: JsonObject): void {
  if (VOLUME_SOURCES.every((key) => v[key] === undefined || v[key] === null)) v.emptyDir = {};
  const hostPath = objectOf(v.hostPath);
  if (hostPath && (hostPath.type === undefined || hostPath.type === null)) hostPath.type = '';
  for (const key of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const source = objectOf(v[key]);
    if (source && (source.defaultMode === undefined || source.defaultMode === null)) source.defaultMode = DEFAULT_MODE;
  }
  forEachObject(objectOf(v.downwardAPI)?.items, defaultFieldRef);
  forEachObject(objectOf(v.projected)?.sources, (source) => {
    forEachObject(objectOf(source.downwardAPI)?.items, defaultFieldRef);
    const token = objectOf(source.serviceAccountToken);
    if (token && (token.expirationSeconds === undefined || token.expirationSeconds === null)) {
      token.expirationSeconds = 3600;
    }
  });
}

function defaultUpdateStrategy(spec: JsonObject): void {
  const strategy = ensureObject(spec, 'updateStrategy');
  if (!strategy) return;
  setIfEmpty(strategy, 'type', 'RollingUpdate');
  // IntOrString pointers: only a missing value is defaulted; 0 and "0%" are choices.
  if (strategy.maxUnavailable === undefined || strategy.maxUnavailable === null) strategy.maxUnavailable = 1;
  if (strategy.partition === undefined || strategy.partition === null) strategy.partition = 0;
}

/**
 * The SidecarSet with every default of spec section 2 applied and both hash
 * annotations written. Returns a new object; the input is not modified.
 * Idempotent: defaulting a defaulted object gives an equal object.
 */
export function defaultSidecarSet(input: SidecarSet): SidecarSet {
  const set = cloneJson(input);
  const spec = objectOf(set.spec);
  if (spec) {
    defaultUpdateStrategy(spec);
    forEachObject(spec.initContainers, (c) => {
      defaultSidecarContainer(c, 'AfterAppContainer');
    });
    forEachObject(spec.containers, (c) => {
      defaultSidecarContainer(c, 'BeforeAppContainer');
    });
    forEachObject(spec.volumes, defaultVolume);
    if (spec.revisionHistoryLimit === undefined || spec.revisionHistoryLimit === null) spec.revisionHistoryLimit = 10;
    forEachObject(spec.patchPodMetadata, (p) => {
      setIfEmpty(p, 'patchPolicy', 'Retain');
    });
    const revision = objectOf(objectOf(spec.injectionStrategy)?.revision);
    if (revision) setIfEmpty(revision, 'policy', 'Always');
  }
  const metadata = ensureObject(set, 'metadata');
  if (metadata) {
    const annotations = ensureObject(metadata, 'annotations');
    if (annotations) {
      const hashes = sidecarSetHashes(set);
      annotations[ANNOTATION_HASH] = hashes.hash;
      annotations[ANNOTATION_HASH_WITHOUT_IMAGE] = hashes.withoutImage;
      // The path that injects it (injection-path.ts), decided here for every reader, over what the author wrote.
      annotations[ANNOTATION_INJECTION_PATH] = injectionPath(set).path;
    }
  }
  return set;
}
