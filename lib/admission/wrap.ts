/**
 * An AdmissionReview v1 request around a plain object, as the API server
 * would send it to a webhook, so that the invoke command can be given the
 * SidecarSet or Pod a user would `kubectl apply` rather than a hand-written
 * review (as `istioctl kube-inject -f` and `kyverno apply --resource` take
 * plain objects).
 *
 * What the API server does before calling webhooks and this repeats: the
 * request names the object's kind and resource (kind, requestKind,
 * resource, requestResource), `name` is the object's name (empty for a pod
 * with only `generateName`: the name is generated after admission), a
 * namespaced object gets the request's namespace in its metadata, and
 * `options` are the CreateOptions/UpdateOptions of the call.
 */
import { isObject } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import { ADMISSION_API_VERSION, ADMISSION_KIND, type GroupVersionKind } from './review.ts';

/**
 * The kinds a review can be made for: those the admission functions are
 * called for, in each version their webhooks are registered for (the first
 * is the one error messages name).
 */
export const WRAPPABLE = {
  SidecarSet: { group: 'apps.kruise.io', versions: ['v1alpha1', 'v1beta1'], resource: 'sidecarsets', namespaced: false },
  Pod: { group: '', versions: ['v1'], resource: 'pods', namespaced: true },
} as const;
export type WrappableKind = keyof typeof WRAPPABLE;

/** Namespace of a namespaced object that names none, as kubectl's default context uses. */
export const DEFAULT_NAMESPACE = 'default';

/** Who the request is from: an administrator, as with a kubeconfig from `npm start`. */
export const WRAP_USER_INFO = { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] } as const;

/** The object cannot be wrapped; the message names the problem. */
export class WrapError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WrapError';
  }
}

export interface WrapInput {
  object: JsonObject;
  operation: 'CREATE' | 'UPDATE';
  /** The stored object, for UPDATE. */
  oldObject?: JsonObject;
  /** The namespace to create a namespaced object in when it names none (default `default`). */
  namespace?: string;
  uid: string;
}

/** The object's kind if it is one a review can be made for, checking its apiVersion. */
export function wrappableKind(object: JsonObject): WrappableKind | undefined {
  const kind = object.kind;
  if (kind !== 'SidecarSet' && kind !== 'Pod') return undefined;
  wrappedVersion(kind, object);
  return kind;
}

/** The version of `object`, one of its kind's; throws naming the versions a review can be made for. */
function wrappedVersion(kind: WrappableKind, object: JsonObject): string {
  const { group, versions } = WRAPPABLE[kind];
  const apiVersions: readonly string[] = versions.map((version) => (group === '' ? version : `${group}/${version}`));
  const index = apiVersions.indexOf(typeof object.apiVersion === 'string' ? object.apiVersion : '');
  if (index < 0) {
    throw new WrapError(`a ${kind} has apiVersion ${apiVersions.map((v) => `"${v}"`).join(' or ')}, not ${JSON.stringify(object.apiVersion)}`);
  }
  return versions[index] ?? '';
}

function metadataOf(object: JsonObject, what: string): JsonObject {
  if (object.metadata === undefined) return {};
  if (!isObject(object.metadata)) throw new WrapError(`${what}: metadata is not an object`);
  return object.metadata;
}

