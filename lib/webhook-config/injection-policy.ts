/**
 * The MutatingAdmissionPolicy that injects SidecarSets inside the API server
 * (admissionregistration.k8s.io/v1, Kubernetes 1.36), and its binding: each
 * SidecarSet is a param, evaluated alone, in no fixed order, each seeing the
 * pod as the sets evaluated before it left it (the mutating dispatcher
 * applies and defaults each param's patch before the next). For a set that
 * selects the pod it either injects what pod-inject injects for it, at the
 * place pod-inject puts it among the sets injected so far (read from the
 * record, {@link ANNOTATION_POLICY_RECORD}), so that the pod is pod-inject's
 * whatever the order; or it marks the pod for pod-inject
 * ({@link ANNOTATION_INJECT_MARK}) where no order-free result exists: the
 * set's path (lib/sidecarset/injection-path.ts) is not the policy, the pod
 * came with injection bookkeeping, another set claims a name, a volume or an
 * annotation it writes, or the pod is larger than the bounds the CEL cost was
 * measured at. pod-inject's webhook is then called only for marked pods
 * ({@link POD_INJECT_MATCH_CONDITIONS}), undoes the record and injects every
 * set as it always has. docs/INJECTION-POLICY.md.
 */
import { ANNOTATION_INJECTION_PATH } from '../sidecarset/injection-path.ts';
import { ANNOTATION_BASE, ANNOTATION_CANARY } from '../sidecarset/canary.ts';
import { ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD, POLICY_WRITTEN_ANNOTATIONS, RECORD_FIELDS, RECORD_PATTERN, type RecordField } from '../sidecarset/policy-record.ts';
import { SIDECARSET_VERSION_ALT_ENV, SIDECARSET_VERSION_ENV, versionAltAnnotation, versionAnnotation } from '../sidecarset/hot-upgrade.ts';
import { ANNOTATION_WORKING_HOTUPGRADE } from '../sidecarset/pod-state.ts';
import { FENCE_ANNOTATIONS, ANNOTATION_FENCE_CONTAINERS, ANNOTATION_FENCE_KEYS } from '../sidecarset/rollout-fence.ts';
import { ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, ANNOTATION_INJECTED_LIST } from '../sidecarset/types.ts';

export { POLICY_WRITTEN_ANNOTATIONS };

export const INJECTION_POLICY_NAME = 'serverless-sidecarset-inject';
/** Annotations a pod may not bring to the policy: it is marked for pod-inject instead. */
const BOOKKEEPING: readonly string[] = [ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, ANNOTATION_INJECTED_LIST, ...FENCE_ANNOTATIONS, 'kruise.io/sidecarset-working-hotupgrade-container'];

/**
 * The largest pod the policy injects; a larger one is marked (the CEL's cost
 * grows with these). `sets`: the most sets the policy injects into one pod
 * (its record's entries), past which the next set marks the pod.
 */
export const POLICY_POD_BOUNDS = { containers: 16, initContainers: 16, appMounts: 128, appDevices: 32, volumes: 128, imagePullSecrets: 16, envPerContainer: 256, sets: 16 } as const;

/** The SidecarContainer-only fields, left out of the pod's container (and env, written apart). */
const LEFT_OUT = ['podInjectPolicy', 'upgradeStrategy', 'shareVolumePolicy', 'shareVolumeDevicePolicy', 'transferEnv', 'resourcesPolicy', 'env'];

/** The field paths transferEnv names a source container by (injection-path.ts admits these two only). */
const LABELS_PATH = 'metadata.labels[';
const ANNOTATIONS_PATH = 'metadata.annotations[';
/** The key of `path` (a CEL string `<prefix>'key']`). */
const subscriptKey = (path: string, prefix: string): string => `${path}.substring(${prefix.length + 1}, ${path}.size() - 2)`;

