/**
 * What the injection policy (lib/webhook-config/injection-policy.ts) leaves
 * on a pod, and how pod-inject undoes it. Each SidecarSet the policy injects
 * adds one entry to {@link ANNOTATION_POLICY_RECORD}, naming exactly what it
 * added and where (its sidecars before and after the app containers, its
 * init containers before and after the pod's own, its volumes, pull
 * secrets and the annotations its patchPodMetadata wrote), so that the next
 * set the API server evaluates places its own at the place pod-inject would,
 * whatever the order. A set that needs pod-inject marks the pod instead
 * ({@link ANNOTATION_INJECT_MARK}); pod-inject then removes what the record
 * names, the policy's bookkeeping, the mark and the record, and injects
 * every set as it always has.
 *
 * The record is plain text (entries joined by `|`, sorted; each
 * `set=<name>;base=<canary base>;before=a,b;after=..;initBefore=..;
 * initAfter=..;volumes=..;imagePullSecrets=..;annotations=k1,k2;reads=k3`,
 * `reads` the pod annotations its transferEnv took a container name from,
 * which a set evaluated later may then not write) because
 * CEL can split strings but not read JSON; names and annotation keys hold
 * no `|`, `;`, `=` or `,`.
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject, Pod } from '../kube/types.ts';
import { formatWorkingHotUpgrade, parseWorkingHotUpgrade, versionAltAnnotation, versionAnnotation } from './hot-upgrade.ts';
import { ANNOTATION_WORKING_HOTUPGRADE } from './pod-state.ts';
import { ANNOTATION_FENCE_CONTAINERS, ANNOTATION_FENCE_KEYS } from './rollout-fence.ts';
import { ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, ANNOTATION_INJECTED_LIST } from './types.ts';

/** The pod needs pod-inject (value `webhook`). */
export const ANNOTATION_INJECT_MARK = 'serverless-sidecarset/inject';
/** What the policy added to the pod. */
export const ANNOTATION_POLICY_RECORD = 'serverless-sidecarset/injected-by-policy';

/** The bookkeeping the policy writes beside its record (for every set it injects). */
export const POLICY_WRITTEN_ANNOTATIONS: readonly string[] = [ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, ANNOTATION_INJECTED_LIST, ANNOTATION_FENCE_CONTAINERS, ANNOTATION_FENCE_KEYS];

/** The fields of one entry, in the record's order (the policy's CEL reads them by position). */
export const RECORD_FIELDS = ['set', 'base', 'before', 'after', 'initBefore', 'initAfter', 'volumes', 'imagePullSecrets', 'annotations', 'reads'] as const;
export type RecordField = (typeof RECORD_FIELDS)[number];

/** One set's entry: `set` and `base` are names, the others lists of names (or annotation keys). */
export type PolicyRecordEntry = { readonly set: string; readonly base: string } & { readonly [K in Exclude<RecordField, 'set' | 'base'>]: readonly string[] };

const NAME = '[a-z0-9.-]';
const KEY = '[-A-Za-z0-9._/]';
const FIELD_PATTERN: Readonly<Record<RecordField, string>> = {
  set: `${NAME}+`,
  base: `${NAME}*`,
  before: `[a-z0-9.,-]*`,
  after: `[a-z0-9.,-]*`,
  initBefore: `[a-z0-9.,-]*`,
  initAfter: `[a-z0-9.,-]*`,
  volumes: `[a-z0-9.,-]*`,
  imagePullSecrets: `[a-z0-9.,-]*`,
  annotations: `(${KEY}|,)*`,
  reads: `(${KEY}|,)*`,
};
const ENTRY_PATTERN = RECORD_FIELDS.map((f) => `${f}=${FIELD_PATTERN[f]}`).join(';');
/** A record as the policy writes it (RE2 and JavaScript alike): the policy marks a pod whose record is not. */
export const RECORD_PATTERN = `^${ENTRY_PATTERN}(\\|${ENTRY_PATTERN})*$`;
/** What a stored pod may carry: also entries without `reads`, as an earlier policy wrote them. */
const STORED_ENTRY = `${RECORD_FIELDS.filter((f) => f !== 'reads').map((f) => `${f}=${FIELD_PATTERN[f]}`).join(';')}(;reads=${FIELD_PATTERN.reads})?`;
const RECORD_REGEX = new RegExp(`^${STORED_ENTRY}(\\|${STORED_ENTRY})*$`);

