/**
 * pod-inject on a pod the injection policy wrote to: what the policy's
 * record names is removed, with the mark and the record, and every set
 * injected as for a pod the policy never saw; a reinvocation changes nothing.
 */
import { describe, expect, it } from '@jest/globals';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import type { AdmissionRequest } from '../../lib/admission/review.ts';
import { wrapInReview } from '../../lib/admission/wrap.ts';
import { memoryNamespaceSource, memoryRevisionSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD, withoutPolicyInjection } from '../../lib/sidecarset/policy-record.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { POLICY_WRITTEN_ANNOTATIONS } from '../../lib/webhook-config/injection-policy.ts';
import { podInjectHandler } from '../../lib/webhooks/pod-inject.ts';
import { appPod } from '../../testkit/reviews.ts';
import { NOW } from '../../testkit/sidecarset-objects.ts';

function set(name: string, container: string, volume: string): SidecarSet {
  return defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: container, image: `${container}:1`, volumeMounts: [{ name: volume, mountPath: `/${volume}` }] }],
      volumes: [{ name: volume, emptyDir: {} }],
      imagePullSecrets: [{ name: `${name}-pull` }],
    },
  });
}

const a = set('a', 'a-agent', 'a-data');
const b = set('b', 'b-agent', 'b-data');

/** The pod as the policy leaves it after injecting `a` alone (its timestamps null) and, when `marked`, marking it for another set. */
function policyPod(marked: boolean): Pod {
  const pod = injectPod({ pod: appPod(), namespace: 'default', sidecarSets: [a], namespaceLabels: new Map(), now: NOW }).pod;
  const annotations: Record<string, string> = { ...pod.metadata?.annotations };
  for (const key of POLICY_WRITTEN_ANNOTATIONS) annotations[key] = (annotations[key] ?? '').replace(/"updateTimestamp":"[^"]*"/, '"updateTimestamp":null');
  annotations[ANNOTATION_POLICY_RECORD] = 'set=a;base=;before=a-agent;after=;initBefore=;initAfter=;volumes=a-data;imagePullSecrets=a-pull;annotations=;reads=';
  if (marked) annotations[ANNOTATION_INJECT_MARK] = 'webhook';
  return { ...pod, metadata: { ...pod.metadata, annotations } };
}

async function podInject(pod: Pod, sets: SidecarSet[]): Promise<Pod> {
  const deps = { sidecarSets: memorySidecarSetSource(sets), namespaces: memoryNamespaceSource([]), revisions: memoryRevisionSource([]), clock: { now: () => NOW } };
  const result = await podInjectHandler(wrapInReview({ object: pod, operation: 'CREATE', uid: 'uid-p' }).request as AdmissionRequest, deps);
  if (!('response' in result)) throw new Error('pod-inject failed');
  const { patch } = result.response;
  return (patch === undefined ? pod : applyPatch(pod, decodePatch(patch))) as Pod;
}

describe('pod-inject on a pod the injection policy wrote to', () => {
  const alone = injectPod({ pod: appPod(), namespace: 'default', sidecarSets: [a, b], namespaceLabels: new Map(), now: NOW }).pod;

  it('undoes the policy and injects every set as for a pod the policy never saw', async () => {
    const answer = await podInject(policyPod(true), [a, b]);
    expect(answer).toEqual(alone);
    expect(await podInject(answer, [a, b])).toEqual(alone);
  });

  it('gives a pod only the policy injected the same pod as its own injection, record and timestamps rewritten', async () => {
    expect(await podInject(policyPod(false), [a])).toEqual(injectPod({ pod: appPod(), namespace: 'default', sidecarSets: [a], namespaceLabels: new Map(), now: NOW }).pod);
  });

  it('undoes a HotUpgrade pair the policy injected: both containers, their version annotations and their working-container entry', async () => {
    const hot = defaultSidecarSet({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'h' },
      spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'mesh', image: 'mesh:1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } }] },
    });
    const injected = injectPod({ pod: appPod(), namespace: 'default', sidecarSets: [hot], namespaceLabels: new Map(), now: NOW }).pod;
    expect(injected.spec?.containers.map((c) => c.name)).toEqual(['mesh-1', 'mesh-2', 'app']);
    const annotations = { ...injected.metadata?.annotations, [ANNOTATION_POLICY_RECORD]: 'set=h;base=;before=mesh-1,mesh-2;after=;initBefore=;initAfter=;volumes=;imagePullSecrets=;annotations=;reads=', [ANNOTATION_INJECT_MARK]: 'webhook' };
    const undone = withoutPolicyInjection({ ...injected, metadata: { ...injected.metadata, annotations } });
    expect(undone.spec?.containers).toEqual((appPod() as Pod).spec?.containers);
    expect(undone.metadata?.annotations).toEqual({});
    expect(await podInject({ ...injected, metadata: { ...injected.metadata, annotations } }, [hot])).toEqual(injected);
  });

  it('keeps the working-container entries of containers the policy did not add', () => {
    const pod = appPod() as Pod;
    pod.metadata = { ...pod.metadata, annotations: { 'kruise.io/sidecarset-working-hotupgrade-container': '{"mesh":"mesh-1","own":"own-2"}', [ANNOTATION_POLICY_RECORD]: 'set=h;base=;before=mesh-1,mesh-2;after=;initBefore=;initAfter=;volumes=;imagePullSecrets=;annotations=;reads=' } };
    expect(withoutPolicyInjection(pod).metadata?.annotations).toEqual({ 'kruise.io/sidecarset-working-hotupgrade-container': '{"own":"own-2"}' });
  });

  it('removes a mark from a pod no set injects', async () => {
    const marked = appPod() as Pod;
    marked.metadata = { ...marked.metadata, annotations: { [ANNOTATION_INJECT_MARK]: 'webhook' } };
    expect((await podInject(marked, [])).metadata?.annotations ?? {}).toEqual({});
  });
});
