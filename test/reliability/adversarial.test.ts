/**
 * The short version of the adversarial section of `npm run reliability`:
 * the same inputs (testkit/reliability/adversarial.ts), smaller, with limits far
 * above what the linear code takes and far below what the quadratic code it
 * replaced took at the same size (measured on the 2-core test machine).
 */
import { describe, expect, it } from '@jest/globals';
import { createPatchSharingValues, patchText } from '../../lib/admission/json-patch.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { injectPod, InjectionTooLargeError } from '../../lib/sidecarset/inject.ts';
import { MAX_ANSWER_BYTES, patchBytesOverAnswerLimit, smallestAnswerBytes } from '../../lib/admission/answer-size.ts';
import { FUZZ_NOW } from '../../testkit/fuzz/handlers.ts';
import { ADVERSARIAL, MB, measure, type AdversarialCase } from '../../testkit/reliability/adversarial.ts';

function adversarialCase(name: string): AdversarialCase {
  const found = ADVERSARIAL.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no adversarial case ${name}`);
  return found;
}

async function answered(name: string, bytes: number): Promise<{ ms: number; status: number; body: string }> {
  const c = adversarialCase(name);
  const m = await measure(c, c.build(bytes), 1);
  return { ms: m.maxReviewMs, status: m.status, body: m.answer.body };
}

describe('the worst reviews we can construct', () => {
  it('every one is answered at 256 KB, with the outcome its kind of input gets', async () => {
    const statuses: Record<string, number> = {};
    for (const c of ADVERSARIAL) {
      const m = await measure(c, c.build(MB / 4), 1);
      statuses[c.name] = m.status;
      expect(m.bodyBytes).toBeLessThanOrEqual(MB / 4);
      expect(m.bodyBytes).toBeGreaterThan(MB / 5);
      // Well under a second each; the deadline is 9 s.
      expect(m.maxReviewMs).toBeLessThan(3_000);
    }
    // Twenty copies of a 256 KB pod are over the answer limit; everything else is answered with a review.
    expect(Object.entries(statuses).filter(([, status]) => status !== 200)).toEqual([['Twenty sharing sidecars, many mounts', 500]]);
  }, 60_000);

  // Before: about 8 s at 1 MB (1.9 s at 0.48 MB, growing with the square). After: about 40 ms.
  it('a subPathExpr of $(NOPE) repeated against a long env is reviewed in linear time', async () => {
    const { ms, status } = await answered('subPathExpr $(VAR) against a long env', MB);
    expect(status).toBe(200);
    expect(ms).toBeLessThan(1_500);
  }, 60_000);

  // Before: 3.6 s at 1.2 MB, growing with the square (n × k measurements of the env lists). After: about 90 ms.
  it('the diff of an env list of n against one of 2n is linear', async () => {
    const { ms, status } = await answered('A container named like the sidecar, transferred env', 1.5 * MB);
    expect(status).toBe(200);
    expect(ms).toBeLessThan(1_500);
  }, 60_000);

  // Before: 0.41 s at 0.93 MB, growing with the square (two In lists intersected pairwise). After: about 100 ms at 3 MB.
  it('selector requirements on one key are intersected in linear time', async () => {
    const { ms, status } = await answered('Selector requirements on one key', 3 * MB);
    expect(status).toBe(200);
    expect(ms).toBeLessThan(1_500);
  }, 60_000);

  // Before: 1.1 s and 379 MB more memory at 2.9 MB, answering "the answer would be 80782300 bytes" once built.
  it('an answer twenty sharing sidecars would make too large is refused before it is built', async () => {
    const { ms, status, body } = await answered('Twenty sharing sidecars, many mounts', 3 * MB);
    expect(status).toBe(500);
    expect(JSON.parse(body)).toEqual({ message: expect.stringMatching(new RegExp(`^the answer would be at least \\d+ bytes, over the ${MAX_ANSWER_BYTES} a webhook answer may carry$`)) });
    expect(ms).toBeLessThan(1_500);
  }, 60_000);
});

describe('the answer-size bound of injection', () => {
  const set = (i: number) => ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: `share-${i}` },
    spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: `share-${i}-c`, image: 's:1', shareVolumePolicy: { type: 'enabled' } }] },
  });
  const pod = (mounts: number): Pod =>
    ({
      metadata: { namespace: 'shop', labels: { app: 'web' } },
      spec: { containers: [{ name: 'app', image: 'a', volumeMounts: Array.from({ length: mounts }, (_, i) => ({ name: 'data', mountPath: `/m${i}` })) }] },
    });
  const inject = (mounts: number, limit?: number) =>
    injectPod({ pod: pod(mounts), namespace: 'shop', sidecarSets: Array.from({ length: 10 }, (_, i) => set(i)), namespaceLabels: new Map(), now: FUZZ_NOW, ...(limit === undefined ? {} : { maxGrowthBytes: limit }) });

  it('refuses only answers the HTTP handler would refuse as well, and catches most of them', () => {
    const limit = patchBytesOverAnswerLimit - 1;
    let refused = 0;
    // Ten sharing sidecars: the answer crosses the limit near 17,000 mounts.
    for (const mounts of [12_000, 16_000, 18_000, 22_000, 30_000]) {
      let early: InjectionTooLargeError | undefined;
      try {
        inject(mounts, limit);
      } catch (error) {
        if (!(error instanceof InjectionTooLargeError)) throw error;
        early = error;
      }
      const patchBytes = Buffer.byteLength(patchText(createPatchSharingValues(pod(mounts), inject(mounts).pod)));
      if (early !== undefined) {
        refused++;
        expect(patchBytes).toBeGreaterThanOrEqual(early.growthBytes);
        expect(smallestAnswerBytes(patchBytes)).toBeGreaterThan(MAX_ANSWER_BYTES);
      }
    }
    expect(refused).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