const list = (items: readonly string[]): string => `[${items.map((s) => `'${s}'`).join(', ')}]`;
/** A JSON Pointer token of an annotation key (RFC 6901). */
const pointer = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');
/** The CEL list of names a record field holds (`e` an entry split into its values). */
const field = (e: string, name: RecordField): string => `(${e}[${RECORD_FIELDS.indexOf(name)}] == '' ? [] : ${e}[${RECORD_FIELDS.indexOf(name)}].split(','))`;
/** That field over the recorded entries `which` selects (`all`, `earlier`, `later`). */
const recorded = (which: 'entries' | 'earlier' | 'later', name: RecordField): string => `variables.${which}.map(e, ${field('e', name)}).flatten()`;

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
const SHARES = (s: string, what: 'shareVolumePolicy' | 'shareVolumeDevicePolicy'): string => `(has(${s}.${what}) && has(${s}.${what}.type) && ${s}.${what}.type == 'enabled')`;
const BEFORE = (s: string): string => `(has(${s}.podInjectPolicy) && ${s}.podInjectPolicy == 'BeforeAppContainer')`;
const HOT = (s: string): string => `(has(${s}.upgradeStrategy) && has(${s}.upgradeStrategy.upgradeType) && ${s}.upgradeStrategy.upgradeType == 'HotUpgrade')`;
/** The pod containers of the sidecars in `items`: each itself, or its HotUpgrade pair (`-1` working, `-2` on the empty image). */
const POD_CONTAINERS = (items: string): string => `${items}.map(s, (${HOT('s')} ? ['-1', '-2'] : ['']).map(x,
  s.transformMap(k, v, k == 'name' ? s.name + x : (k == 'image' && x == '-2' ? s.upgradeStrategy.hotUpgradeEmptyImage : v)))).flatten()`;
/** The names in `names` (a CEL list of strings, the set's own) as sorted. */
const SORTED_BY_NAME = (items: string): string => `${items}.map(s, s.name).sort().map(n, ${items}.filter(s, s.name == n)[0])`;

/** Where the set is and what the record says the sets evaluated before it injected. */
const RECORD_VARIABLES: readonly { name: string; expression: string }[] = [
  { name: 'record', expression: `'${ANNOTATION_POLICY_RECORD}' in variables.annotations ? variables.annotations['${ANNOTATION_POLICY_RECORD}'] : ''` },
  {
    name: 'recordValid',
    expression: `variables.record == '' || (variables.record.size() <= ${B.sets * 2048} && variables.record.matches('${RECORD_PATTERN.replaceAll('\\', '\\\\')}'))`,
  },
  {
    name: 'unsorted',
    expression: `variables.record == '' || !variables.recordValid ? [] :
      variables.record.split('|').map(e, e.split(';').map(f, f.substring(f.indexOf('=') + 1)))`,
  },
  // In set name order (the record's text sorts `a-b` before `a`): the order pod-inject injects them in.
  { name: 'entries', expression: `variables.unsorted.map(e, e[0]).sort().map(n, variables.unsorted.filter(e, e[0] == n)[0])` },
  { name: 'recordedSets', expression: `variables.entries.map(e, e[0])` },
  { name: 'earlier', expression: `variables.entries.filter(e, e[0] < params.metadata.name)` },
  { name: 'later', expression: `variables.entries.filter(e, e[0] > params.metadata.name)` },
  { name: 'recordedContainers', expression: `${recorded('entries', 'before')} + ${recorded('entries', 'after')}` },
  { name: 'recordedInitBefore', expression: recorded('entries', 'initBefore') },
  { name: 'recordedInitAfter', expression: recorded('entries', 'initAfter') },
  { name: 'recordedKeys', expression: recorded('entries', 'annotations') },
  { name: 'recordedReads', expression: recorded('entries', 'reads') },
  {
    name: 'canaryBase',
    expression: `has(params.metadata.annotations) && '${ANNOTATION_CANARY}' in params.metadata.annotations &&
      params.metadata.annotations['${ANNOTATION_CANARY}'] == 'true' && '${ANNOTATION_BASE}' in params.metadata.annotations ?
      params.metadata.annotations['${ANNOTATION_BASE}'] : ''`,
  },
  // A canary the policy injected displaces its base (lib/sidecarset/canary.ts): the base then does nothing.
  { name: 'displaced', expression: `variables.entries.exists(e, e[1] == params.metadata.name)` },
];

