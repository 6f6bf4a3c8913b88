/**
 * The MutatingAdmissionPolicy that injects SidecarSets inside the API server
 * (admissionregistration.k8s.io/v1, Kubernetes 1.36), and its binding: each
 * SidecarSet is a param, evaluated alone and in no fixed order. For a set
 * that selects the pod it either injects exactly what pod-inject would for
 * that set alone, and records what it added ({@link ANNOTATION_POLICY_RECORD}),
 * or marks the pod for pod-inject ({@link ANNOTATION_INJECT_MARK}): when the
 * set's path (lib/sidecarset/injection-path.ts) is not the policy, when
 * another set was injected already, when the pod came with injection
 * bookkeeping, or when the pod is larger than the bounds the CEL cost was
 * measured at. pod-inject's webhook is then called only for marked pods
 * (its matchConditions, {@link podInjectMatchConditions}), undoes the record
 * and injects every set as it always has. docs/INJECTION-POLICY.md.
 */
import { ANNOTATION_INJECTION_PATH } from '../sidecarset/injection-path.ts';
import { ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD } from '../sidecarset/policy-record.ts';
import { FENCE_ANNOTATIONS, ANNOTATION_FENCE_CONTAINERS, ANNOTATION_FENCE_KEYS } from '../sidecarset/rollout-fence.ts';
import { ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, ANNOTATION_INJECTED_LIST } from '../sidecarset/types.ts';

export const INJECTION_POLICY_NAME = 'serverless-sidecarset-inject';
/** The keys the policy writes beside its record, in the record's order. */
export const POLICY_WRITTEN_ANNOTATIONS: readonly string[] = [ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, ANNOTATION_INJECTED_LIST, ANNOTATION_FENCE_CONTAINERS, ANNOTATION_FENCE_KEYS];
/** Annotations a pod may not bring to the policy: it is marked for pod-inject instead. */
const BOOKKEEPING: readonly string[] = [ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, ANNOTATION_INJECTED_LIST, ...FENCE_ANNOTATIONS, 'kruise.io/sidecarset-working-hotupgrade-container'];

/** The largest pod the policy injects; a larger one is marked (the CEL's cost grows with these). */
export const POLICY_POD_BOUNDS = { containers: 16, appMounts: 128, volumes: 128, imagePullSecrets: 16, envPerContainer: 256 } as const;

/** The SidecarContainer-only fields, left out of the pod's container (and env, written apart). */
const LEFT_OUT = ['podInjectPolicy', 'upgradeStrategy', 'shareVolumePolicy', 'shareVolumeDevicePolicy', 'transferEnv', 'resourcesPolicy', 'env'];

const list = (items: readonly string[]): string => `[${items.map((s) => `'${s}'`).join(', ')}]`;
/** A JSON Pointer token of an annotation key (RFC 6901). */
const pointer = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

/** `sel` (a label selector) against `labels`, as lib/kube/label-selector.ts decides (a malformed term matches nothing). */
function selects(sel: string, labels: string): string {
  const values = `(has(r.values) ? r.values : [])`;
  return `((!has(${sel}.matchLabels) || ${sel}.matchLabels.all(k, k in ${labels} && ${labels}[k] == ${sel}.matchLabels[k])) &&
    (!has(${sel}.matchExpressions) || ${sel}.matchExpressions.all(r, has(r.key) && has(r.operator) && (
      r.operator == 'In' ? ${values}.size() > 0 && r.key in ${labels} && ${labels}[r.key] in ${values} :
      r.operator == 'NotIn' ? ${values}.size() > 0 && !(r.key in ${labels} && ${labels}[r.key] in ${values}) :
      r.operator == 'Exists' ? ${values}.size() == 0 && r.key in ${labels} :
      r.operator == 'DoesNotExist' ? ${values}.size() == 0 && !(r.key in ${labels}) : false))))`;
}

const B = POLICY_POD_BOUNDS;

