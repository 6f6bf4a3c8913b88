/**
 * The injection policy's differential on a real API server, shared by the
 * integration test and its mutant check: each case's pod created with
 * server-side dryRun through the policy, against pod-inject's core (lib)
 * for the same pod and set, the latter's answer also sent through the API
 * server (dryRun) so that both are defaulted alike.
 */
import { readFile } from 'node:fs/promises';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { isObject } from '../../lib/kube/json.ts';
import type { JsonObject, Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { injectingSets } from '../../lib/sidecarset/injecting-sets.ts';
import { injectionPath } from '../../lib/sidecarset/injection-path.ts';
import { currentRevisionName } from '../../lib/sidecarset/revisions.ts';
import { ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, type SidecarSet } from '../../lib/sidecarset/types.ts';
import { ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD } from '../../lib/sidecarset/policy-record.ts';
import { renderInjectionPolicy } from '../../lib/webhook-config/injection-policy.ts';
import { NAMESPACES, generateCases, selectedBy } from '../../testkit/conformance/generator.ts';

export const OPT_OUT = { key: 'sidecarset.kruise.io/injection', value: 'disabled' };
export const NAMESPACE_SELECTOR = { matchExpressions: [{ key: OPT_OUT.key, operator: 'NotIn', values: [OPT_OUT.value] }] };
const BETA = '/apis/apps.kruise.io/v1beta1/sidecarsets';

/** One case made single-set: its one injecting set renamed and keyed to the pod by a `case` label, so cases never select each other's pods. */
export interface PolicyCase {
  readonly index: number;
  readonly namespace: string;
  readonly pod: Pod;
  readonly set: SidecarSet;
}

const namespaceLabels = new Map(NAMESPACES.map((ns) => [ns.metadata?.name ?? '', { ...ns.metadata?.labels }]));

/**
 * The generator's inject cases made single-set: each set of a case's cluster
 * the rule sends to the policy, with the case's pod moved and relabelled so
 * that the set selects it (the generator's selectedBy), alone.
 */
export function policyCases(runs: number, seed: number): PolicyCase[] {
  const out: PolicyCase[] = [];
  for (const c of generateCases(runs, seed, '1.9')) {
    if (c.class !== 'inject') continue;
    for (const set of c.cluster.sidecarSets) {
      const keyed = keyedCase(c.pod, set, out.length);
      if (keyed !== undefined) out.push(keyed);
    }
  }
  return out;
}

function keyedCase(generatedPod: Pod, original: SidecarSet, index: number): PolicyCase | undefined {
  const label = `c${index}`;
  const spec: JsonObject = structuredClone(original.spec) ?? {};
  const selector: JsonObject = isObject(spec.selector) ? spec.selector : {};
  spec.selector = { ...selector, matchLabels: { ...(isObject(selector.matchLabels) ? selector.matchLabels : {}), case: label } };
  const metadata = { name: `${original.metadata?.name}-${label}`, annotations: { ...original.metadata?.annotations } };
  const set = defaultSidecarSet({ ...original, metadata, spec, status: undefined });
  if (injectionPath(set).path !== 'policy') return undefined;
  const moved = selectedBy({ ...generatedPod, metadata: { ...generatedPod.metadata, labels: { ...generatedPod.metadata?.labels, case: label } } }, set);
  const pod = structuredClone(moved);
  const namespace = pod.metadata?.namespace ?? 'default';
  pod.metadata = { ...pod.metadata, name: pod.metadata?.name ?? `pod-${label}`, namespace };
  delete pod.metadata.generateName;
  try {
    if (injectingSets([set], { labels: { ...pod.metadata.labels }, namespace, namespaceLabels }).length !== 1) return undefined;
  } catch {
    return undefined;
  }
  return { index, namespace, pod, set };
}

/** A control plane ready for the policy: the CRD, the cases' namespaces, and (unless `withoutPolicy`) the policy and binding. */
export async function preparePolicyCluster(cp: ControlPlane, policy: Record<string, unknown>[] = renderInjectionPolicy(NAMESPACE_SELECTOR)): Promise<void> {
  await cp.apply(await readFile(new URL('../../infra/k8s/crd.yaml', import.meta.url), 'utf8'));
  // The policy resolves its paramKind when it is created: the CRD must be served (and discovered) first.
  for (let i = 0; i < 100 && (await cp.request('admin', 'GET', BETA)).status !== 200; i++) await sleep(100);
  await sleep(3000);
  for (const ns of NAMESPACES) {
    if (ns.metadata?.name === 'default') continue;
    await expectOk(cp.request('admin', 'POST', '/api/v1/namespaces', ns), 'namespace');
  }
  for (const object of policy) {
    const plural = object.kind === 'MutatingAdmissionPolicy' ? 'mutatingadmissionpolicies' : 'mutatingadmissionpolicybindings';
    await expectOk(cp.request('admin', 'POST', `/apis/admissionregistration.k8s.io/v1/${plural}`, object), String(object.kind));
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

/** The pod as a dryRun creation leaves it (the API server's defaults, and the policy). */
export async function dryRunPod(cp: ControlPlane, pod: Pod): Promise<{ status: number; pod?: Pod; message?: string }> {
  const res = await cp.request('admin', 'POST', `/api/v1/namespaces/${pod.metadata?.namespace}/pods?dryRun=All`, pod);
  if (res.status !== 201) return { status: res.status, message: res.body };
  return { status: 201, pod: JSON.parse(res.body) as Pod };
}

/** pod-inject's core answer for the pod and this one set, through the same API server defaulting (its mark, added there, set aside). */
export async function podInjectAnswer(cp: ControlPlane, pod: Pod, set: SidecarSet): Promise<{ status: number; pod?: Pod; message?: string }> {
  const injected = injectPod({ pod, namespace: pod.metadata?.namespace ?? '', sidecarSets: [set], namespaceLabels, now: new Date('2026-12-07T06:00:00Z') }).pod;
  const answer = await dryRunPod(cp, injected);
  if (answer.pod) delete answer.pod.metadata?.annotations?.[ANNOTATION_INJECT_MARK];
  return answer;
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