/** The app containers, the set's sidecars and what they take from the apps. */
const POD_VARIABLES: readonly { name: string; expression: string }[] = [
  { name: 'sidecars', expression: `has(params.spec.containers) ? params.spec.containers : []` },
  { name: 'inits', expression: `has(params.spec.initContainers) ? params.spec.initContainers : []` },
  // pod-inject's app containers: those of the pod as received (not the sidecars recorded), not carrying IS_INJECTED=true.
  {
    name: 'apps',
    expression: `object.spec.containers.filter(c, !(c.name in variables.recordedContainers) &&
      !(has(c.env) && c.env.exists(e, has(e.name) && e.name == 'IS_INJECTED' && has(e.value) && e.value == 'true')))`,
  },
  {
    name: 'podFits',
    expression: `object.spec.containers.size() <= ${B.containers} &&
      (!has(object.spec.initContainers) || object.spec.initContainers.size() <= ${B.initContainers}) &&
      object.spec.containers.all(c, !has(c.env) || c.env.size() <= ${B.envPerContainer}) &&
      object.spec.containers.all(c, (!has(c.volumeMounts) || c.volumeMounts.size() <= ${B.appMounts}) && (!has(c.volumeDevices) || c.volumeDevices.size() <= ${B.appDevices})) &&
      variables.apps.map(c, has(c.volumeMounts) ? c.volumeMounts.size() : 0).sum() <= ${B.appMounts} &&
      variables.apps.map(c, has(c.volumeDevices) ? c.volumeDevices.size() : 0).sum() <= ${B.appDevices} &&
      (!has(object.spec.volumes) || object.spec.volumes.size() <= ${B.volumes}) &&
      (!has(object.spec.imagePullSecrets) || object.spec.imagePullSecrets.size() <= ${B.imagePullSecrets}) &&
      variables.entries.size() < ${B.sets}`,
  },
  {
    name: 'revision',
    expression: `has(params.status) && has(params.status.observedGeneration) && has(params.metadata.generation) &&
      params.status.observedGeneration == params.metadata.generation && has(params.status.latestRevision) &&
      params.status.latestRevision.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$') ? params.status.latestRevision : ''`,
  },
  { name: 'appMounts', expression: `variables.apps.map(c, has(c.volumeMounts) ? c.volumeMounts : []).flatten()` },
  { name: 'appDevices', expression: `variables.apps.map(c, has(c.volumeDevices) ? c.volumeDevices : []).flatten()` },
  {
    // What pod-inject would do that the policy's plain copy does not: mounts whose subPathExpr brings env, two app mounts (or devices) at one path.
    name: 'shareExact',
    expression: `(!(variables.sidecars + variables.inits).exists(s, ${SHARES('s', 'shareVolumePolicy')}) || (
      !variables.appMounts.exists(m, has(m.subPathExpr) && m.subPathExpr.contains('$(')) &&
      variables.appMounts.map(m, m.mountPath).distinct().size() == variables.appMounts.size())) &&
      (!(variables.sidecars + variables.inits).exists(s, ${SHARES('s', 'shareVolumeDevicePolicy')}) ||
      variables.appDevices.map(d, d.devicePath).distinct().size() == variables.appDevices.size())`,
  },
  { name: 'before', expression: POD_CONTAINERS(`variables.sidecars.filter(s, ${BEFORE('s')})`) },
  { name: 'after', expression: POD_CONTAINERS(`variables.sidecars.filter(s, !${BEFORE('s')})`) },
  { name: 'hot', expression: `variables.sidecars.filter(s, ${HOT('s')}).map(s, s.name)` },
  { name: 'initBefore', expression: SORTED_BY_NAME(`variables.inits.filter(s, ${BEFORE('s')})`) },
  { name: 'initAfter', expression: SORTED_BY_NAME(`variables.inits.filter(s, !${BEFORE('s')})`) },
  {
    // pod-inject may sort all sets' sidecars by name (SORT_SIDECAR_CONTAINERS_BY_NAME): taken in set order they must already be.
    name: 'inNameOrder',
    expression: `(${recorded('earlier', 'before')} + variables.before.map(s, s.name) + ${recorded('later', 'before')}).isSorted() &&
      (${recorded('earlier', 'after')} + variables.after.map(s, s.name) + ${recorded('later', 'after')}).isSorted()`,
  },
  {
    name: 'nameTaken',
    expression: `(variables.sidecars.map(s, s.name) + (variables.before + variables.after).map(s, s.name) + variables.inits.map(s, s.name)).exists(n,
      object.spec.containers.exists(c, c.name == n) || (has(object.spec.initContainers) && object.spec.initContainers.exists(c, c.name == n)))`,
  },
];

