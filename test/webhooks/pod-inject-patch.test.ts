/**
 * pod-inject writes its JSON Patch from what injection decided
 * (lib/webhooks/pod-inject-patch.ts), not by diffing the injected pod against
 * the received one. The diff stays as the oracle here: over generated pods and
 * sets (many containers, volumes named as a set's, init containers, HotUpgrade
 * sets, sidecars before and after the app, containers replaced by name,
 * awkward keys, shell characters and non-ASCII text, pods missing or nulling
 * the members injection writes, members in any order) the direct patch is the
 * diff's, byte for byte, and the handler answers with it.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { memoryNamespaceSource, memoryRevisionSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { createPatchSharingValues, patchText, pointer, type JsonPatchOperation } from '../../lib/admission/json-patch.ts';
import { decodeReview } from '../../lib/admission/review.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { injectionChanges, injectPod, type InjectionInput } from '../../lib/sidecarset/inject.ts';
import { bookkeepingKeysOn } from '../../lib/sidecarset/injection-bookkeeping.ts';
import { hasNamespaceSelector, type NamespaceLabels } from '../../lib/sidecarset/match.ts';
import { memoisedStoredSetFacts, storedSetFacts, type StoredSetFactsOf } from '../../lib/sidecarset/stored-set-facts.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { injectionPatch } from '../../lib/webhooks/pod-inject-patch.ts';
import { podInjectHandlerWith } from '../../lib/webhooks/pod-inject.ts';
import { awkwardKeysArb, brokenClusterArb, matchingPodArb, mutatedReviewArb, type BodyInput } from '../../testkit/fuzz/arbitraries.ts';
import { podReview } from '../../testkit/reviews.ts';
import { NOW } from '../../testkit/sidecarset-objects.ts';

/** The reference: the JSON Patch as a diff of the whole injected pod against the received one (how pod-inject wrote it before). */
function diffReferencePatch(input: InjectionInput): JsonPatchOperation[] {
  return createPatchSharingValues(input.pod, injectPod(input).pod);
}

/** The set as the API server stores it: its content names its uid. */
function asStored(set: SidecarSet): SidecarSet {
  const uid = createHash('sha256').update(JSON.stringify(set)).digest('hex').slice(0, 32);
  return { ...set, metadata: { ...set.metadata, uid, resourceVersion: '1' } };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonRecord = Record<string, Json>;

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Text that a shell or a JSON writer must take care with, and text beyond ASCII. */
const awkwardText = fc.constantFrom('$(A) `id` ; rm -rf / && echo "x" | tee \'y\'', 'naïve café ☕ 日本語 𝄞', '\u2028\u2029<>&', 'back\\slash\ttab\nline', '~1/~0', '');

/** How a generated pod is reshaped before it is reviewed. */
interface Reshape {
  /** More app containers, named so that none is a sidecar's name. */
  extraContainers: number;
  /** Volumes named as the sets' (the pod's own win). */
  setVolumes: boolean;
  /** Replaced with an absent or null member, or left alone. */
  annotations: 'keep' | 'absent' | 'null';
  metadata: 'keep' | 'absent' | 'null';
  spec: 'keep' | 'absent' | 'null';
  lists: Record<'containers' | 'initContainers' | 'volumes' | 'imagePullSecrets', 'keep' | 'absent' | 'null' | 'empty'>;
  /** The spec's and the pod's members in reverse order. */
  reverse: boolean;
  text: string;
}

const listShape = fc.constantFrom<'keep' | 'absent' | 'null' | 'empty'>('keep', 'keep', 'keep', 'absent', 'null', 'empty');
const memberShape = fc.constantFrom<'keep' | 'absent' | 'null'>('keep', 'keep', 'keep', 'keep', 'keep', 'absent', 'null');

const reshapeArb: fc.Arbitrary<Reshape> = fc.record({
  extraContainers: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 40 })),
  setVolumes: fc.boolean(),
  annotations: memberShape,
  metadata: memberShape,
  spec: memberShape,
  lists: fc.record({ containers: listShape, initContainers: listShape, volumes: listShape, imagePullSecrets: listShape }),
  reverse: fc.boolean(),
  text: awkwardText,
});

function reversed(object: JsonRecord): JsonRecord {
  const out: JsonRecord = {};
  for (const key of Object.keys(object).reverse()) Object.defineProperty(out, key, { value: object[key], enumerable: true, writable: true, configurable: true });
  return out;
}

function shaped(value: Json | undefined, shape: 'keep' | 'absent' | 'null' | 'empty'): Json | undefined {
  return shape === 'absent' ? undefined : shape === 'null' ? null : shape === 'empty' ? [] : value;
}