const VARIABLES: readonly { name: string; expression: string }[] = [
  { name: 'labels', expression: `has(object.metadata.labels) ? object.metadata.labels : {}` },
  { name: 'nsLabels', expression: `namespaceObject != null && has(namespaceObject.metadata.labels) ? namespaceObject.metadata.labels : {}` },
  {
    name: 'selects',
    expression: `!(has(params.spec.injectionStrategy) && has(params.spec.injectionStrategy.paused) && params.spec.injectionStrategy.paused) &&
      has(params.spec.selector) &&
      (!has(params.spec.namespace) || params.spec.namespace == '' || params.spec.namespace == request.namespace) &&
      ${selects('params.spec.selector', 'variables.labels')} &&
      (!has(params.spec.namespaceSelector) || (has(params.spec.namespace) && params.spec.namespace != '') || ${selects('params.spec.namespaceSelector', 'variables.nsLabels')})`,
  },
  { name: 'annotations', expression: `has(object.metadata.annotations) ? object.metadata.annotations : {}` },
  { name: 'sidecars', expression: `has(params.spec.containers) ? params.spec.containers : []` },
  {
    name: 'podFits',
    expression: `object.spec.containers.size() <= ${B.containers} &&
      object.spec.containers.all(c, !has(c.env) || c.env.size() <= ${B.envPerContainer}) &&
      object.spec.containers.map(c, has(c.volumeMounts) ? c.volumeMounts.size() : 0).sum() <= ${B.appMounts} &&
      (!has(object.spec.volumes) || object.spec.volumes.size() <= ${B.volumes}) &&
      (!has(object.spec.imagePullSecrets) || object.spec.imagePullSecrets.size() <= ${B.imagePullSecrets})`,
  },
  {
    name: 'revision',
    expression: `has(params.status) && has(params.status.observedGeneration) && has(params.metadata.generation) &&
      params.status.observedGeneration == params.metadata.generation && has(params.status.latestRevision) &&
      params.status.latestRevision.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$') ? params.status.latestRevision : ''`,
  },
  { name: 'appMounts', expression: `object.spec.containers.map(c, has(c.volumeMounts) ? c.volumeMounts : []).flatten()` },
  { name: 'sharing', expression: `variables.sidecars.exists(s, has(s.shareVolumePolicy) && has(s.shareVolumePolicy.type) && s.shareVolumePolicy.type == 'enabled')` },
  {
    // What pod-inject would do differently from the policy's plain copy: mounts whose subPathExpr brings env,
    // a container already carrying IS_INJECTED (not an app container), two app mounts at one path.
    name: 'shareExact',
    expression: `!variables.sharing || (
      !object.spec.containers.exists(c, (has(c.env) && c.env.exists(e, e.name == 'IS_INJECTED')) ||
        (has(c.volumeMounts) && c.volumeMounts.exists(m, has(m.subPathExpr) && m.subPathExpr.contains('$(')))) &&
      variables.appMounts.map(m, m.mountPath).distinct().size() == variables.appMounts.size())`,
  },
  {
    name: 'inject',
    expression: `has(params.metadata.annotations) && '${ANNOTATION_INJECTION_PATH}' in params.metadata.annotations &&
      params.metadata.annotations['${ANNOTATION_INJECTION_PATH}'] == 'policy' &&
      !(${list([ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD, ...BOOKKEEPING])}.exists(k, k in variables.annotations)) &&
      variables.podFits && variables.revision != '' &&
      !object.spec.containers.exists(c, variables.sidecars.exists(s, s.name == c.name)) &&
      variables.shareExact`,
  },
  { name: 'before', expression: `variables.sidecars.filter(s, s.podInjectPolicy == 'BeforeAppContainer')` },
  { name: 'after', expression: `variables.sidecars.filter(s, s.podInjectPolicy != 'BeforeAppContainer')` },
  {
    name: 'podVolumeNames',
    expression: `has(object.spec.volumes) ? object.spec.volumes.map(v, has(v.name) ? v.name : '') : []`,
  },
  {
    name: 'newVolumeNames',
    expression: `has(params.spec.volumes) ? variables.sidecars.map(s, (has(s.volumeMounts) ? s.volumeMounts.map(m, m.name) : []) +
      (has(s.volumeDevices) ? s.volumeDevices.map(d, d.name) : [])).flatten()
      .filter(n, params.spec.volumes.exists(v, v.name == n)).distinct().filter(n, !(n in variables.podVolumeNames)) : []`,
  },
  {
    name: 'newSecrets',
    expression: `has(params.spec.imagePullSecrets) ? params.spec.imagePullSecrets.filter(s,
      !has(object.spec.imagePullSecrets) || !object.spec.imagePullSecrets.exists(p, has(p.name) && p.name == s.name)) : []`,
  },
  { name: 'sidecarList', expression: `variables.sidecars.map(s, s.name).sort()` },
  {
    name: 'hashEntry',
    expression: `'{"' + params.metadata.name + '":{"updateTimestamp":null,"hash":"%s","sidecarSetName":"' + params.metadata.name +
      '","sidecarList":[' + variables.sidecarList.map(n, '"' + n + '"').join(',') + ']'`,
  },
];