/** The volumes, pull secrets and annotations the set adds. */
const ADDED_VARIABLES: readonly { name: string; expression: string }[] = [
  { name: 'podVolumeNames', expression: `has(object.spec.volumes) ? object.spec.volumes.map(v, has(v.name) ? v.name : '') : []` },
  {
    name: 'setVolumeNames',
    expression: `has(params.spec.volumes) ? (variables.inits + variables.sidecars).map(s, (has(s.volumeMounts) ? s.volumeMounts.map(m, m.name) : []) +
      (has(s.volumeDevices) ? s.volumeDevices.map(d, d.name) : [])).flatten()
      .filter(n, params.spec.volumes.exists(v, v.name == n)).distinct() : []`,
  },
  { name: 'newVolumeNames', expression: `variables.setVolumeNames.filter(n, !(n in variables.podVolumeNames))` },
  { name: 'setSecrets', expression: `has(params.spec.imagePullSecrets) ? params.spec.imagePullSecrets : []` },
  {
    name: 'newSecrets',
    expression: `variables.setSecrets.filter(s, !has(object.spec.imagePullSecrets) || !object.spec.imagePullSecrets.exists(p, has(p.name) && p.name == s.name))`,
  },
  // A volume or pull secret a set later in name order added first would be at that set's place: pod-inject puts it at this one's.
  {
    name: 'takenByLater',
    expression: `variables.setVolumeNames.exists(n, n in ${recorded('later', 'volumes')}) ||
      variables.setSecrets.exists(s, s.name in ${recorded('later', 'imagePullSecrets')})`,
  },
  {
    name: 'patches',
    expression: `has(params.spec.patchPodMetadata) ? params.spec.patchPodMetadata.map(p, has(p.annotations) ? p.annotations.map(k,
      {'key': k, 'value': p.annotations[k], 'policy': has(p.patchPolicy) ? p.patchPolicy : ''}) : []).flatten() : []`,
  },
  // Retain keeps a value, Overwrite and MergePatchJson write over it: only a write to an absent key is undone by removing it.
  {
    name: 'patchExact',
    expression: `!variables.patches.exists(p, p.key in variables.recordedKeys || p.key in variables.recordedReads ||
      (p.key in variables.annotations && variables.annotations[p.key] != p.value && (p.policy == 'Overwrite' || p.policy == 'MergePatchJson')))`,
  },
  { name: 'writes', expression: `variables.patches.filter(p, !(p.key in variables.annotations))` },
  // The annotations its transferEnv reads a source container's name from: a set evaluated later may not write them.
  {
    name: 'reads',
    expression: `(variables.sidecars + variables.inits).map(s, has(s.transferEnv) ? s.transferEnv.filter(t, has(t.sourceContainerNameFrom) &&
      has(t.sourceContainerNameFrom.fieldRef) && t.sourceContainerNameFrom.fieldRef.fieldPath.startsWith('${ANNOTATIONS_PATH}')).map(t,
      ${subscriptKey('t.sourceContainerNameFrom.fieldRef.fieldPath', ANNOTATIONS_PATH)}) : []).flatten().distinct().sort()`,
  },
  { name: 'sidecarList', expression: `(variables.inits.filter(s, has(s.restartPolicy) && s.restartPolicy == 'Always') + variables.sidecars).map(s, s.name).sort()` },
  // The containers a rollout may re-image: as the sidecarList, with each HotUpgrade sidecar's pair in its place.
  {
    name: 'fenceContainers',
    expression: `variables.inits.filter(s, has(s.restartPolicy) && s.restartPolicy == 'Always').map(s, s.name) + (variables.before + variables.after).map(s, s.name)`,
  },
  {
    name: 'hashEntry',
    expression: `'"' + params.metadata.name + '":{"updateTimestamp":null,"hash":"%s","sidecarSetName":"' + params.metadata.name +
      '","sidecarList":[' + variables.sidecarList.map(n, '"' + n + '"').join(',') + ']'`,
  },
];

