/**
 * The rollout fence pod-inject writes (lib/sidecarset/rollout-fence.ts),
 * through the pod webhook's handler: what the pod policy later lets the
 * reconciler change in the pod comes from these two annotations, so only
 * pod-inject may write them.
 */
import { describe, expect, it } from '@jest/globals';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import type { AdmissionRequest } from '../../lib/admission/review.ts';
import { wrapInReview } from '../../lib/admission/wrap.ts';
import { memoryNamespaceSource, memoryRevisionSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import type { JsonObject, Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { validateSidecarSet } from '../../lib/sidecarset/validate.ts';
import { podInjectHandler } from '../../lib/webhooks/pod-inject.ts';
import { appPod } from '../../testkit/reviews.ts';
import { NOW } from '../../testkit/sidecarset-objects.ts';

const CONTAINERS = 'serverless-sidecarset/rollout-containers';
const KEYS = 'serverless-sidecarset/rollout-annotations';

function set(name: string, spec: Record<string, unknown>): SidecarSet {
  return defaultSidecarSet({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name }, spec: { selector: { matchLabels: { app: 'web' } }, ...spec } });
}

/** The pod as pod-inject's answer leaves it, and its warnings. */
async function injected(sets: SidecarSet[], annotations?: Record<string, string>): Promise<{ pod: Pod; warnings: string[] }> {
  const pod = appPod() as JsonObject;
  if (annotations !== undefined) (pod.metadata as JsonObject).annotations = annotations;
  const deps = { sidecarSets: memorySidecarSetSource(sets), namespaces: memoryNamespaceSource([]), revisions: memoryRevisionSource([]), clock: { now: () => NOW } };
  const result = await podInjectHandler(wrapInReview({ object: pod, operation: 'CREATE', uid: 'uid-f' }).request as AdmissionRequest, deps);
  if (!('response' in result)) throw new Error('pod-inject failed');
  const { patch, warnings } = result.response;
  return { pod: (patch === undefined ? pod : applyPatch(pod, decodePatch(patch))) as Pod, warnings: warnings ?? [] };
}

const agent = set('agent', { containers: [{ name: 'agent', image: 'agent:1' }], patchPodMetadata: [{ patchPolicy: 'Retain', annotations: { 'example.com/team': 'a' } }] });

describe('the rollout fence pod-inject writes', () => {
  it('lists the sidecars it injected and the sets’ patchPodMetadata keys, over what the pod’s creator wrote', async () => {
    const { pod } = await injected([agent], { [CONTAINERS]: 'app', [KEYS]: 'iam.amazonaws.com/role' });
    expect(pod.metadata?.annotations).toMatchObject({ [CONTAINERS]: 'agent', [KEYS]: 'example.com/team' });
  });

  it('lists both containers of a HotUpgrade sidecar and a native-sidecar init container, not a plain init container', async () => {
    const hot = set('hot', {
      containers: [{ name: 'mesh', image: 'mesh:1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } }],
      initContainers: [{ name: 'native', image: 'n:1', restartPolicy: 'Always' }, { name: 'once', image: 'o:1' }],
    });
    const { pod } = await injected([hot]);
    expect(pod.metadata?.annotations?.[CONTAINERS]).toBe('mesh-1,mesh-2,native');
    expect(pod.metadata?.annotations?.[KEYS]).toBe('');
  });

  it('removes the fence from a pod no set injects, saying so', async () => {
    const { pod, warnings } = await injected([], { [CONTAINERS]: 'app', [KEYS]: 'x', kept: 'yes' });
    expect(pod.metadata?.annotations).toEqual({ kept: 'yes' });
    expect(warnings).toEqual(['removed 2 injection annotation(s) from a pod no set injects: serverless-sidecarset/rollout-*']);
  });

  it('removes Kruise’s injection annotations from a pod no set injects, so that it names no set it never received', async () => {
    const forged = {
      'kruise.io/sidecarset-injected-list': 'agent,other',
      'kruise.io/sidecarset-hash': '{"other":{"updateTimestamp":"2026-01-01T00:00:00Z","hash":"h","sidecarSetName":"other","sidecarList":["app"]}}',
      'kruise.io/sidecarset-hash-without-image': '{"other":"h"}',
      [CONTAINERS]: 'app',
      kept: 'yes',
    };
    const other = set('other', { selector: { matchLabels: { app: 'elsewhere' } }, containers: [{ name: 'other', image: 'other:1' }] });
    const { pod, warnings } = await injected([other], forged);
    expect(pod.metadata?.annotations).toEqual({ kept: 'yes' });
    expect(warnings).toEqual(['removed 4 injection annotation(s) from a pod no set injects: kruise.io/sidecarset-*, serverless-sidecarset/rollout-*']);
    expect(warnings.every((w) => w.length < 120)).toBe(true);
  });

  it('keeps the entries a pod carries for other sets when a set injects it (Kruise merges them)', async () => {
    const entry = '"old":{"updateTimestamp":"2026-01-01T00:00:00Z","hash":"h","sidecarSetName":"old","sidecarList":["old"]}';
    const { pod } = await injected([agent], { 'kruise.io/sidecarset-hash': `{${entry}}`, 'kruise.io/sidecarset-injected-list': 'old' });
    expect(pod.metadata?.annotations?.['kruise.io/sidecarset-injected-list']).toBe('agent,old');
    expect(pod.metadata?.annotations?.['kruise.io/sidecarset-hash']).toContain(entry);
  });

  it('leaves a pod no set injects and without a fence unchanged', async () => {
    const { pod, warnings } = await injected([]);
    expect([pod, warnings]).toEqual([appPod(), []]);
  });

  it('is not a key a SidecarSet’s patchPodMetadata may write', () => {
    const widening = set('widening', { containers: [{ name: 'w', image: 'w:1' }], patchPodMetadata: [{ patchPolicy: 'Overwrite', annotations: { [CONTAINERS]: 'app' } }] });
    expect(validateSidecarSet(widening, { operation: 'CREATE', others: [], namespaceLabels: new Map() }).map((e) => `${e.path}: ${e.detail ?? ''}`)).toEqual([
      `spec.patchPodMetadata[0].annotations[${CONTAINERS}]: ${CONTAINERS} is written by the injection itself`,
    ]);
  });
});