/** The ops that add one sidecar at `at`: the container without the sidecar-only fields, then its env and mounts. */
function sidecarOps(at: string): string {
  // Only a sharing sidecar's mounts change; the size of a concatenation of the set's and the pod's lists has no overload.
  const shared = `(has(s.shareVolumePolicy) && has(s.shareVolumePolicy.type) && s.shareVolumePolicy.type == 'enabled' ?
      variables.appMounts.filter(m, !((has(s.volumeMounts) && s.volumeMounts.exists(o, o.mountPath == m.mountPath)) ||
        (has(s.volumeDevices) && s.volumeDevices.exists(d, d.devicePath == m.mountPath)))) : [])`;
  return `[JSONPatch{op: 'add', path: '/spec/containers/' + ${at}, value: s.transformMap(k, v, !(k in ${list(LEFT_OUT)}), v)},
    JSONPatch{op: 'add', path: '/spec/containers/' + ${at} + '/env', value: (has(s.env) ? s.env : []) +
      (has(s.env) && s.env.exists(e, e.name == 'IS_INJECTED') ? [] : [{'name': 'IS_INJECTED', 'value': 'true'}])}] +
    (${shared}.size() == 0 ? [] : [JSONPatch{op: 'add', path: '/spec/containers/' + ${at} + '/volumeMounts', value: (has(s.volumeMounts) ? s.volumeMounts : []) + ${shared}}])`;
}

const annotationOp = (key: string, value: string): string => `JSONPatch{op: 'add', path: '/metadata/annotations/${pointer(key)}', value: ${value}}`;

/** The whole injection, as JSON Patch ops, for a pod `variables.inject` accepts. */
const INJECTION = `variables.before.transformList(i, s, ${sidecarOps('string(i)')}).flatten() +
  variables.after.transformList(i, s, ${sidecarOps('string(object.spec.containers.size() + variables.before.size() + i)')}).flatten() +
  (variables.newVolumeNames.size() == 0 || has(object.spec.volumes) ? [] : [JSONPatch{op: 'add', path: '/spec/volumes', value: []}]) +
  variables.newVolumeNames.map(n, JSONPatch{op: 'add', path: '/spec/volumes/-', value: params.spec.volumes.filter(v, v.name == n)[0]}) +
  (variables.newSecrets.size() == 0 || has(object.spec.imagePullSecrets) ? [] : [JSONPatch{op: 'add', path: '/spec/imagePullSecrets', value: []}]) +
  variables.newSecrets.map(p, JSONPatch{op: 'add', path: '/spec/imagePullSecrets/-', value: p}) + [
  ${annotationOp(ANNOTATION_HASH, `variables.hashEntry.replace('%s', params.metadata.annotations['${ANNOTATION_HASH}']) + ',"controllerRevision":"' + variables.revision + '"}}'`)},
  ${annotationOp(ANNOTATION_HASH_WITHOUT_IMAGE, `variables.hashEntry.replace('%s', params.metadata.annotations['${ANNOTATION_HASH_WITHOUT_IMAGE}']) + '}}'`)},
  ${annotationOp(ANNOTATION_INJECTED_LIST, 'params.metadata.name')},
  ${annotationOp(ANNOTATION_FENCE_CONTAINERS, `variables.sidecarList.join(',')`)},
  ${annotationOp(ANNOTATION_FENCE_KEYS, `''`)},
  ${annotationOp(ANNOTATION_POLICY_RECORD, `'set=' + params.metadata.name + ';containers=' + variables.sidecars.map(s, s.name).join(',') +
    ';volumes=' + variables.newVolumeNames.join(',') + ';imagePullSecrets=' + variables.newSecrets.map(p, p.name).join(',') +
    ';annotations=${POLICY_WRITTEN_ANNOTATIONS.join(',')}'`)}]`;

const MUTATION = `!variables.selects ? [] :
  (has(object.metadata.annotations) ? [] : [JSONPatch{op: 'add', path: '/metadata/annotations', value: {}}]) +
  (variables.inject ? ${INJECTION} : [${annotationOp(ANNOTATION_INJECT_MARK, `'webhook'`)}])`;

/** The label selector of namespaces whose pods may be injected (the pod webhook's namespaceSelector). */
export type NamespaceSelector = Record<string, unknown>;

/** The policy and its binding, as API objects. */
export function renderInjectionPolicy(namespaceSelector: NamespaceSelector): Record<string, unknown>[] {
  const metadata = { name: INJECTION_POLICY_NAME, labels: { 'app.kubernetes.io/part-of': 'serverless-sidecarset' } };
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata,
      spec: {
        paramKind: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet' },
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] },
        // Fail: a policy that cannot finish must refuse the pod, never admit it half injected.
        failurePolicy: 'Fail',
        // Once: the policy's own writes (the record, the mark) tell any later pass what it did.
        reinvocationPolicy: 'Never',
        variables: VARIABLES,
        mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: MUTATION } }],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata,
      spec: {
        policyName: INJECTION_POLICY_NAME,
        paramRef: { selector: {}, parameterNotFoundAction: 'Allow' },
        matchResources: { namespaceSelector },
      },
    },
  ];
}