const INJECT: { name: string; expression: string } = {
  name: 'inject',
  expression: `has(params.metadata.annotations) && '${ANNOTATION_INJECTION_PATH}' in params.metadata.annotations &&
    params.metadata.annotations['${ANNOTATION_INJECTION_PATH}'] == 'policy' &&
    !('${ANNOTATION_INJECT_MARK}' in variables.annotations) && variables.recordValid &&
    (variables.record != '' || !(${list(BOOKKEEPING)}.exists(k, k in variables.annotations))) &&
    !(params.metadata.name in variables.recordedSets) && !(variables.canaryBase != '' && variables.canaryBase in variables.recordedSets) &&
    variables.podFits && variables.revision != '' && !variables.nameTaken && variables.shareExact && variables.inNameOrder &&
    !variables.takenByLater && variables.patchExact`,
};

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
  ...RECORD_VARIABLES,
  ...POD_VARIABLES,
  ...ADDED_VARIABLES,
  INJECT,
];

/** The env a sidecar `s` takes by transferEnv: each entry's names, sorted, from the first app container of its source name (lib/sidecarset/inject.ts transferEnvs). */
const TRANSFERRED = `(has(s.transferEnv) ? s.transferEnv.map(t, [
    has(t.sourceContainerNameFrom) && has(t.sourceContainerNameFrom.fieldRef) ?
      [t.sourceContainerNameFrom.fieldRef.fieldPath].map(f, f.startsWith('${LABELS_PATH}') ?
        [${subscriptKey('f', LABELS_PATH)}].map(k, k in variables.labels ? variables.labels[k] : '')[0] :
        [${subscriptKey('f', ANNOTATIONS_PATH)}].map(k, k in variables.annotations ? variables.annotations[k] : '')[0])[0] :
      (has(t.sourceContainerName) ? t.sourceContainerName : '')
  ].map(cn, variables.apps.filter(c, c.name == cn)).map(found, found.size() == 0 ? [] :
    ((has(t.envName) && t.envName != '' ? [t.envName] : []) + (has(t.envNames) ? t.envNames : [])).distinct().sort()
      .map(n, has(found[0].env) ? found[0].env.filter(e, e.name == n) : []).filter(l, l.size() > 0).map(l, l[0]))[0]).flatten() : [])`;

/** A HotUpgrade container's version envs, appended (not merged, as pod-inject does), each read from its own annotation. */
const VERSION_ENV = `(${HOT('s')} ? [
    {'name': dyn('${SIDECARSET_VERSION_ENV}'), 'valueFrom': dyn({'fieldRef': {'fieldPath': "metadata.annotations['${versionAnnotation('')}" + s.name + "']"}})},
    {'name': dyn('${SIDECARSET_VERSION_ALT_ENV}'), 'valueFrom': dyn({'fieldRef': {'fieldPath': "metadata.annotations['${versionAltAnnotation('')}" + s.name + "']"}})}] : [])`;

/** The ops that add one sidecar `s` at `path` (a CEL string): the container without the sidecar-only fields, then its env, mounts and devices. */
function sidecarOps(path: string): string {
  // pod-inject's env: the sidecar's own, then IS_INJECTED and the transferred env whose names are not taken yet (the first wins).
  const extra = `([{'name': 'IS_INJECTED', 'value': 'true'}] + ${TRANSFERRED})`;
  const own = `(has(s.env) ? s.env : [])`;
  const env = `[${extra}].map(x, ${own} + x.transformList(i, e, !${own}.exists(o, o.name == e.name) && x.map(y, y.name).indexOf(e.name) == i, e))[0] + ${VERSION_ENV}`;
  const paths = `((has(s.volumeMounts) ? s.volumeMounts.map(o, o.mountPath) : []) + (has(s.volumeDevices) ? s.volumeDevices.map(d, d.devicePath) : []))`;
  const taken = (p: string): string => `(${p} in taken)`;
  const shared = `(${SHARES('s', 'shareVolumePolicy')} ? [${paths}].map(taken, variables.appMounts.filter(m, !${taken('m.mountPath')}))[0] : [])`;
  const devices = `(${SHARES('s', 'shareVolumeDevicePolicy')} ? [${paths}].map(taken, variables.appDevices.filter(d, !${taken('d.devicePath')}))[0] : [])`;
  return `[JSONPatch{op: 'add', path: ${path}, value: s.transformMap(k, v, !(k in ${list(LEFT_OUT)}), v)},
    JSONPatch{op: 'add', path: ${path} + '/env', value: ${env}}] +
    [${shared}].map(sh, sh.size() == 0 ? [] : [JSONPatch{op: 'add', path: ${path} + '/volumeMounts', value: (has(s.volumeMounts) ? s.volumeMounts : []) + sh}])[0] +
    [${devices}].map(sh, sh.size() == 0 ? [] : [JSONPatch{op: 'add', path: ${path} + '/volumeDevices', value: (has(s.volumeDevices) ? s.volumeDevices : []) + sh}])[0]`;
}

