/**
 * The short version of the adversarial section of `npm run reliability`:
 * the same inputs (testkit/reliability/adversarial.ts), smaller. The cases whose
 * code was once quadratic are checked by how their time grows with the input,
 * which a loaded machine slows on both sides alike.
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

/**
 * How a case's review time grows from `small` bytes to four times that: about 4 when linear,
 * about 16 when quadratic. Medians of three, after a warm-up, so one pause of a busy machine
 * moves neither side; a ratio rather than milliseconds, so a slow machine moves neither.
 */
async function growthOf(name: string, small: number): Promise<{ ratio: number; status: number; body: string }> {
  const c = adversarialCase(name);
  await measure(c, c.build(small), 1);
  const before = await measure(c, c.build(small), 3);
  const after = await measure(c, c.build(4 * small), 3);
  return { ratio: after.reviewMs / before.reviewMs, status: after.status, body: after.answer.body };
}

/** Measured from 1/4 MB up: 1.6 to 3.4 for the code now, 8.5 to 14 for the quadratic code it replaced. */
const LINEAR_AT_MOST = 6;

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

  // The quadratic code took 8 s at 1 MB (1.9 s at 0.48 MB).
  it('a subPathExpr of $(NOPE) repeated against a long env is reviewed in linear time', async () => {
    const { ratio, status } = await growthOf('subPathExpr $(VAR) against a long env', MB / 4);
    expect(status).toBe(200);
    expect(ratio).toBeLessThan(LINEAR_AT_MOST);
  }, 60_000);

  // The quadratic code took 3.6 s at 1.2 MB (n × k measurements of the env lists).
  it('the diff of an env list of n against one of 2n is linear', async () => {
    const { ratio, status } = await growthOf('A container named like the sidecar, transferred env', (1.5 * MB) / 4);
    expect(status).toBe(200);
    expect(ratio).toBeLessThan(LINEAR_AT_MOST);
  }, 60_000);

  // The quadratic code took 0.41 s at 0.93 MB (two In lists intersected pairwise).
  it('selector requirements on one key are intersected in linear time', async () => {
    const { ratio, status } = await growthOf('Selector requirements on one key', (3 * MB) / 4);
    expect(status).toBe(200);
    expect(ratio).toBeLessThan(LINEAR_AT_MOST);
  }, 60_000);

  // The code that built the answer first took 1.1 s and 379 MB more memory at 2.9 MB; only the early refusal says "at least".
  it('an answer twenty sharing sidecars would make too large is refused before it is built', async () => {
    const { ratio, status, body } = await growthOf('Twenty sharing sidecars, many mounts', (3 * MB) / 4);
    expect(status).toBe(500);
    expect(JSON.parse(body)).toEqual({ message: expect.stringMatching(new RegExp(`^the answer would be at least \\d+ bytes, over the ${MAX_ANSWER_BYTES} a webhook answer may carry$`)) });
    expect(ratio).toBeLessThan(LINEAR_AT_MOST);
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
