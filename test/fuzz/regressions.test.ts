/**
 * The inputs the fuzzer found that broke the contract, reduced to the
 * smallest case and kept here so that they stay fixed whatever the seed.
 */
import { describe, expect, it } from '@jest/globals';
import { type JsonPatchOperation } from '../../lib/admission/json-patch.ts';
import { createPatch, encodePatch } from '../../testkit/json-patch.ts';
import { decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { decodeReview, InvalidReviewError, MAX_REVIEW_DEPTH } from '../../lib/admission/review.ts';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { formatFieldErrors, root } from '../../lib/kube/field-errors.ts';
import { nestsDeeperThan } from '../../lib/kube/json.ts';
import { canonicalQuantity, MAX_QUANTITY_LENGTH, quantityFromJson } from '../../lib/kube/quantity.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { validateSidecarSet } from '../../lib/sidecarset/validate.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import type { SidecarSet, SidecarSetSpec } from '../../lib/sidecarset/types.ts';
import { runReview } from '../../lib/webhooks/registry.ts';
import { NOW, pod, sidecar, sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { appPod, podReview, userSidecarSet } from '../../testkit/reviews.ts';

function inject(p: Pod, sets: SidecarSet[]): Pod {
  return injectPod({ pod: p, namespace: 'default', sidecarSets: sets, namespaceLabels: new Map(), now: NOW }).pod;
}

/** What a reinvocation would patch: the injected pod injected again (later). */
function reinvocationPatch(p: Pod, sets: SidecarSet[]) {
  const once = inject(p, sets);
  const twice = injectPod({ pod: once, namespace: 'default', sidecarSets: sets, namespaceLabels: new Map(), now: new Date(NOW.getTime() + 60_000) }).pod;
  return createPatch(once, twice);
}

describe('nesting', () => {
  const nested = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);

  it.each([
    [1, 0, false],
    [{}, 0, true],
    [{}, 1, false],
    [[[1]], 2, false],
    [[[1]], 1, true],
    [{ a: [{ b: {} }] }, 3, true],
    [{ a: [{ b: {} }] }, 4, false],
  ])('measures %j against %i levels as %s', (value, limit, deeper) => {
    expect(nestsDeeperThan(value, limit)).toBe(deeper);
  });

  it('measures a value nested 1,000,000 levels deep without overflowing the stack', () => {
    expect(nestsDeeperThan(nested(1_000_000), MAX_REVIEW_DEPTH)).toBe(true);
  });

  it('refuses a review nested past the limit as not a review (400), where it used to overflow the stack (500)', () => {
    const review = podReview('uid-deep', { ...appPod(), deep: nested(MAX_REVIEW_DEPTH) });
    expect(() => decodeReview(review)).toThrow(InvalidReviewError);
    expect(() => decodeReview(review)).toThrow(`the body nests deeper than ${MAX_REVIEW_DEPTH} levels`);
  });

  it('decodes a review nested exactly to the limit', () => {
    // review -> request -> object -> deep, then the arrays.
    const review = podReview('uid-deep', { ...appPod(), deep: nested(MAX_REVIEW_DEPTH - 3) });
    expect(decodeReview(review).uid).toBe('uid-deep');
  });
});

describe('pods with fields of the wrong type', () => {
  const deps = {
    sidecarSets: memorySidecarSetSource([sidecarSet('log-agent')]),
    namespaces: memoryNamespaceSource([]),
    clock: { now: () => NOW },
  };

  it.each([
    ['spec', 'x', 'spec must be an object'],
    ['spec', [], 'spec must be an object'],
    ['metadata.annotations', true, 'metadata.annotations must be a map of strings'],
    ['metadata.annotations', { 'kruise.io/sidecarset-injected-list': 5 }, 'metadata.annotations must be a map of strings'],
    ['spec.containers', 'app', 'spec.containers must be a list of objects'],
    ['spec.volumes', [1], 'spec.volumes must be a list of objects'],
  ])('denies (400) a pod whose %s is %j, which cannot be injected (it crashed, 500, or lost the value)', async (field, value, message) => {
    const object = appPod() as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
    const [first, second] = field.split('.') as [string, string | undefined];
    if (second === undefined) (object as Record<string, unknown>)[first] = value;
    else (first === 'metadata' ? object.metadata : object.spec)[second] = value;
    const outcome = await runReview('pod-inject', podReview('uid-typed', object), deps);
    expect(outcome).toMatchObject({
      kind: 'review',
      outcome: 'denied',
      review: { response: { uid: 'uid-typed', allowed: false, status: { code: 400, message: `the pod cannot be injected: ${message}`, reason: 'BadRequest' } } },
    });
  });

  it('still allows such a pod untouched when no SidecarSet applies to it', async () => {
    const object = { ...appPod(), spec: 'x', metadata: { labels: { app: 'db' } } };
    const outcome = await runReview('pod-inject', podReview('uid-other', object), deps);
    expect(outcome).toMatchObject({ kind: 'review', outcome: 'allowed' });
  });
});

describe('reinvocation changes nothing', () => {
  const set = (name: string, spec: Partial<SidecarSetSpec>) => sidecarSet(name, spec);

  it.each([
    ['not JSON', 'not json'],
    ['JSON with spaces', '{"b": 2}'],
    ['JSON with a null', '{"b":{"c":null}}'],
  ])('when a MergePatchJson annotation value is %s and the pod had no such annotation', (_why, value) => {
    const s = set('alpha', { patchPodMetadata: [{ annotations: { 'example.com/merged': value }, patchPolicy: 'MergePatchJson' }] });
    expect(reinvocationPatch(pod(), [s])).toEqual([]);
  });

  it('when a sidecar takes env from a sidecar another set injects', () => {
    const sets = [
      set('alpha', { containers: [sidecar('app-proxy', { transferEnv: [{ sourceContainerName: 'dns', envName: 'TOKEN' }] })] }),
      set('beta', { containers: [sidecar('dns', { env: [{ name: 'TOKEN', value: 't' }] })] }),
    ];
    const once = inject(pod(), sets);
    // As on the first call, where only the app container existed to take from.
    expect(once.spec?.containers.find((c) => c.name === 'app-proxy')?.env).toEqual([{ name: 'IS_INJECTED', value: 'true' }]);
    expect(reinvocationPatch(pod(), sets)).toEqual([]);
  });

  it('when a sidecar takes env from an app container that another sidecar replaces by name', () => {
    const sets = [
      set('alpha', {
        containers: [sidecar('log'), sidecar('proxy', { transferEnv: [{ sourceContainerName: 'log', envName: 'A' }], shareVolumePolicy: { type: 'enabled' } })],
      }),
    ];
    const p = pod({ containers: [{ name: 'log', image: 'old:1', env: [{ name: 'A', value: '1' }], volumeMounts: [{ name: 'v', mountPath: '/v' }] }, { name: 'app', image: 'app:1' }] });
    expect(reinvocationPatch(p, sets)).toEqual([]);
  });
});

describe('the validation message', () => {
  it('quotes at most 200 characters of a value, strings included', () => {
    const text = formatFieldErrors([root.child('metadata').child('name').invalid('x'.repeat(5_000), 'too long')]);
    expect(text).toBe(`metadata.name: Invalid value: "${'x'.repeat(199)}...: too long`);
  });

  it('cuts an error whose path runs through a huge key', () => {
    const text = formatFieldErrors([root.child('spec').key('k'.repeat(5_000)).required()]);
    expect(text).toHaveLength(1_003);
  });

  it('lists the first hundred errors and counts the rest', () => {
    const errors = Array.from({ length: 250 }, (_, i) => root.child('spec').index(i).required());
    const text = formatFieldErrors(errors);
    expect(text.startsWith('[spec[0]: Required value, spec[1]: Required value, ')).toBe(true);
    expect(text.endsWith('spec[99]: Required value, and 150 more errors]')).toBe(true);
  });
});

describe('decoding a large patch', () => {
  it('decodes a patch of several megabytes, where the base64 check used to overflow the stack', () => {
    const ops: JsonPatchOperation[] = Array.from({ length: 60_000 }, (_, i) => ({ op: 'add', path: `/spec/containers/${i}/imagePullPolicy`, value: 'IfNotPresent' }));
    const encoded = encodePatch(ops);
    expect(encoded.length).toBeGreaterThan(5_000_000);
    expect(decodePatch(encoded)).toHaveLength(60_000);
  });

  it.each(['a', 'ab=', 'abc==', 'a===', '====', 'ab=c', 'ab c'])('still refuses %j as padded base64', (text) => {
    expect(() => decodePatch(text)).toThrow('the patch is not valid padded base64');
  });
});

describe('quantities that took seconds', () => {
  /** Defaulting (two hashes) and validation of a set whose sidecar asks for `cpu`, timed. */
  function timed(cpu: string): { ms: number; errors: string[] } {
    const set = userSidecarSet() as { spec: { containers: Record<string, unknown>[] } };
    set.spec.containers[0]!.resources = { requests: { cpu } };
    const started = performance.now();
    const errors = validateSidecarSet(defaultSidecarSet(set as SidecarSet), { operation: 'CREATE', others: [], namespaceLabels: new Map() });
    return { ms: performance.now() - started, errors: errors.map((e) => `${e.path}: ${e.detail ?? ''}`) };
  }

  it('trims spaces in linear time: 100,000 inside a quantity took 24 s', () => {
    const { ms, errors } = timed(`1${' '.repeat(100_000)}m`);
    expect(ms).toBeLessThan(1_000);
    expect(errors).toEqual(['spec.containers[0].resources.requests[cpu]: must be no more than 1000 characters']);
  });

  it('refuses a quantity of a million digits, which took seconds to parse and print', () => {
    const { ms, errors } = timed('9'.repeat(1_000_000));
    expect(ms).toBeLessThan(1_000);
    expect(errors).toEqual(['spec.containers[0].resources.requests[cpu]: must be no more than 1000 characters']);
  });

  it('still reads a quantity at the length limit, and Go\'s surrounding spaces', () => {
    expect(quantityFromJson(`1${'0'.repeat(MAX_QUANTITY_LENGTH - 1)}`)).toMatchObject({ unscaled: 10n ** 999n, exponent: 0 });
    expect(canonicalQuantity(quantityFromJson(`\u00a0 250m\u3000`)!)).toBe('250m');
    expect(quantityFromJson(`1${'0'.repeat(MAX_QUANTITY_LENGTH)}`)).toBeUndefined();
  });
});

describe("patchPodMetadata and injection's own annotations", () => {
  const writing = (key: string, patchPolicy: string) => sidecarSet('alpha', { patchPodMetadata: [{ annotations: { [key]: 'x' }, patchPolicy }] });

  it.each(['kruise.io/sidecarset-hash', 'kruise.io/sidecarset-hash-without-image', 'kruise.io/sidecarset-injected-list'])(
    'refuses a SidecarSet that would write %s, which denied every pod it selected',
    (key) => {
      const errors = validateSidecarSet(writing(key, 'Overwrite'), { operation: 'CREATE', others: [], namespaceLabels: new Map() });
      expect(errors).toEqual([expect.objectContaining({ path: `spec.patchPodMetadata[0].annotations[${key}]`, type: 'Forbidden' })]);
    },
  );

  it('leaves them to the injection when a stored set writes them anyway', () => {
    const sets = [writing('kruise.io/sidecarset-hash', 'Overwrite'), writing('kruise.io/sidecarset-injected-list', 'MergePatchJson')];
    const once = inject(pod(), sets.slice(0, 1));
    expect(JSON.parse(once.metadata!.annotations!['kruise.io/sidecarset-hash']!)).toHaveProperty('alpha');
    expect(reinvocationPatch(pod(), sets.slice(1))).toEqual([]);
  });
});

describe('stored SidecarSets that no validation admitted', () => {
  it.each([
    ['without a name', { image: 'x:1' }],
    ['with an empty name', { name: '', image: 'x:1' }],
    ['whose name is an object that cannot become text', { name: { toString: '' }, image: 'x:1' }],
  ])('injects the others and warns about a sidecar %s, where it crashed (500) or added it again on every call', (_why, broken) => {
    const set = sidecarSet('alpha', { containers: [sidecar('log'), broken as never] });
    const result = injectPod({ pod: pod(), namespace: 'default', sidecarSets: [set], namespaceLabels: new Map(), now: NOW });
    expect(result.pod.spec?.containers.map((c) => c.name)).toEqual(['log', 'app']);
    expect(result.warnings).toEqual(['SidecarSet alpha: a sidecar without a name was not injected']);
    expect(reinvocationPatch(pod(), [set])).toEqual([]);
  });

  it('injects no stray imagePullSecrets item', () => {
    const set = sidecarSet('alpha', { imagePullSecrets: [{ name: 'cred' }, 5 as never, 'x' as never] });
    expect(inject(pod(), [set]).spec?.imagePullSecrets).toEqual([{ name: 'cred' }]);
  });
});