/** The pod reshaped: members removed or nulled, containers and volumes added, awkward text in an env value and an annotation. */
function reshapePod(pod: JsonRecord, sets: readonly SidecarSet[], r: Reshape): JsonRecord {
  let spec: JsonRecord = isRecord(pod.spec) ? { ...pod.spec } : {};
  const containers = Array.isArray(spec.containers) ? [...spec.containers] : [];
  for (let i = 0; i < r.extraContainers; i++) {
    containers.push({ name: `app-${i}-ünï`, image: 'app:1', env: [{ name: 'A', value: `${r.text} ${i}` }], volumeMounts: [{ name: 'data', mountPath: `/data/${i}` }] });
  }
  spec.containers = containers;
  if (r.setVolumes) {
    const names = sets.flatMap((s) => (Array.isArray(s.spec?.volumes) ? s.spec.volumes.map((v) => v.name) : []));
    spec.volumes = [...(Array.isArray(spec.volumes) ? spec.volumes : []), ...names.map((name) => ({ name, hostPath: { path: `/pod/${name}` } }))];
  }
  for (const key of ['containers', 'initContainers', 'volumes', 'imagePullSecrets'] as const) {
    const value = shaped(spec[key], r.lists[key]);
    if (value === undefined) Reflect.deleteProperty(spec, key);
    else spec[key] = value;
  }
  if (r.reverse) spec = reversed(spec);
  let metadata: JsonRecord = isRecord(pod.metadata) ? { ...pod.metadata } : {};
  const annotations = shaped(isRecord(metadata.annotations) ? { ...metadata.annotations, 'example.com/shell': r.text } : { 'example.com/shell': r.text }, r.annotations);
  if (annotations === undefined) Reflect.deleteProperty(metadata, 'annotations');
  else metadata.annotations = annotations;
  if (r.reverse) metadata = reversed(metadata);
  let out: JsonRecord = { ...pod };
  const m = shaped(metadata, r.metadata);
  const s = shaped(spec, r.spec);
  if (m === undefined) Reflect.deleteProperty(out, 'metadata');
  else out.metadata = m;
  if (s === undefined) Reflect.deleteProperty(out, 'spec');
  else out.spec = s;
  if (r.reverse) out = reversed(out);
  return out;
}

/** What the handler injects for a generated review: the pod as the API server would send it, and the stored sets. */
async function inputOf(body: BodyInput, reshape: Reshape | undefined, unpause: boolean, factsOf: StoredSetFactsOf): Promise<InjectionInput | undefined> {
  let request;
  try {
    request = decodeReview(JSON.parse(body.body.toString('utf8')));
  } catch {
    return undefined;
  }
  if (!isRecord(request.object)) return undefined;
  // Half the generated sets are paused: most pods would then get nothing to compare.
  const sidecarSets = body.cluster.sidecarSets.map((set) => asStored(unpause && isRecord(set.spec) ? { ...set, spec: { ...set.spec, injectionStrategy: {} } } : set));
  const generated = request.object;
  // Through JSON, as a request body is parsed: the reshaped pod holds no shared or undefined values.
  const pod = JSON.parse(JSON.stringify(reshape === undefined ? generated : reshapePod(generated, sidecarSets, reshape))) as Pod;
  const namespace = request.namespace !== undefined && request.namespace !== '' ? request.namespace : 'default';
  let namespaceLabels: NamespaceLabels = new Map();
  try {
    if (sidecarSets.some(hasNamespaceSelector)) namespaceLabels = await memoryNamespaceSource(body.cluster.namespaces).labels([namespace]);
  } catch {
    return undefined;
  }
  return { pod, namespace, sidecarSets, namespaceLabels, now: NOW, factsOf };
}

const generated = fc.oneof(
  { weight: 6, arbitrary: matchingPodArb },
  { weight: 1, arbitrary: brokenClusterArb.filter((input) => input.fn === 'pod-inject') },
  { weight: 1, arbitrary: awkwardKeysArb.filter((input) => input.fn === 'pod-inject') },
  { weight: 1, arbitrary: mutatedReviewArb.filter((input) => input.fn === 'pod-inject') },
);

