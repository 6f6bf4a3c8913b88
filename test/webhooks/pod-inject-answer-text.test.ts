/**
 * pod-inject's answer is written from pieces (lib/kube/json-text.ts: a
 * stored set's frozen parts serialised once per stored version; the HTTP handler's
 * AdmissionReview around its base64 patch, lib/admission/review-text.ts):
 * over thousands of generated pods and sets, injected by one long-lived memo
 * as the function does, the patch and the answer are JSON.stringify's,
 * byte for byte; a set's next resourceVersion is never written from the
 * previous one's texts.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { memoryNamespaceSource, memoryRevisionSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { createPatchSharingValues, patchText } from '../../lib/admission/json-patch.ts';
import { complete, patched } from '../../lib/admission/responses.ts';
import { admissionReviewText } from '../../lib/admission/review-text.ts';
import { decodeReview, reviewOf } from '../../lib/admission/review.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { hasNamespaceSelector } from '../../lib/sidecarset/match.ts';
import { memoisedStoredSetFacts, storedSetFacts, type StoredSetFactsOf } from '../../lib/sidecarset/stored-set-facts.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { podInjectHandlerWith } from '../../lib/webhooks/pod-inject.ts';
import { brokenClusterArb, matchingPodArb, type BodyInput } from '../../testkit/fuzz/arbitraries.ts';
import { podReview } from '../../testkit/reviews.ts';
import { NOW, pod, sidecar, sidecarSet } from '../../testkit/sidecarset-objects.ts';

/** The set as the API server stores it: its content names its uid, so equal uids mean equal sets across inputs. */
function asStored(set: SidecarSet, resourceVersion = '1'): SidecarSet {
  const uid = createHash('sha256').update(JSON.stringify(set)).digest('hex').slice(0, 32);
  return { ...set, metadata: { ...set.metadata, uid, resourceVersion } };
}

/** The received pod and the injected one, as the handler would inject it; undefined when it refuses. */
async function injection(input: BodyInput, factsOf: StoredSetFactsOf): Promise<{ received: Pod; injected: Pod; warnings: string[] } | undefined> {
  const request = decodeReview(JSON.parse(input.body.toString('utf8')));
  const received = request.object as Pod;
  const namespace = request.namespace !== undefined && request.namespace !== '' ? request.namespace : (received.metadata?.namespace ?? 'default');
  const sidecarSets = input.cluster.sidecarSets.map((set) => asStored(set));
  try {
    // As the handler reads them: only when a set selects namespaces.
    const namespaceLabels = sidecarSets.some(hasNamespaceSelector) ? await memoryNamespaceSource(input.cluster.namespaces).labels([namespace]) : new Map();
    const result = injectPod({ pod: received, namespace, sidecarSets, namespaceLabels, now: NOW, factsOf });
    return { received, injected: result.pod, warnings: result.warnings };
  } catch {
    return undefined;
  }
}

const inputs = fc.oneof(matchingPodArb, matchingPodArb, matchingPodArb, brokenClusterArb.filter((input) => input.fn === 'pod-inject'));