function stringField(metadata: JsonObject, key: string, what: string): string | undefined {
  const value = metadata[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new WrapError(`${what}: metadata.${key} is not a string`);
  return value;
}

/** The namespace the review names (set on `metadata` too); undefined for a cluster-scoped kind. */
function reviewNamespace(kind: string, metadata: JsonObject, namespaced: boolean, input: WrapInput): string | undefined {
  if (!namespaced) {
    if (input.namespace !== undefined) throw new WrapError(`a ${kind} is cluster-scoped: --namespace does not apply`);
    return undefined;
  }
  const own = stringField(metadata, 'namespace', `the ${kind}`);
  if (own !== undefined && own !== '' && input.namespace !== undefined && own !== input.namespace) {
    // As kubectl refuses it: the object says one namespace, the command another.
    throw new WrapError(`the ${kind}'s namespace "${own}" does not match --namespace "${input.namespace}"`);
  }
  const namespace = own !== undefined && own !== '' ? own : (input.namespace ?? DEFAULT_NAMESPACE);
  metadata.namespace = namespace;
  return namespace;
}

/** The review's oldObject (a copy, in the new object's namespace): null but for an UPDATE, which needs one of the same kind, version and name. */
function reviewOldObject(input: WrapInput, object: JsonObject, kind: string, name: string, namespace: string | undefined): JsonObject | null {
  if (input.operation !== 'UPDATE') {
    if (input.oldObject !== undefined) throw new WrapError('an old object is only for UPDATE (--operation UPDATE)');
    return null;
  }
  if (input.oldObject === undefined) throw new WrapError('UPDATE needs the stored object (--old FILE)');
  const oldObject = structuredClone(input.oldObject);
  const oldKind = wrappableKind(oldObject);
  if (oldKind !== kind) throw new WrapError(`the old object is a ${JSON.stringify(oldObject.kind)}, the new one a ${kind}`);
  if (oldObject.apiVersion !== object.apiVersion) throw new WrapError(`the old ${kind} is ${String(oldObject.apiVersion)}, the new one ${String(object.apiVersion)}: the API server sends both in one version`);
  const oldMetadata = metadataOf(oldObject, `the old ${kind}`);
  const oldName = stringField(oldMetadata, 'name', `the old ${kind}`) ?? '';
  if (oldName !== name) throw new WrapError(`the old ${kind} is named "${oldName}", the new one "${name}": an UPDATE keeps the name`);
  if (namespace !== undefined) {
    const oldNamespace = stringField(oldMetadata, 'namespace', `the old ${kind}`);
    if (oldNamespace !== undefined && oldNamespace !== '' && oldNamespace !== namespace) {
      throw new WrapError(`the old ${kind} is in namespace "${oldNamespace}", the new one in "${namespace}"`);
    }
    oldObject.metadata = { ...oldMetadata, namespace };
  }
  return oldObject;
}

/**
 * The AdmissionReview request body the API server would send for `input`.
 * The objects are copied; the inputs are not modified.
 * @throws WrapError when the object is not one of {@link WRAPPABLE}, has no
 *   name (nor generateName, for a pod), or disagrees with the old object or
 *   the namespace asked for.
 */
export function wrapInReview(input: WrapInput): JsonObject {
  const kind = wrappableKind(input.object);
  if (kind === undefined) throw new WrapError(`cannot make a review for kind ${JSON.stringify(input.object.kind)}: expected ${Object.keys(WRAPPABLE).join(' or ')}`);
  const { group, resource, namespaced } = WRAPPABLE[kind];
  // The review is in the object's own version, as the API server sends each version to a webhook registered for it.
  const version = wrappedVersion(kind, input.object);
  const object = structuredClone(input.object);
  const metadata = metadataOf(object, `the ${kind}`);
  object.metadata = metadata;
  const name = stringField(metadata, 'name', `the ${kind}`) ?? '';
  const generateName = stringField(metadata, 'generateName', `the ${kind}`);
  if (name === '' && (input.operation === 'UPDATE' || !namespaced || generateName === undefined || generateName === '')) {
    throw new WrapError(`the ${kind} has no metadata.name${namespaced && input.operation === 'CREATE' ? ' (nor metadata.generateName)' : ''}`);
  }
  const namespace = reviewNamespace(kind, metadata, namespaced, input);
  const oldObject = reviewOldObject(input, object, kind, name, namespace);
  const gvk: GroupVersionKind = { group, version, kind };
  const gvr = { group, version, resource };
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: ADMISSION_KIND,
    request: {
      uid: input.uid,
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name,
      ...(namespace !== undefined ? { namespace } : {}),
      operation: input.operation,
      userInfo: structuredClone(WRAP_USER_INFO),
      object,
      oldObject,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: input.operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions' },
    },
  };
}