/** The record's entries; undefined when the text is not one the policy writes. */
export function parsePolicyRecord(text: string): PolicyRecordEntry[] | undefined {
  if (!RECORD_REGEX.test(text)) return undefined;
  const names = (value: string): string[] => value.split(',').filter((n) => n !== '');
  return text.split('|').map((entry) => {
    const values = entry.split(';').map((part) => part.slice(part.indexOf('=') + 1));
    const [set = '', base = '', before = '', after = '', initBefore = '', initAfter = '', volumes = '', imagePullSecrets = '', annotations = '', reads = ''] = values;
    return {
      set,
      base,
      before: names(before),
      after: names(after),
      initBefore: names(initBefore),
      initAfter: names(initAfter),
      volumes: names(volumes),
      imagePullSecrets: names(imagePullSecrets),
      annotations: names(annotations),
      reads: names(reads),
    };
  });
}

/** How the policy left the pod. */
export type PolicyState = 'untouched' | 'injected' | 'marked';

/** `injected`: a record and no mark (the policy alone injected it); `marked`: pod-inject must inject it. */
export function policyStateOf(pod: Pod): PolicyState {
  const annotations = objectOf(objectOf(pod.metadata)?.annotations) ?? {};
  if (Object.hasOwn(annotations, ANNOTATION_INJECT_MARK)) return 'marked';
  return Object.hasOwn(annotations, ANNOTATION_POLICY_RECORD) ? 'injected' : 'untouched';
}

/**
 * The pod as it was before the policy: without what its record names, nor
 * the bookkeeping the policy writes beside it ({@link POLICY_WRITTEN_ANNOTATIONS}), the mark and the record. A record that is not the policy's text removes
 * nothing but itself and the mark. A new pod, its spec lists new where they
 * change; the input itself when it carries neither.
 */
export function withoutPolicyInjection(pod: Pod): Pod {
  const annotations = objectOf(objectOf(pod.metadata)?.annotations);
  if (annotations === undefined || (!Object.hasOwn(annotations, ANNOTATION_INJECT_MARK) && !Object.hasOwn(annotations, ANNOTATION_POLICY_RECORD))) return pod;
  const entries = parsePolicyRecord(stringOf(annotations[ANNOTATION_POLICY_RECORD]) ?? '');
  const all = (field: Exclude<RecordField, 'set' | 'base'>): string[] => (entries ?? []).flatMap((e) => e[field]);
  const containers = [...all('before'), ...all('after')];
  const hotKeys = containers.flatMap((name) => [versionAnnotation(name), versionAltAnnotation(name)]);
  const removed = new Set([ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD, ...(entries === undefined ? [] : [...POLICY_WRITTEN_ANNOTATIONS, ...all('annotations'), ...hotKeys])]);
  const working = entries === undefined ? undefined : workingWithout(stringOf(annotations[ANNOTATION_WORKING_HOTUPGRADE]), new Set(containers));
  if (working === '') removed.add(ANNOTATION_WORKING_HOTUPGRADE);
  const kept = Object.fromEntries(Object.entries(annotations).filter(([key]) => !removed.has(key))) as Record<string, string>;
  if (working !== undefined && working !== '') kept[ANNOTATION_WORKING_HOTUPGRADE] = working;
  const spec = objectOf(pod.spec);
  const out: Pod = { ...pod, metadata: { ...pod.metadata, annotations: kept } };
  if (entries === undefined || spec === undefined) return out;
  const without = (list: unknown, names: readonly string[]): unknown[] => {
    const drop = new Set(names);
    return arrayOf(list).filter((item) => !(isObject(item) && typeof item.name === 'string' && drop.has(item.name)));
  };
  const newSpec: JsonObject = { ...spec, containers: without(spec.containers, [...all('before'), ...all('after')]) };
  const lists = [['initContainers', [...all('initBefore'), ...all('initAfter')]], ['volumes', all('volumes')], ['imagePullSecrets', all('imagePullSecrets')]] as const;
  for (const [key, names] of lists) {
    if (names.length > 0 && spec[key] !== undefined) newSpec[key] = without(spec[key], names);
  }
  return { ...out, spec: newSpec as Pod['spec'] };
}

/** The working-container map without the entries naming a container the policy added: '' once empty, undefined when none did. */
function workingWithout(text: string | undefined, added: ReadonlySet<string>): string | undefined {
  if (text === undefined) return undefined;
  const working = parseWorkingHotUpgrade(text);
  const size = working.size;
  for (const [name, container] of working) if (added.has(container)) working.delete(name);
  if (working.size === size) return undefined;
  return working.size === 0 ? '' : formatWorkingHotUpgrade(working);
}
