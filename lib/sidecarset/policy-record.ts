/**
 * What the injection policy (lib/webhook-config/injection-policy.ts) leaves
 * on a pod, and how pod-inject undoes it: the policy injects one set per
 * pod and records exactly what it added ({@link ANNOTATION_POLICY_RECORD}),
 * or marks the pod for pod-inject ({@link ANNOTATION_INJECT_MARK}). When
 * several sets select a pod, the first evaluated may have injected before
 * another marked it: pod-inject then removes what the record names, and the
 * mark and the record, and injects every set as it always has, so the pod
 * is the same whatever order the API server evaluated the sets in.
 *
 * The record is plain text (`set=<name>;containers=a,b;volumes=..;
 * imagePullSecrets=..;annotations=k1,k2`) because CEL can join strings but
 * not write JSON; names and annotation keys hold no `;`, `=` or `,`.
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject, Pod } from '../kube/types.ts';

/** The pod needs pod-inject (value `webhook`). */
export const ANNOTATION_INJECT_MARK = 'serverless-sidecarset/inject';
/** What the policy added to the pod. */
export const ANNOTATION_POLICY_RECORD = 'serverless-sidecarset/injected-by-policy';

export interface PolicyRecord {
  readonly set: string;
  readonly containers: readonly string[];
  readonly volumes: readonly string[];
  readonly imagePullSecrets: readonly string[];
  readonly annotations: readonly string[];
}

const FIELDS = ['set', 'containers', 'volumes', 'imagePullSecrets', 'annotations'] as const;

/** The record's fields; undefined when the text is not one the policy writes. */
export function parsePolicyRecord(text: string): PolicyRecord | undefined {
  const parts = text.split(';');
  if (parts.length !== FIELDS.length) return undefined;
  const values: string[] = [];
  for (const [i, part] of parts.entries()) {
    const prefix = `${FIELDS[i]}=`;
    if (!part.startsWith(prefix)) return undefined;
    values.push(part.slice(prefix.length));
  }
  const names = (value: string | undefined): string[] => (value ?? '').split(',').filter((n) => n !== '');
  return { set: values[0] ?? '', containers: names(values[1]), volumes: names(values[2]), imagePullSecrets: names(values[3]), annotations: names(values[4]) };
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
 * The pod as it was before the policy: without what its record names (a
 * record that is not the policy's text removes nothing), nor the mark and
 * the record. A new pod, its spec lists new where they change; the input
 * itself when it carries neither.
 */
export function withoutPolicyInjection(pod: Pod): Pod {
  const annotations = objectOf(objectOf(pod.metadata)?.annotations);
  if (annotations === undefined || (!Object.hasOwn(annotations, ANNOTATION_INJECT_MARK) && !Object.hasOwn(annotations, ANNOTATION_POLICY_RECORD))) return pod;
  const record = parsePolicyRecord(stringOf(annotations[ANNOTATION_POLICY_RECORD]) ?? '');
  const removed = new Set([ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD, ...(record?.annotations ?? [])]);
  const kept = Object.fromEntries(Object.entries(annotations).filter(([key]) => !removed.has(key)));
  const spec = objectOf(pod.spec);
  const out: Pod = { ...pod, metadata: { ...pod.metadata, annotations: kept as Record<string, string> } };
  if (record === undefined || spec === undefined) return out;
  const without = (list: unknown, names: readonly string[]): unknown[] => {
    const drop = new Set(names);
    return arrayOf(list).filter((item) => !(isObject(item) && typeof item.name === 'string' && drop.has(item.name)));
  };
  const newSpec: JsonObject = { ...spec, containers: without(spec.containers, record.containers) };
  for (const [key, names] of [['volumes', record.volumes], ['imagePullSecrets', record.imagePullSecrets]] as const) {
    if (names.length > 0 && spec[key] !== undefined) newSpec[key] = without(spec[key], names);
  }
  return { ...out, spec: newSpec as Pod['spec'] };
}
