/**
 * The seeded, short run of the admission fuzzer (the long one is
 * `npm run fuzz`): every property through the Lambda handler and the HTTPS
 * server, the every-field sweep, and the edges a random run rarely hits
 * exactly (the nesting limit, the size limit).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { runInThisContext } from 'node:vm';
import { MAX_REVIEW_DEPTH } from '../../lib/admission/review.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../../lib/webhooks/http-handler.ts';
import { ADMISSION_FUNCTIONS } from '../../lib/webhooks/registry.ts';
import { sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { appPod, podReview, sidecarSetReview, userSidecarSet } from '../../testkit/reviews.ts';
import { bodyInput, QUICK_SIZE } from '../../testkit/fuzz/arbitraries.ts';
import { ClusterView, httpsHandler, lambdaHandler, type WebhookHandler } from '../../testkit/fuzz/handlers.ts';
import { MAX_RESPONSE_BYTES } from '../../testkit/fuzz/oracle.ts';
import { everyFieldEveryType, fuzzProperties, sweep, type FuzzEnv } from '../../testkit/fuzz/properties.ts';

/** Fixed, so that a failure here reproduces: `npm run fuzz -- --seed 20261130 --only <name>`. */
const SEED = 20261130;

const view = new ClusterView();
const handlers: WebhookHandler[] = [];
const env: FuzzEnv = { view, handlers, size: QUICK_SIZE };
let closeHttps: () => Promise<void> = () => Promise.resolve();

/**
 * The worker's own process. Jest hands each test file a copy of `process`
 * (and of `node:process`) whose events never fire, so the listener sits on
 * the real one, read from the main context, where jest-circus listens too.
 */
const realProcess = runInThisContext('process') as NodeJS.Process;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => {
  unhandled.push(reason);
};

beforeAll(async () => {
  realProcess.on('unhandledRejection', onUnhandled);
  const https = await httpsHandler(view);
  closeHttps = () => https.close();
  handlers.push(await lambdaHandler(view), https);
});

afterEach(() => {
  // Each test's own rejections, reported where they happened.
  const seen = unhandled.splice(0);
  expect(seen).toEqual([]);
});

afterAll(async () => {
  realProcess.off('unhandledRejection', onUnhandled);
  await closeHttps();
});