describe('pod-inject\'s JSON Patch written from the injection\'s decisions', () => {
  it('is the diff of the injected pod, byte for byte, over generated pods and sets, reshaped and not', async () => {
    const { factsOf } = memoisedStoredSetFacts();
    const seen = { patched: 0, atFront: 0, atEnd: 0, diffed: 0, wholeMember: 0, reshaped: 0 };
    await fc.assert(
      fc.asyncProperty(generated, fc.option(reshapeArb, { freq: 3 }), fc.boolean(), fc.boolean(), async (body, reshape, unpause, memoised) => {
        const input = await inputOf(body, reshape ?? undefined, unpause, memoised ? factsOf : storedSetFacts);
        if (input === undefined) return;
        let changes;
        try {
          changes = injectionChanges(input);
        } catch {
          // Refused: the handler answers without a patch; the reference refuses it too.
          expect(() => injectPod(input)).toThrow();
          return;
        }
        const reference = diffReferencePatch(input);
        if (changes === undefined) {
          // Nothing injected: only the injection annotations the pod carries are removed (pod-inject-fence.ts).
          const removed = bookkeepingKeysOn(input.pod).map((key) => pointer(['metadata', 'annotations', key]));
          expect(reference.map((op) => `${op.op} ${op.path}`).sort()).toEqual(removed.map((path) => `remove ${path}`).sort());
          return;
        }
        const direct = injectionPatch(changes);
        expect(patchText(direct)).toBe(patchText(reference));
        // As the handler writes it: the hash annotations' JSON texts from their kept pieces.
        expect(patchText(direct, changes.stringTexts)).toBe(patchText(reference));
        expect(JSON.stringify(direct)).toBe(JSON.stringify(reference));
        if (direct.length > 0) seen.patched++;
        if (reshape !== null) seen.reshaped++;
        for (const list of changes.lists) {
          if (list.inserted === undefined) seen.diffed++;
          else if (list.inserted.items.length > 0 && list.inserted.at === 0 && list.list.length > list.inserted.items.length) seen.atFront++;
          else if (list.inserted.items.length > 0 && list.inserted.at > 0) seen.atEnd++;
        }
        if (direct.some((op) => op.path === '/metadata' || op.path === '/spec' || op.path === '/metadata/annotations' || /^\/spec\/[a-zA-Z]+$/.test(op.path))) seen.wholeMember++;
      }),
      { numRuns: 600, seed: 20261202 },
    );
    // Each way of writing the patch was taken often enough to mean something.
    expect(seen.patched).toBeGreaterThan(80);
    expect(seen.reshaped).toBeGreaterThan(40);
    expect(seen.atFront).toBeGreaterThan(10);
    expect(seen.atEnd).toBeGreaterThan(40);
    expect(seen.diffed).toBeGreaterThan(30);
    expect(seen.wholeMember).toBeGreaterThan(40);
  }, 120_000);

  it('answers with the diff\'s patch for a pod of many containers, volumes named as the set\'s, and a HotUpgrade sidecar before the app', async () => {
    const set = asStored({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'agent' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        containers: [
          { name: 'hot', image: 'hot:1', podInjectPolicy: 'BeforeAppContainer', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' }, volumeMounts: [{ name: 'data', mountPath: '/d' }] },
          { name: 'log', image: 'log:1', podInjectPolicy: 'BeforeAppContainer', env: [{ name: 'MSG', value: '`id`; echo "日本"' }], shareVolumePolicy: { type: 'enabled' } },
        ],
        initContainers: [{ name: 'init-a', image: 'init:1' }],
        volumes: [{ name: 'data', emptyDir: {} }],
      },
    });
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'shop', labels: { app: 'web' }, annotations: { note: 'ünïcødé $(x)' } },
      spec: {
        initContainers: [{ name: 'setup', image: 'setup:1' }],
        containers: Array.from({ length: 60 }, (_, i) => ({ name: `app-${i}`, image: 'app:1', volumeMounts: [{ name: 'data', mountPath: `/m/${i}` }] })),
        volumes: [{ name: 'data', hostPath: { path: '/pod-data' } }],
      },
    };
    const handler = podInjectHandlerWith(() => 0.5);
    const result = await handler(decodeReview(podReview('uid-many', pod)), {
      sidecarSets: memorySidecarSetSource([set]),
      namespaces: memoryNamespaceSource([]),
      revisions: memoryRevisionSource([]),
      clock: { now: () => NOW },
    });
    if (result.outcome === 'failed' || result.response.patch === undefined) throw new Error(`not patched: ${JSON.stringify(result)}`);
    const sent = Buffer.from(result.response.patch, 'base64').toString('utf8');
    const input: InjectionInput = { pod, namespace: 'shop', sidecarSets: [set], namespaceLabels: new Map(), now: NOW };
    expect(sent).toBe(patchText(diffReferencePatch(input)));
    // The pod's own volume of that name is kept, the sidecars come first, the init sidecar after the pod's.
    expect(sent).not.toContain('"path":"/spec/volumes/');
    expect(sent).toContain('{"op":"add","path":"/spec/containers/0","value":{"name":"hot-1"');
    expect(sent).toContain('{"op":"add","path":"/spec/initContainers/1","value":{"name":"init-a"');
  });
});
