/**
 * The pod webhook's memo of what it derives from each stored version of a
 * SidecarSet (lib/sidecarset/stored-set-facts.ts): the answers are the same,
 * byte for byte, with and without it, over generated pods and sets (damaged
 * stored sets included), reviewed again and again by one long-lived
 * handler; a new resourceVersion is worked out again; a pinned revision
 * restored onto the set (which keeps the set's uid and resourceVersion) is
 * never answered from the memo.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { memoryNamespaceSource, memoryRevisionSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { decodeReview } from '../../lib/admission/review.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { currentRevisionName, newRevision } from '../../lib/sidecarset/revisions.ts';
import { memoisedStoredSetFacts, storedSetFacts } from '../../lib/sidecarset/stored-set-facts.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import type { HandlerDeps, HandlerResult } from '../../lib/webhooks/handler.ts';
import { podInjectHandlerWith } from '../../lib/webhooks/pod-inject.ts';
import { brokenClusterArb, matchingPodArb, type BodyInput } from '../../testkit/fuzz/arbitraries.ts';
import { podReview } from '../../testkit/reviews.ts';
import { NOW, pod, sidecar, sidecarSet } from '../../testkit/sidecarset-objects.ts';

/** The set as the API server would store it: its content names its uid here, so equal uids mean equal sets across runs. */
function asStored(set: SidecarSet, resourceVersion = '1'): SidecarSet {
  const uid = createHash('sha256').update(JSON.stringify(set)).digest('hex').slice(0, 32);
  return { ...set, metadata: { ...set.metadata, uid, resourceVersion } };
}

function deps(sets: readonly SidecarSet[], input?: BodyInput): HandlerDeps {
  return {
    sidecarSets: memorySidecarSetSource(sets),
    namespaces: memoryNamespaceSource(input?.cluster.namespaces ?? []),
    clock: { now: () => NOW },
    revisions: memoryRevisionSource([]),
  };
}

/** Everything the handler answered, as text: the verdict with its patch, or the failure. */
function answer(result: HandlerResult): string {
  return result.outcome === 'failed' ? JSON.stringify({ failed: result.failure.status, message: result.failure.message }) : JSON.stringify(result);
}

describe('pod-inject with its stored-version memo', () => {
  it('answers exactly as without the memo, over generated pods and sets, each reviewed twice by one long-lived handler', async () => {
    const { factsOf, memo } = memoisedStoredSetFacts();
    const memoised = podInjectHandlerWith(() => 0.5, factsOf);
    const fresh = podInjectHandlerWith(() => 0.5, storedSetFacts);
    let patched = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(matchingPodArb, matchingPodArb, brokenClusterArb.filter((input) => input.fn === 'pod-inject')), async (input) => {
        const sets = input.cluster.sidecarSets.map((set) => asStored(set));
        const request = decodeReview(JSON.parse(input.body.toString('utf8')));
        const want = answer(await fresh(request, deps(sets, input)));
        expect(answer(await memoised(request, deps(sets, input)))).toBe(want);
        expect(answer(await memoised(request, deps(sets, input)))).toBe(want);
        if (want.includes('"patch"')) patched++;
      }),
      { numRuns: 150, seed: 20261201 },
    );
    // The property is only worth something if pods were injected from the memo.
    expect(patched).toBeGreaterThan(20);
    expect(memo.size).toBeGreaterThan(0);
  });

  it('works a stored set out once for many pods, and again for its next resourceVersion', async () => {
    const { factsOf, memo } = memoisedStoredSetFacts();
    const handler = podInjectHandlerWith(() => 0.5, factsOf);
    const v1 = asStored(sidecarSet('agent', { containers: [sidecar('agent', { image: 'agent:1' })] }), '100');
    const v2: SidecarSet = { ...v1, metadata: { ...v1.metadata, resourceVersion: '101' }, spec: { ...v1.spec, containers: [sidecar('agent', { image: 'agent:2' })] } };
    const image = async (set: SidecarSet) => {
      const p: Pod = pod();
      const result = await handler(decodeReview(podReview('uid', p)), deps([set]));
      if (result.outcome === 'failed' || result.response.patch === undefined) throw new Error(`not patched: ${answer(result)}`);
      const out = applyPatch(structuredClone(p), decodePatch(result.response.patch)) as Pod;
      return out.spec?.containers.find((c) => c.name === 'agent')?.image;
    };
    for (let i = 0; i < 5; i++) expect(await image(v1)).toBe('agent:1');
    expect(memo.computed).toBe(1);
    expect(await image(v2)).toBe('agent:2');
    expect(await image(v2)).toBe('agent:2');
    expect(memo.computed).toBe(2);
    expect(memo.size).toBe(1);
  });

  it('injects a pinned revision restored onto the set, never the set as memoised under the same uid and resourceVersion', async () => {
    const old = sidecarSet('agent', { containers: [sidecar('agent', { image: 'agent:1' })] });
    const revision = newRevision(old, 'kruise-system', 1, 0);
    const revisionName = revision.metadata?.name ?? '';
    // 50% of pods get the pinned revision, by the draw; the set's uid and resourceVersion never change.
    const set = asStored(
      sidecarSet('agent', {
        containers: [sidecar('agent', { image: 'agent:2' })],
        injectionStrategy: { revision: { revisionName, policy: 'Partial' } },
        updateStrategy: { type: 'RollingUpdate', partition: '50%' },
      }),
    );
    let draw = 0.9;
    const handler = podInjectHandlerWith(() => draw);
    const review = async () => {
      const p: Pod = pod();
      const result = await handler(decodeReview(podReview('uid', p)), { ...deps([set]), revisions: memoryRevisionSource([revision]) });
      if (result.outcome === 'failed' || result.response.patch === undefined) throw new Error(`not patched: ${answer(result)}`);
      const out = applyPatch(structuredClone(p), decodePatch(result.response.patch)) as Pod;
      const entry = (JSON.parse(out.metadata?.annotations?.['kruise.io/sidecarset-hash'] ?? '{}') as Record<string, { controllerRevision?: string }>).agent;
      return { image: out.spec?.containers.find((c) => c.name === 'agent')?.image, revision: entry?.controllerRevision };
    };
    expect(await review()).toEqual({ image: 'agent:2', revision: currentRevisionName(set) });
    draw = 0.1;
    expect(await review()).toEqual({ image: 'agent:1', revision: revisionName });
    draw = 0.9;
    expect(await review()).toEqual({ image: 'agent:2', revision: currentRevisionName(set) });
  });
});