describe('the unhandled-rejection watch', () => {
  it('sees a rejection nobody handles, so that its silence elsewhere means something', async () => {
    const probe = Promise.reject(new Error('probe'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Handled late, Node reports it handled after a turn, and jest forgives it.
    probe.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(unhandled.splice(0)).toEqual([new Error('probe')]);
  });
});

describe('fuzzing the admission functions through the Lambda handler and the HTTPS server', () => {
  it.each(fuzzProperties(env).map((p) => [p.name, p] as const))('%s: every answer keeps the contract', async (_name, p) => {
    await fc.assert(p.property, { seed: SEED, numRuns: p.quickRuns });
  });

  it('answers every field of a review replaced by every JSON type, or deleted, within the contract', async () => {
    const inputs = everyFieldEveryType();
    expect(inputs.length).toBeGreaterThan(1_000);
    // The Lambda handler only: the same code as the server's, which the properties above compare.
    await sweep({ ...env, handlers: handlers.filter((d) => d.name === 'lambda') }, inputs);
  });
});

/** A review of `fn` with a value nested `depth` levels deep (the envelope adds 3). */
function deepReview(fn: (typeof ADMISSION_FUNCTIONS)[number], depth: number): Buffer {
  const review = fn === 'pod-inject' ? podReview('uid-deep', appPod()) : sidecarSetReview('uid-deep', userSidecarSet());
  const text = JSON.stringify(review).replace('"object":{', `"object":{"deep":${'['.repeat(depth)}${']'.repeat(depth)},`);
  return Buffer.from(text);
}

describe('nesting', () => {
  const cluster = { sidecarSets: [sidecarSet('log-agent')], namespaces: [] };

  it.each(ADMISSION_FUNCTIONS)('%s serves a review nested exactly to the limit', async (fn) => {
    // review -> request -> object -> deep: 3 levels before the arrays.
    const body = deepReview(fn, MAX_REVIEW_DEPTH - 3);
    view.current = cluster;
    await sweep(env, [bodyInput(fn, body, cluster, 'at the nesting limit')]);
    const answer = await handlers[0]!.send({ fn, body });
    expect(answer.status).toBe(200);
  });

  it.each(ADMISSION_FUNCTIONS.flatMap((fn) => [MAX_REVIEW_DEPTH - 2, 10_000, 200_000].map((depth) => [fn, depth] as const)))(
    '%s refuses a review nested %i levels deep with 400, quickly, on both handlers',
    async (fn, depth) => {
      const body = deepReview(fn, depth);
      for (const handler of handlers) {
        const answer = await handler.send({ fn, body });
        expect({ handler: handler.name, status: answer.status, body: answer.body }).toEqual({
          handler: handler.name,
          status: 400,
          body: JSON.stringify({ message: `not an AdmissionReview v1 request: the body nests deeper than ${MAX_REVIEW_DEPTH} levels` }),
        });
        // Measured without recursing: well inside any webhook timeout even at 200,000 levels.
        expect(answer.ms).toBeLessThan(3_000);
      }
    },
  );
});

describe('size', () => {
  const cluster = { sidecarSets: [sidecarSet('log-agent')], namespaces: [] };

  /** The parts of a Pod or SidecarSet the cases below fill. */
  interface Fillable {
    metadata: Record<string, unknown>;
    spec: Record<string, unknown> & { containers: Record<string, unknown>[] };
  }

  /** A review whose body is just under the 6 MB limit, the bulk in one field that `place` puts somewhere. */
  function nearLimit(fn: (typeof ADMISSION_FUNCTIONS)[number], place: (object: Fillable, filler: string) => void): Buffer {
    const object = (fn === 'pod-inject' ? appPod() : userSidecarSet()) as unknown as Fillable;
    const reviewOf = () => (fn === 'pod-inject' ? podReview('uid-big', object) : sidecarSetReview('uid-big', object));
    place(object, '');
    const room = DEFAULT_MAX_BODY_BYTES - Buffer.byteLength(JSON.stringify(reviewOf())) - 16;
    place(object, 'A'.repeat(room));
    return Buffer.from(JSON.stringify(reviewOf()));
  }

  it.each([
    { fn: 'sidecarset-validate' as const, where: 'the name', place: (o: Fillable, s: string) => (o.metadata.name = s) },
    { fn: 'sidecarset-validate' as const, where: 'a container name', place: (o: Fillable, s: string) => (o.spec.containers[0]!.name = s) },
    { fn: 'sidecarset-validate' as const, where: 'a selector label key', place: (o: Fillable, s: string) => (o.spec.selector = { matchLabels: { [`k${s}`]: 'v' } }) },
    { fn: 'sidecarset-default' as const, where: 'an image', place: (o: Fillable, s: string) => (o.spec.containers[0]!.image = `i${s}`) },
    { fn: 'pod-inject' as const, where: 'an annotation', place: (o: Fillable, s: string) => (o.metadata.annotations = { big: s }) },
    { fn: 'pod-inject' as const, where: 'a container name', place: (o: Fillable, s: string) => (o.spec.containers[0]!.name = `c${s}`) },
  ])('$fn answers a review just under 6 MB with the bulk in $where within the contract, its answer small', async ({ fn, place }) => {
    const body = nearLimit(fn, place);
    expect(body.length).toBeGreaterThan(DEFAULT_MAX_BODY_BYTES - 1_000);
    expect(body.length).toBeLessThanOrEqual(DEFAULT_MAX_BODY_BYTES);
    await sweep(env, [bodyInput(fn, body, cluster, 'just under the size limit')]);
    const answer = await handlers[0]!.send({ fn, body });
    expect(answer.status).toBe(200);
    // Nothing is echoed whole: the uid is short, so the answer is too.
    expect(answer.body.length).toBeLessThan(20_000);
  });

  it('fails the call, saying why, when the defaults for thousands of containers make a patch too large to send', async () => {
    const set = userSidecarSet() as { spec: Record<string, unknown> };
    set.spec.containers = Array.from({ length: 20_000 }, (_, i) => ({ name: `c${i}`, image: 'x:1' }));
    const body = Buffer.from(JSON.stringify(sidecarSetReview('uid-amplified', set)));
    // Under a megabyte in, over 14 MB of patch out.
    expect(body.length).toBeLessThan(1_000_000);
    for (const handler of handlers) {
      const answer = await handler.send({ fn: 'sidecarset-default', body });
      expect({ handler: handler.name, status: answer.status }).toEqual({ handler: handler.name, status: 500 });
      expect(answer.body).toMatch(/^\{"message":"the answer would be at least \d{8} bytes, over the 6287360 a webhook answer may carry"\}$/);
    }
  });

  it('keeps the denial of a SidecarSet with thousands of invalid containers to its first hundred errors', async () => {
    const set = userSidecarSet() as { spec: Record<string, unknown> };
    set.spec.containers = Array.from({ length: 20_000 }, () => ({ name: 'Bad_Name', image: '' }));
    const body = Buffer.from(JSON.stringify(sidecarSetReview('uid-many', set)));
    const answer = await handlers[0]!.send({ fn: 'sidecarset-validate', body });
    expect(answer.status).toBe(200);
    const message = JSON.parse(answer.body).response.status.message as string;
    // About six errors for each container, the sidecar fields first (as in
    // Kruise); only the first hundred are listed.
    expect(message.endsWith('"enabled", "disabled", and 119900 more errors]')).toBe(true);
    expect(Buffer.byteLength(answer.body)).toBeLessThan(MAX_RESPONSE_BYTES / 100);
  });
});