describe('pod-inject\'s answer written from kept texts', () => {
  it('writes every patch and answer exactly as JSON.stringify, over a thousand generated pods and sets, each injected three times (twice by one long-lived memo)', async () => {
    const { factsOf, memo } = memoisedStoredSetFacts();
    let patches = 0;
    await fc.assert(
      fc.asyncProperty(inputs, async (input) => {
        // Twice: the second injection of the same sets is written from the texts the first one kept.
        for (const facts of [factsOf, factsOf, storedSetFacts]) {
          const done = await injection(input, facts);
          if (done === undefined) return;
          const ops = createPatchSharingValues(done.received, done.injected);
          expect(patchText(ops)).toBe(JSON.stringify(ops));
          const verdict = patched(done.received, done.injected, done.warnings);
          const review = reviewOf(complete('uid-1', verdict));
          expect(admissionReviewText(review)).toBe(JSON.stringify(review));
          if (ops.length > 0) patches++;
        }
      }),
      { numRuns: 1000, seed: 20261202 },
    );
    // Only worth something if many pods were injected from the memo's frozen facts.
    expect(patches).toBeGreaterThan(400);
    expect(memo.size).toBeGreaterThan(100);
  });

  it('writes denials, warnings and plain allows as JSON.stringify does', () => {
    const review = (response: Parameters<typeof reviewOf>[0]) => reviewOf(response);
    for (const response of [
      { uid: 'u"1', allowed: false, status: { code: 400, message: 'bad <pod> & "name"\u2028', reason: 'BadRequest' } },
      { uid: 'u2', allowed: true },
      { uid: 'u3', allowed: true, patchType: 'JSONPatch' as const, patch: Buffer.from('[{"op":"add","path":"/a","value":"é"}]').toString('base64'), warnings: ['one "quoted"', 'two\n'] },
      { uid: 'u4', allowed: true, patchType: 'JSONPatch' as const, patch: '' },
    ]) {
      expect(admissionReviewText(review(response))).toBe(JSON.stringify(review(response)));
    }
  });

  it('injects a set\'s next resourceVersion from its own texts, never the previous version\'s kept ones', async () => {
    const handler = podInjectHandlerWith(() => 0.5);
    const deps = (set: SidecarSet) => ({ sidecarSets: memorySidecarSetSource([set]), namespaces: memoryNamespaceSource([]), clock: { now: () => NOW }, revisions: memoryRevisionSource([]) });
    const v1 = asStored(
      sidecarSet('agent', {
        containers: [sidecar('agent', { image: 'agent:1', env: [{ name: 'LEVEL', value: 'info' }], resources: { limits: { cpu: '100m' } }, volumeMounts: [{ name: 'data', mountPath: '/data' }] })],
        volumes: [{ name: 'data', emptyDir: {} }],
      }),
      '100',
    );
    const v2: SidecarSet = {
      ...v1,
      // The hashes as the defaulting webhook writes them for the new spec.
      metadata: { ...v1.metadata, resourceVersion: '101', annotations: { ...v1.metadata?.annotations, 'kruise.io/sidecarset-hash': 'hash-of-v2', 'kruise.io/sidecarset-hash-without-image': 'hash-of-v2-without-image' } },
      spec: {
        ...v1.spec,
        containers: [sidecar('agent', { image: 'agent:2', env: [{ name: 'LEVEL', value: 'debug' }], resources: { limits: { cpu: '200m' } }, volumeMounts: [{ name: 'data', mountPath: '/data' }] })],
        volumes: [{ name: 'data', emptyDir: { medium: 'Memory' } }],
      },
    };
    const patchOf = async (set: SidecarSet) => {
      const result = await handler(decodeReview(podReview('uid', pod())), deps(set));
      if (result.outcome === 'failed' || result.response.patch === undefined) throw new Error(`not patched: ${JSON.stringify(result)}`);
      return Buffer.from(result.response.patch, 'base64').toString('utf8');
    };
    const first = await patchOf(v1);
    expect(await patchOf(v1)).toBe(first);
    const second = await patchOf(v2);
    for (const part of ['"image":"agent:2"', '{"name":"LEVEL","value":"debug"}', '"limits":{"cpu":"200m"}', '"medium":"Memory"']) expect(second).toContain(part);
    for (const part of ['agent:1', '"info"', '100m']) expect(second).not.toContain(part);
    // Its entries in the hash annotations too: the new version's hashes and revision, never the previous one's kept texts.
    const entries = (patch: string, set: SidecarSet) => {
      const ops = JSON.parse(patch) as { path: string; value: unknown }[];
      const annotation = (key: string) => {
        const op = ops.find((o) => o.path === `/metadata/annotations/${key.replace('/', '~1')}`) ?? ops.find((o) => o.path === '/metadata/annotations');
        const value = op?.path === '/metadata/annotations' ? (op.value as Record<string, string>)[key] : op?.value;
        return (JSON.parse(value as string) as Record<string, { hash: string; controllerRevision?: string }>).agent;
      };
      const hashes = set.metadata?.annotations ?? {};
      expect(annotation('kruise.io/sidecarset-hash')?.hash).toBe(hashes['kruise.io/sidecarset-hash']);
      expect(annotation('kruise.io/sidecarset-hash-without-image')?.hash).toBe(hashes['kruise.io/sidecarset-hash-without-image']);
      return annotation('kruise.io/sidecarset-hash')?.controllerRevision;
    };
    expect(v1.metadata?.annotations?.['kruise.io/sidecarset-hash']).not.toBe(v2.metadata?.annotations?.['kruise.io/sidecarset-hash']);
    const revision1 = entries(first, v1);
    const revision2 = entries(second, v2);
    expect(revision1).toMatch(/^agent-/);
    expect(revision2).toMatch(/^agent-/);
    expect(revision2).not.toBe(revision1);
    // And back: the first version's texts are worked out again, the same as before.
    expect(await patchOf(v1)).toBe(first);
  });
});
