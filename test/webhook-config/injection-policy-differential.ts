/**
 * The injection policy's differential on a real API server, shared by the
 * integration test and its mutant check: each case's pod created with
 * server-side dryRun through the policy (the API server evaluates the
 * case's sets in the order its param cache lists them: any), then, where
 * pod-inject's matchConditions would call it, through pod-inject's core as
 * its webhook runs it (the policy's record undone); against pod-inject's
 * core alone for the same sets and the pod as the API server hands it to
 * the webhook (decoded and defaulted), the answers also sent through the
 * API server (dryRun) so that both are defaulted alike.
 */
import { readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { isObject } from '../../lib/kube/json.ts';
import type { JsonObject, Pod } from '../../lib/kube/types.ts';
import { ANNOTATION_BASE, ANNOTATION_CANARY } from '../../lib/sidecarset/canary.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { injectingSets } from '../../lib/sidecarset/injecting-sets.ts';
import { injectionPath } from '../../lib/sidecarset/injection-path.ts';
import { INJECTION_ANNOTATIONS } from '../../lib/sidecarset/pod-annotations.ts';
import { currentRevisionName } from '../../lib/sidecarset/revisions.ts';
import { ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, type SidecarSet } from '../../lib/sidecarset/types.ts';
import { ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD, withoutPolicyInjection } from '../../lib/sidecarset/policy-record.ts';
import { renderInjectionPolicy } from '../../lib/webhook-config/injection-policy.ts';
import { NAMESPACES, generateCases, selectedBy } from '../../testkit/conformance/generator.ts';

export const OPT_OUT = { key: 'sidecarset.kruise.io/injection', value: 'disabled' };
export const NAMESPACE_SELECTOR = { matchExpressions: [{ key: OPT_OUT.key, operator: 'NotIn', values: [OPT_OUT.value] }] };
const BETA = '/apis/apps.kruise.io/v1beta1/sidecarsets';
/** The label every stored set of a differential carries: its batch, deleted in one request once run. */
export const BATCH_LABEL = 'policy-differential-batch';

/** One case: a pod and the sets of its cluster, renamed and keyed to the pod by a `case` label so that cases never select each other's pods. */
export interface PolicyCase {
  readonly index: number;
  readonly namespace: string;
  readonly pod: Pod;
  readonly sets: readonly SidecarSet[];
  /** The sets that inject the pod (pod-inject's choice), and which of them the rule gives the policy. */
  readonly injecting: number;
  readonly policySets: number;
}

const namespaceLabels = new Map(NAMESPACES.map((ns) => [ns.metadata?.name ?? '', { ...ns.metadata?.labels }]));

/**
 * The generator's inject cases: each set of a case's cluster alone (the
 * case's pod moved and relabelled so that it selects it, the generator's
 * selectedBy); then the case's sets with those of the next two cases (their
 * containers renamed apart), and the sets the rule gives the policy among
 * this case's and the next four's, every fifth time each with a canary of
 * its first set, the pod relabelled for each set in turn, when at least two
 * then inject it.
 * Cases no set injects are left out.
 */
export function policyCases(runs: number, seed: number): PolicyCase[] {
  const out: PolicyCase[] = [];
  const inject = generateCases(runs, seed, '1.9').flatMap((c) => (c.class === 'inject' ? [c] : []));
  for (const [i, c] of inject.entries()) {
    for (const set of c.cluster.sidecarSets) {
      const keyed = keyedCase(c.pod, [set], out.length, 1);
      if (keyed !== undefined) out.push(keyed);
    }
    const others = [inject[i + 1], inject[i + 2]].flatMap((o) => o?.cluster.sidecarSets ?? []);
    const mixed = [...c.cluster.sidecarSets, ...others].map((set, k) => (k === 0 ? set : renamedApart(set, k)));
    if (i % 5 === 0 && mixed[0] !== undefined) mixed.push(canaryOf(mixed[0]));
    // And the sets the rule gives the policy among this case's and the next four's: several sets injected by the policy alone.
    const eligible = [c, ...inject.slice(i + 1, i + 5)].flatMap((o) => o.cluster.sidecarSets).map((set, k) => renamedApart(set, k + 1))
      .filter((set) => injectionPath(defaultSidecarSet(set)).path === 'policy');
    if (i % 5 === 0 && eligible[0] !== undefined) eligible.push(canaryOf(eligible[0]));
    for (const sets of [mixed, eligible]) {
      const keyed = keyedCase(c.pod, sets, out.length, 2);
      if (keyed !== undefined) out.push(keyed);
    }
  }
  return out;
}

/** The set named `<name>-<k>`, its containers and init containers too (so that sets of several cases never claim one name). */
function renamedApart(set: SidecarSet, k: number): SidecarSet {
  const spec: JsonObject = structuredClone(set.spec) ?? {};
  for (const key of ['containers', 'initContainers']) {
    if (Array.isArray(spec[key])) spec[key] = spec[key].map((c: unknown) => (isObject(c) && typeof c.name === 'string' ? { ...c, name: `${c.name}-${k}` } : c));
  }
  return { ...set, metadata: { ...set.metadata, name: `${set.metadata?.name}-${k}` }, spec };
}

/** A canary of `base`: the same selection, its own sidecar. */
function canaryOf(base: SidecarSet): SidecarSet {
  const canary = renamedApart(base, 9);
  const annotations = { ...canary.metadata?.annotations, [ANNOTATION_CANARY]: 'true', [ANNOTATION_BASE]: base.metadata?.name ?? '' };
  return { ...canary, metadata: { ...canary.metadata, name: `${base.metadata?.name}-canary`, annotations } };
}

/** A set renamed for the case (a canary's base too) and selecting only the case's pod. */
function keyedSet(original: SidecarSet, label: string): SidecarSet {
  const spec: JsonObject = structuredClone(original.spec) ?? {};
  const selector: JsonObject = isObject(spec.selector) ? spec.selector : {};
  spec.selector = { ...selector, matchLabels: { ...(isObject(selector.matchLabels) ? selector.matchLabels : {}), case: label } };
  const annotations: Record<string, string> = { ...original.metadata?.annotations };
  if (annotations[ANNOTATION_BASE] !== undefined && annotations[ANNOTATION_BASE] !== '') annotations[ANNOTATION_BASE] = `${annotations[ANNOTATION_BASE]}-${label}`;
  const metadata = { name: `${original.metadata?.name}-${label}`, annotations, labels: { [BATCH_LABEL]: 'pending' } };
  return defaultSidecarSet({ ...original, metadata, spec, status: undefined });
}

function keyedCase(generatedPod: Pod, originals: readonly SidecarSet[], index: number, least: number): PolicyCase | undefined {
  const label = `c${index}`;
  const sets = originals.map((set) => keyedSet(set, label));
  let pod: Pod = { ...generatedPod, metadata: { ...generatedPod.metadata, labels: { ...generatedPod.metadata?.labels, case: label } } };
  for (const set of sets) pod = selectedBy(pod, set);
  pod = structuredClone(pod);
  const namespace = pod.metadata?.namespace ?? 'default';
  pod.metadata = { ...pod.metadata, name: pod.metadata?.name ?? `pod-${label}`, namespace };
  delete pod.metadata.generateName;
  let injecting: SidecarSet[];
  try {
    injecting = injectingSets(sets, { labels: { ...pod.metadata.labels }, namespace, namespaceLabels });
  } catch {
    return undefined;
  }
  if (injecting.length < least) return undefined;
  return { index, namespace, pod, sets, injecting: injecting.length, policySets: injecting.filter((s) => injectionPath(s).path === 'policy').length };
}

/** A control plane ready for the policy: the CRD, the cases' namespaces, and the policy and binding (`policy`, or none when empty). */
export async function preparePolicyCluster(cp: ControlPlane, policy: Record<string, unknown>[] = renderInjectionPolicy(NAMESPACE_SELECTOR)): Promise<void> {
  await cp.apply(await readFile(new URL('../../infra/k8s/crd.yaml', import.meta.url), 'utf8'));
  // The policy resolves its paramKind when it is created: the CRD must be served (and discovered) first.
  for (let i = 0; i < 100 && (await cp.request('admin', 'GET', BETA)).status !== 200; i++) await sleep(100);
  await sleep(3000);
  for (const ns of NAMESPACES) {
    if (ns.metadata?.name === 'default') continue;
    await expectOk(cp.request('admin', 'POST', '/api/v1/namespaces', ns), 'namespace');
  }
  await installPolicy(cp, policy);
}

/** Creates the policy and binding (or, `replace`, deletes the ones installed first). */
export async function installPolicy(cp: ControlPlane, policy: Record<string, unknown>[], replace = false): Promise<void> {
  for (const object of policy) {
    const plural = `/apis/admissionregistration.k8s.io/v1/${object.kind === 'MutatingAdmissionPolicy' ? 'mutatingadmissionpolicies' : 'mutatingadmissionpolicybindings'}`;
    if (replace) await cp.request('admin', 'DELETE', `${plural}/${String((object.metadata as JsonObject).name)}`);
    await expectOk(cp.request('admin', 'POST', plural, object), String(object.kind));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function expectOk(response: Promise<{ status: number; body: string }>, what: string): Promise<JsonObject> {
  const res = await response;
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.body.slice(0, 800)}`);
  return JSON.parse(res.body) as JsonObject;
}

/** Stores the set as the defaulting webhook leaves it, with the status the reconciler writes (its revision, generation observed); returns it as stored. */
export async function storeSet(cp: ControlPlane, set: SidecarSet): Promise<SidecarSet> {
  const created = (await expectOk(cp.request('admin', 'POST', `/apis/${set.apiVersion}/sidecarsets`, set), `set ${set.metadata?.name}`)) as SidecarSet;
  const beta = (await expectOk(cp.request('admin', 'GET', `${BETA}/${created.metadata?.name}`), 'set')) as SidecarSet;
  const status = { ...beta.status, observedGeneration: beta.metadata?.generation, latestRevision: currentRevisionName(beta) };
  const updated: SidecarSet = await expectOk(cp.request('admin', 'PUT', `${BETA}/${created.metadata?.name}/status`, { ...beta, status }), 'status');
  return updated;
}

/** `work` over `items`, `concurrency` at a time, results in the items' order. */
export async function pooled<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const at = next++;
      results[at] = await work(items[at] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** Stores a batch of cases' sets (labelled with the batch); the sets as stored, per case. */
export async function storeBatch(cp: ControlPlane, cases: readonly PolicyCase[], batch: string, concurrency = 8): Promise<SidecarSet[][]> {
  const all = cases.flatMap((c, i) => c.sets.map((set) => ({ i, set: { ...set, metadata: { ...set.metadata, labels: { ...set.metadata?.labels, [BATCH_LABEL]: batch } } } })));
  const stored = await pooled(all, concurrency, async ({ set }) => storeSet(cp, set));
  const out: SidecarSet[][] = cases.map(() => []);
  all.forEach(({ i }, k) => out[i]?.push(stored[k] as SidecarSet));
  return out;
}

/** Deletes a batch's sets in one request. */
export async function deleteBatch(cp: ControlPlane, batch: string): Promise<void> {
  await expectOk(cp.request('admin', 'DELETE', `${BETA}?labelSelector=${BATCH_LABEL}%3D${batch}`), 'delete batch');
}

/** The pod as a dryRun creation leaves it (the API server's defaults, and the policy). */
export async function dryRunPod(cp: ControlPlane, pod: Pod): Promise<{ status: number; pod?: Pod; message?: string }> {
  const res = await cp.request('admin', 'POST', `/api/v1/namespaces/${pod.metadata?.namespace}/pods?dryRun=All`, pod);
  if (res.status !== 201) return { status: res.status, message: res.body };
  return { status: 201, pod: JSON.parse(res.body) as Pod };
}

const NOW = new Date('2026-12-07T06:00:00Z');

/** pod-inject's core answer for the pod and these sets, through the same API server defaulting (a mark the policy adds there set aside). */
export async function podInjectAnswer(cp: ControlPlane, pod: Pod, sets: readonly SidecarSet[]): Promise<{ status: number; pod?: Pod; message?: string }> {
  let injected: Pod;
  try {
    injected = injectPod({ pod, namespace: pod.metadata?.namespace ?? '', sidecarSets: sets, namespaceLabels, now: NOW }).pod;
  } catch (error) {
    // pod-inject refuses the pod (a resourcesPolicy matching no container, a patch that is not JSON, ...).
    return { status: 400, message: `pod-inject: ${String(error)}` };
  }
  const answer = await dryRunPod(cp, injected);
  if (answer.pod) delete answer.pod.metadata?.annotations?.[ANNOTATION_INJECT_MARK];
  return answer;
}

/** A pod a dryRun returned, as it can be created again (its server-set metadata and its status dropped). */
function resendable(pod: Pod): Pod {
  const kept = (key: string): boolean => !['uid', 'creationTimestamp', 'resourceVersion', 'managedFields'].includes(key);
  const metadata = Object.fromEntries(Object.entries(pod.metadata ?? {}).filter(([key]) => kept(key)));
  return Object.fromEntries(Object.entries({ ...pod, metadata }).filter(([key]) => key !== 'status'));
}

/** Whether pod-inject's webhook is called for the pod as the policies left it (lib/webhook-config/pod-inject-conditions.ts). */
export function reachesPodInject(pod: Pod): boolean {
  const annotations = pod.metadata?.annotations ?? {};
  if (Object.hasOwn(annotations, ANNOTATION_INJECT_MARK)) return true;
  return !Object.hasOwn(annotations, ANNOTATION_POLICY_RECORD) && INJECTION_ANNOTATIONS.some((k) => Object.hasOwn(annotations, k));
}

/** How a case went: injected by the policy alone, marked and finished by pod-inject, untouched by both, refused by both, or a difference (described). */
export type CaseOutcome = 'policy' | 'marked' | 'untouched' | 'refused' | { difference: string };

/**
 * The pod as the API server decodes and defaults it, as pod-inject's webhook
 * receives it on the webhook path: a dryRun creation no set selects (its
 * `case` label changed), the labels then put back.
 */
async function defaultedPod(cp: ControlPlane, pod: Pod): Promise<Pod | undefined> {
  const labels = { ...pod.metadata?.labels };
  const created = await dryRunPod(cp, { ...pod, metadata: { ...pod.metadata, labels: { ...labels, case: 'none' } } });
  if (created.pod === undefined) return undefined;
  return resendable({ ...created.pod, metadata: { ...created.pod.metadata, labels } });
}

/** One case through the policy path and through pod-inject alone, compared. */
export async function runCase(cp: ControlPlane, c: PolicyCase, stored: readonly SidecarSet[]): Promise<CaseOutcome> {
  try {
    return await compareCase(cp, c, stored);
  } catch (error) {
    return { difference: `failed: ${String(error)}` };
  }
}

async function compareCase(cp: ControlPlane, c: PolicyCase, stored: readonly SidecarSet[]): Promise<CaseOutcome> {
  const [viaPolicy, defaulted] = await Promise.all([dryRunPod(cp, c.pod), defaultedPod(cp, c.pod)]);
  const alone = defaulted === undefined ? { status: 400, message: 'the API server refuses the pod' } : await podInjectAnswer(cp, defaulted, stored);
  if (viaPolicy.pod === undefined) {
    // Refused by the policy: a difference unless pod-inject refuses it too.
    return alone.pod === undefined ? 'refused' : { difference: `refused through the policy (${viaPolicy.status} ${viaPolicy.message?.slice(-400) ?? ''})` };
  }
  const marked = reachesPodInject(viaPolicy.pod);
  const recorded = Object.hasOwn(viaPolicy.pod.metadata?.annotations ?? {}, ANNOTATION_POLICY_RECORD);
  let final = viaPolicy;
  // pod-inject's webhook as it runs on the policy path: the policy's work undone, every set injected.
  if (marked) final = await podInjectAnswer(cp, resendable(withoutPolicyInjection(viaPolicy.pod)), stored);
  if (final.pod === undefined || alone.pod === undefined) {
    return final.pod === alone.pod ? 'refused' : { difference: `one side refused: ${final.message?.slice(0, 200) ?? alone.message?.slice(0, 200) ?? ''}` };
  }
  if (!isDeepStrictEqual(comparable(final.pod), comparable(alone.pod))) return { difference: `the pod differs from pod-inject's${marked ? ' (marked)' : ''}: ${firstDifference(comparable(final.pod), comparable(alone.pod))}` };
  return marked ? 'marked' : recorded ? 'policy' : 'untouched';
}

/** The first path where two JSON values differ, with both values (short), for a failing case's message. */
export function firstDifference(a: unknown, b: unknown, at = ''): string {
  if (isDeepStrictEqual(a, b)) return '';
  if (isObject(a) && isObject(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!isDeepStrictEqual(a[key], b[key])) return firstDifference(a[key], b[key], `${at}/${key}`);
    }
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (const [i, item] of a.entries()) if (!isDeepStrictEqual(item, b[i])) return firstDifference(item, b[i], `${at}/${i}`);
  }
  return `${at}: ${JSON.stringify(a ?? null).slice(0, 300)} vs ${JSON.stringify(b ?? null).slice(0, 300)}`;
}

/** The pod without what differs between two dryRun creations (uid, time), `updateTimestamp` as the policy writes it, and the policy's record set aside. */
export function comparable(pod: Pod): JsonObject {
  const copy = structuredClone(pod) as JsonObject;
  const metadata = copy.metadata as JsonObject;
  delete metadata.uid;
  delete metadata.creationTimestamp;
  delete metadata.managedFields;
  const annotations = Object.fromEntries(Object.entries((metadata.annotations ?? {}) as Record<string, string>).filter(([key]) => key !== ANNOTATION_POLICY_RECORD));
  metadata.annotations = annotations;
  for (const key of [ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE]) {
    if (annotations[key] !== undefined) annotations[key] = annotations[key].replace(/"updateTimestamp":"[^"]*"/g, '"updateTimestamp":null');
  }
  return copy;
}