const annotationOp = (key: string, value: string): string => `JSONPatch{op: 'add', path: '/metadata/annotations/${pointer(key)}', value: ${value}}`;
/** An annotation the policy wrote for the sets recorded before, as a list split at commas (none on the first set). */
const writtenList = (key: string): string => `(variables.record == '' || !('${key}' in variables.annotations) ? [] : variables.annotations['${key}'].split(',').filter(n, n != ''))`;
/** A hash annotation: the entries the policy wrote for the sets recorded before, and this set's, in name order (Go's map order). */
const hashText = (key: string, tail: string): string =>
  `'{' + ((variables.record == '' || !('${key}' in variables.annotations) ? [] : variables.annotations['${key}'].findAll('"[a-z0-9.-]+":\\\\{[^{}]*\\\\}')) +
    [variables.hashEntry.replace('%s', params.metadata.annotations['${key}']) + ${tail}]).sort().join(',') + '}'`;

const CONTAINERS = `variables.before.transformList(i, s, ${sidecarOps(`'/spec/containers/' + string(${recorded('earlier', 'before')}.size() + i)`)}).flatten() +
  variables.after.transformList(i, s, ${sidecarOps(`'/spec/containers/' + string(object.spec.containers.size() + variables.before.size() - ${recorded('later', 'after')}.size() + i)`)}).flatten()`;

/** Init containers in name order across the sets (as pod-inject sorts them), before or after the pod's own. */
const INIT_CONTAINERS = `(variables.inits.size() == 0 || has(object.spec.initContainers) ? [] : [JSONPatch{op: 'add', path: '/spec/initContainers', value: []}]) +
  variables.initBefore.transformList(i, s, ${sidecarOps(`'/spec/initContainers/' + string(variables.recordedInitBefore.filter(n, n < s.name).size() + i)`)}).flatten() +
  variables.initAfter.transformList(i, s, ${sidecarOps(`'/spec/initContainers/' + string((has(object.spec.initContainers) ? object.spec.initContainers.size() : 0) +
    variables.initBefore.size() - variables.recordedInitAfter.size() + variables.recordedInitAfter.filter(n, n < s.name).size() + i)`)}).flatten()`;

/** Volumes and pull secrets after the pod's own and those of the sets before this one in name order. */
const appendedOps = (key: 'volumes' | 'imagePullSecrets', items: string, value: string): string =>
  `(${items}.size() == 0 || has(object.spec.${key}) ? [] : [JSONPatch{op: 'add', path: '/spec/${key}', value: []}]) +
  ${items}.transformList(i, x, JSONPatch{op: 'add', path: '/spec/${key}/' + string((has(object.spec.${key}) ? object.spec.${key}.size() : 0) -
    ${recorded('later', key)}.size() + i), value: ${value}})`;

/** A version annotation of the HotUpgrade container `n` + suffix, as a JSON Patch op. */
const versionOp = (annotation: (name: string) => string, suffix: string, value: string): string =>
  `JSONPatch{op: 'add', path: '/metadata/annotations/${pointer(annotation(''))}' + n + '${suffix}', value: '${value}'}`;

/**
 * The HotUpgrade bookkeeping of the set's hot sidecars (lib/sidecarset/hot-upgrade.ts): the working
 * container runs version 1 and its empty partner 0; the working-container map keeps the entries the
 * sets recorded before wrote, in Go's key order (the entries' text sorts as their keys: DNS names).
 */
const HOT_ANNOTATIONS = `variables.hot.map(n, [${versionOp(versionAnnotation, '-1', '1')}, ${versionOp(versionAltAnnotation, '-1', '0')},
    ${versionOp(versionAnnotation, '-2', '0')}, ${versionOp(versionAltAnnotation, '-2', '1')}]).flatten() +
  (variables.hot.size() == 0 ? [] : [${annotationOp(ANNOTATION_WORKING_HOTUPGRADE, `'{' + ((variables.record == '' || !('${ANNOTATION_WORKING_HOTUPGRADE}' in variables.annotations) ? [] :
    variables.annotations['${ANNOTATION_WORKING_HOTUPGRADE}'].findAll('"[a-z0-9.-]+":"[a-z0-9.-]+"')) + variables.hot.map(n, '"' + n + '":"' + n + '-1"')).sort().join(',') + '}'`)}])`;

const ANNOTATIONS = `variables.writes.map(p, JSONPatch{op: 'add', path: '/metadata/annotations/' + p.key.replace('~', '~0').replace('/', '~1'), value: p.value}) + ${HOT_ANNOTATIONS} + [
  ${annotationOp(ANNOTATION_HASH, hashText(ANNOTATION_HASH, `',"controllerRevision":"' + variables.revision + '"}'`))},
  ${annotationOp(ANNOTATION_HASH_WITHOUT_IMAGE, hashText(ANNOTATION_HASH_WITHOUT_IMAGE, `'}'`))},
  ${annotationOp(ANNOTATION_INJECTED_LIST, `(${writtenList(ANNOTATION_INJECTED_LIST)} + [params.metadata.name]).sort().join(',')`)},
  ${annotationOp(ANNOTATION_FENCE_CONTAINERS, `(${writtenList(ANNOTATION_FENCE_CONTAINERS)} + variables.fenceContainers).distinct().sort().join(',')`)},
  ${annotationOp(ANNOTATION_FENCE_KEYS, `(${writtenList(ANNOTATION_FENCE_KEYS)} + variables.patches.map(p, p.key)).distinct().sort().join(',')`)},
  ${annotationOp(ANNOTATION_POLICY_RECORD, `((variables.record == '' ? [] : variables.record.split('|')) + ['set=' + params.metadata.name +
    ';base=' + variables.canaryBase + ';before=' + variables.before.map(s, s.name).join(',') + ';after=' + variables.after.map(s, s.name).join(',') +
    ';initBefore=' + variables.initBefore.map(s, s.name).join(',') + ';initAfter=' + variables.initAfter.map(s, s.name).join(',') +
    ';volumes=' + variables.newVolumeNames.join(',') + ';imagePullSecrets=' + variables.newSecrets.map(p, p.name).join(',') +
    ';annotations=' + variables.writes.map(p, p.key).sort().join(',') + ';reads=' + variables.reads.join(',')]).sort().join('|')`)}]`;

/** The whole injection, as JSON Patch ops, for a pod `variables.inject` accepts. */
const INJECTION = `${CONTAINERS} + ${INIT_CONTAINERS} +
  ${appendedOps('volumes', 'variables.newVolumeNames', 'params.spec.volumes.filter(v, v.name == x)[0]')} +
  ${appendedOps('imagePullSecrets', 'variables.newSecrets', 'x')} + ${ANNOTATIONS}`;

const MUTATION = `!variables.selects || variables.displaced ? [] :
  (has(object.metadata.annotations) ? [] : [JSONPatch{op: 'add', path: '/metadata/annotations', value: {}}]) +
  (variables.inject ? ${INJECTION} : [${annotationOp(ANNOTATION_INJECT_MARK, `'webhook'`)}])`;

/** The label selector of namespaces whose pods may be injected (the pod webhook's namespaceSelector). */
export type NamespaceSelector = Record<string, unknown>;

/** The policy's mutation expression and variables (the render and the mutant check share them). */
export const INJECTION_POLICY_CEL = { variables: VARIABLES, mutation: MUTATION } as const;

/** The policy and its binding, as API objects; `cel` replaces its expressions (a test's deliberately wrong policy). */
export function renderInjectionPolicy(namespaceSelector: NamespaceSelector, cel: { variables: readonly { name: string; expression: string }[]; mutation: string } = INJECTION_POLICY_CEL): Record<string, unknown>[] {
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
        // Once per set: the record tells the sets evaluated later what each one did.
        reinvocationPolicy: 'Never',
        variables: cel.variables,
        mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: cel.mutation } }],
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
