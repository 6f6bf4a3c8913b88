/**
 * Pinned revisions at admission (rollout.md §2.3, §2.4): which revision the
 * pod webhook injects, through the handler with an in-memory RevisionSource,
 * and the validating webhook's check that a pin resolves.
 */
import { describe, expect, it } from '@jest/globals';
import { memoryNamespaceSource, memoryRevisionSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { decodeReview } from '../../lib/admission/review.ts';
import type { Pod } from '../../lib/kube/types.ts';
import type { RevisionSource } from '../../lib/ports.ts';
import { currentRevisionName, LABEL_CUSTOM_VERSION, newRevision, withOwnerApiVersion, type ControllerRevision } from '../../lib/sidecarset/revisions.ts';
import type { SidecarSet, SidecarSetSpec } from '../../lib/sidecarset/types.ts';
import type { HandlerDeps, HandlerResult } from '../../lib/webhooks/handler.ts';
import { podInjectHandlerWith } from '../../lib/webhooks/pod-inject.ts';
import { sidecarSetValidateHandler } from '../../lib/webhooks/sidecarset-validate.ts';
import { NOW, pod, sidecar, sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { podReview, sidecarSetReview } from '../../testkit/reviews.ts';

const NAMESPACE = 'kruise-system';

/** The set `agent` at `image`, labelled with a custom version when given. */
function agent(image: string, spec: Partial<SidecarSetSpec> = {}, customVersion?: string): SidecarSet {
  const set = sidecarSet('agent', { containers: [sidecar('agent', { image })], ...spec });
  if (customVersion !== undefined) set.metadata = { ...set.metadata, labels: { [LABEL_CUSTOM_VERSION]: customVersion } };
  return set;
}

// Three revisions of the history: images 1 and 2 (custom version "old"), 2 again as version "two".
const REV1 = newRevision(agent('agent:1', {}, 'old'), NAMESPACE, 1, 0);
const REV2 = newRevision(agent('agent:2', {}, 'old'), NAMESPACE, 2, 0);
const HISTORY = [REV1, REV2];
const nameOf = (r: ControllerRevision) => r.metadata?.name ?? '';
const hashOf = (r: ControllerRevision) => r.metadata?.annotations?.['kruise.io/sidecarset-hash'];

/** The current set, at agent:3, with a pin and strategy. */
function pinning(pin: Record<string, unknown> | undefined, strategy: Record<string, unknown> = {}): SidecarSet {
  return agent('agent:3', {
    ...(pin === undefined ? {} : { injectionStrategy: { revision: pin } }),
    updateStrategy: { type: 'RollingUpdate', ...strategy },
  });
}

/** Counts the reads; fails every read with `failure` when given. */
function counted(revisions: readonly ControllerRevision[], failure?: Error): RevisionSource & { reads: string[] } {
  const inner = memoryRevisionSource(revisions, NAMESPACE);
  const reads: string[] = [];
  return {
    namespace: NAMESPACE,
    reads,
    get(name, signal) {
      reads.push(`get ${name}`);
      return failure === undefined ? inner.get(name, signal) : Promise.reject(failure);
    },
    list(setName, labels, signal) {
      reads.push(`list ${setName} ${JSON.stringify(labels)}`);
      return failure === undefined ? inner.list(setName, labels, signal) : Promise.reject(failure);
    },
  };
}

function deps(sets: SidecarSet[], revisions: RevisionSource | undefined): HandlerDeps {
  return {
    sidecarSets: memorySidecarSetSource(sets),
    namespaces: memoryNamespaceSource([]),
    clock: { now: () => NOW },
    ...(revisions === undefined ? {} : { revisions }),
  };
}

type Injected = { image: string | undefined; controllerRevision: unknown; hash: unknown } | { failed: number; message: string };

async function inject(set: SidecarSet, options: { labels?: Record<string, string>; draw?: number; revisions?: RevisionSource | null } = {}): Promise<Injected> {
  const p: Pod = pod({ labels: { app: 'web', ...options.labels } });
  const revisions = options.revisions === null ? undefined : (options.revisions ?? counted(HISTORY));
  const result: HandlerResult = await podInjectHandlerWith(() => options.draw ?? 0.5)(decodeReview(podReview('uid', p)), deps([set], revisions));
  if (result.outcome === 'failed') return { failed: result.failure.status, message: result.failure.message };
  const patch = result.response.patch;
  const out = (patch === undefined ? p : applyPatch(structuredClone(p), decodePatch(patch))) as Pod;
  const entry = (JSON.parse(out.metadata?.annotations?.['kruise.io/sidecarset-hash'] ?? '{}') as Record<string, { controllerRevision?: string; hash?: string }>).agent;
  return { image: out.spec?.containers.find((c) => c.name === 'agent')?.image, controllerRevision: entry?.controllerRevision, hash: entry?.hash };
}

const current = (set: SidecarSet) => ({ image: 'agent:3', controllerRevision: currentRevisionName(set), hash: set.metadata?.annotations?.['kruise.io/sidecarset-hash'] });
const pinned = (r: ControllerRevision, image: string) => ({ image, controllerRevision: nameOf(r), hash: hashOf(r) });

describe('pod-inject with a pinned revision (rollout.md §2.4)', () => {
  it('injects the current set, with its computed revision name, and reads no revision when nothing is pinned', async () => {
    const revisions = counted(HISTORY);
    const set = pinning(undefined);
    expect(await inject(set, { revisions })).toEqual(current(set));
    expect(revisions.reads).toEqual([]);
  });

  it.each<[string, Record<string, unknown> | undefined, Record<string, unknown>, Record<string, string>, number, 'rev1' | 'rev2' | 'current']>([
    ['by revisionName, policy Always', { revisionName: nameOf(REV1), policy: 'Always' }, {}, {}, 0.5, 'rev1'],
    ['by revisionName, no policy (Always)', { revisionName: nameOf(REV1) }, {}, {}, 0.5, 'rev1'],
    ['by customVersion: the highest revision carrying it', { customVersion: 'old', policy: 'Always' }, {}, {}, 0.5, 'rev2'],
    ['Always, even for a pod updateStrategy.selector matches', { revisionName: nameOf(REV1), policy: 'Always' }, { selector: { matchLabels: { canary: 'true' } } }, { canary: 'true' }, 0.5, 'rev1'],
    ['Partial, a pod outside updateStrategy.selector', { revisionName: nameOf(REV1), policy: 'Partial' }, { selector: { matchLabels: { canary: 'true' } } }, {}, 0.5, 'rev1'],
    ['Partial, a pod the selector matches, no partition', { revisionName: nameOf(REV1), policy: 'Partial' }, { selector: { matchLabels: { canary: 'true' } } }, { canary: 'true' }, 0.5, 'current'],
    ['Partial, an int partition', { revisionName: nameOf(REV1), policy: 'Partial' }, { partition: 2 }, {}, 0, 'current'],
    ['Partial, 40%, a draw of 0.3', { revisionName: nameOf(REV1), policy: 'Partial' }, { partition: '40%' }, {}, 0.3, 'rev1'],
    ['Partial, 40%, a draw of exactly 0.4 (<=, as Kruise)', { revisionName: nameOf(REV1), policy: 'Partial' }, { partition: '40%' }, {}, 0.4, 'rev1'],
    ['Partial, 40%, a draw of 0.5', { revisionName: nameOf(REV1), policy: 'Partial' }, { partition: '40%' }, {}, 0.5, 'current'],
    ['paused, whatever the policy', { revisionName: nameOf(REV1), policy: 'Partial' }, { paused: true, selector: { matchLabels: { canary: 'true' } } }, { canary: 'true' }, 0.9, 'rev1'],
  ])('pinned %s', async (_name, pin, strategy, labels, draw, expected) => {
    const set = pinning(pin, strategy);
    const revisions = counted(HISTORY);
    const want = expected === 'current' ? current(set) : expected === 'rev1' ? pinned(REV1, 'agent:1') : pinned(REV2, 'agent:2');
    expect(await inject(set, { labels, draw, revisions })).toEqual(want);
    // One read for the pinning set: a GET by name, a list by custom version.
    expect(revisions.reads).toEqual([typeof pin?.revisionName === 'string' ? `get ${pin.revisionName}` : `list agent {"${LABEL_CUSTOM_VERSION}":"old"}`]);
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>, RegExp]>([
    ['a revisionName that does not exist', { revisionName: 'agent-gone' }, {}, /^cannot decide the injection: SidecarSet agent pins ControllerRevision agent-gone, which does not exist$/],
    ['a customVersion no revision carries', { customVersion: 'never' }, {}, /^cannot decide the injection: SidecarSet agent pins custom version never, but no ControllerRevision carries it$/],
    ['a customVersion that cannot be a label value', { customVersion: 'a b' }, {}, /^cannot decide the injection: SidecarSet agent pins custom version "a b" \(namespace kruise-system\), but the custom version cannot be a label value/],
    ['a malformed percent', { revisionName: nameOf(REV1), policy: 'Partial' }, { partition: 'x%' }, /SidecarSet agent has a malformed updateStrategy.partition "x%"/],
  ])('answers 500 "cannot decide", never the current set, for %s', async (_name, pin, strategy, message) => {
    const result = await inject(pinning(pin, strategy));
    expect(result).toEqual({ failed: 500, message: expect.stringMatching(message) });
  });

  it('answers 500 "cannot decide" for a pin by name of another set\'s revision, whatever the draw', async () => {
    const others = newRevision(sidecarSet('other', { containers: [sidecar('agent', { image: 'evil:1' })] }), NAMESPACE, 1, 0);
    for (const draw of [0, 0.99]) {
      const result = await inject(pinning({ revisionName: nameOf(others), policy: 'Partial' }, { partition: '50%' }), { draw, revisions: counted([...HISTORY, others]) });
      expect(result).toEqual({
        failed: 500,
        message: `cannot decide the injection: SidecarSet agent pins ControllerRevision ${nameOf(others)}, which belongs to SidecarSet "other": a set may pin only its own revisions`,
      });
    }
    const unlabelled: ControllerRevision = { ...REV1, metadata: { ...REV1.metadata, labels: {} } };
    expect(await inject(pinning({ revisionName: nameOf(REV1) }), { revisions: counted([unlabelled]) })).toEqual({
      failed: 500,
      message: `cannot decide the injection: SidecarSet agent pins ControllerRevision ${nameOf(REV1)}, which carries no kruise.io/sidecarset-name label: a set may pin only its own revisions`,
    });
  });

  it.each([
    ['apps.kruise.io/v1alpha1 (Kruise 1.8, or this project on a cluster storing v1alpha1)', 'apps.kruise.io/v1alpha1'],
    ['apps.kruise.io/v1beta1 (Kruise 1.9, or this project on a cluster storing v1beta1)', 'apps.kruise.io/v1beta1'],
  ])('injects a revision pinned by name whose controller names the set as %s', async (_name, apiVersion) => {
    const owned = withOwnerApiVersion(REV1, apiVersion);
    expect(owned.metadata?.ownerReferences).toEqual([expect.objectContaining({ apiVersion, kind: 'SidecarSet', name: 'agent', controller: true })]);
    expect(await inject(pinning({ revisionName: nameOf(REV1) }), { revisions: counted([owned]) })).toEqual(pinned(REV1, 'agent:1'));
  });

  it.each<[string, Record<string, unknown>, string, string | undefined]>([
    ['another SidecarSet', { apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet', name: 'other', uid: 'u-other' }, 'SidecarSet "other" (apps.kruise.io/v1beta1, uid u-other)', undefined],
    ['an earlier set of the same name (another uid)', { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', name: 'agent', uid: 'u-old' }, 'SidecarSet "agent" (apps.kruise.io/v1alpha1, uid u-old)', 'u-new'],
    ['another kind of the same name', { apiVersion: 'apps/v1', kind: 'Deployment', name: 'agent' }, 'Deployment "agent" (apps/v1)', undefined],
    ['a SidecarSet of a version the group does not have', { apiVersion: 'apps.kruise.io/v2', kind: 'SidecarSet', name: 'agent' }, 'SidecarSet "agent" (apps.kruise.io/v2)', undefined],
  ])('answers 500 "cannot decide" for a revision labelled with the set but controlled by %s', async (_name, ref, words, uid) => {
    const foreign: ControllerRevision = { ...REV1, metadata: { ...REV1.metadata, ownerReferences: [{ ...ref, controller: true }] } };
    const set = pinning({ revisionName: nameOf(REV1) });
    if (uid !== undefined) set.metadata = { ...set.metadata, uid };
    expect(await inject(set, { revisions: counted([foreign]) })).toEqual({
      failed: 500,
      message: `cannot decide the injection: SidecarSet agent pins ControllerRevision ${nameOf(REV1)}, which is controlled by ${words}: a set may pin only its own revisions`,
    });
  });

  it('answers 500 "cannot decide" for a pinned revision whose recorded sidecars a SidecarSet could not hold', async () => {
    const spec = { $patch: 'replace', containers: [{ name: 'agent', image: ' agent:1', securityContext: { privileged: 'yes' } }], patchPodMetadata: [{ annotations: { 'kruise.io/sidecarset-inplace-update-state': '{}' }, patchPolicy: 'Overwrite' }] };
    const forged: ControllerRevision = { ...REV1, data: { spec } };
    const result = await inject(pinning({ revisionName: nameOf(REV1) }), { revisions: counted([forged]) });
    expect(result).toEqual({
      failed: 500,
      message: expect.stringMatching(
        new RegExp(`^cannot decide the injection: SidecarSet agent pins ControllerRevision ${nameOf(REV1)}, whose recorded sidecars are not valid: data\\.spec\\.containers\\[0\\]\\.securityContext\\.privileged: Invalid value: "yes": must be a boolean; .*data\\.spec\\.patchPodMetadata\\[0\\]\\.annotations\\[kruise\\.io/sidecarset-inplace-update-state\\]: Forbidden`),
      ) as unknown,
    });
  });

  it('answers 503 naming the set, the revision and the namespace when the revisions cannot be read', async () => {
    const revisions = counted(HISTORY, new Error('connect ECONNREFUSED 127.0.0.1:6443'));
    expect(await inject(pinning({ revisionName: nameOf(REV1) }), { revisions })).toEqual({
      failed: 503,
      message: `cannot decide the injection: SidecarSet agent pins ControllerRevision "${nameOf(REV1)}" (namespace kruise-system), which cannot be read: connect ECONNREFUSED 127.0.0.1:6443`,
    });
  });

  it('cannot decide (503) where no ControllerRevisions are read at all, for a set that pins one', async () => {
    expect(await inject(pinning({ revisionName: nameOf(REV1) }), { revisions: null })).toEqual({
      failed: 503,
      message: `cannot decide the injection: SidecarSet agent pins ControllerRevision "${nameOf(REV1)}", but ControllerRevisions are not read here`,
    });
  });

  it('reads nothing for a pinning set that does not apply to the pod, even when its pin is missing', async () => {
    const revisions = counted([]);
    const elsewhere = agent('agent:3', { selector: { matchLabels: { app: 'db' } }, injectionStrategy: { revision: { revisionName: 'agent-gone' } } });
    expect(await inject(elsewhere, { revisions })).toEqual({ image: undefined, controllerRevision: undefined, hash: undefined });
    expect(revisions.reads).toEqual([]);
  });

  it('reads each pinning set once per review, however many sets pin, and draws once per pinning set', async () => {
    const own = ['a', 'b', 'c'].map((name) => newRevision(sidecarSet(name, { containers: [sidecar(`${name}-agent`, { image: 'agent:1' })] }), NAMESPACE, 1, 0));
    const revisions = counted(own);
    const draws: number[] = [];
    const sets = ['a', 'b', 'c'].map((name, i) =>
      sidecarSet(name, { containers: [sidecar(`${name}-agent`)], injectionStrategy: { revision: { revisionName: nameOf(own[i] as ControllerRevision), policy: 'Partial' } }, updateStrategy: { type: 'RollingUpdate', partition: '50%' } }),
    );
    const handler = podInjectHandlerWith(() => {
      draws.push(draws.length);
      return 0.9;
    });
    const result = await handler(decodeReview(podReview('uid', pod())), deps(sets, revisions));
    expect(result.outcome).toBe('patched');
    expect(revisions.reads).toEqual(own.map((r) => `get ${nameOf(r)}`));
    expect(draws).toHaveLength(3);
  });
});

describe('sidecarset-validate: a pinned revision must resolve now (rollout.md §2.4)', () => {
  async function validate(set: SidecarSet, revisions: RevisionSource): Promise<HandlerResult> {
    return sidecarSetValidateHandler(decodeReview(sidecarSetReview('uid', set)), deps([], revisions));
  }

  it('admits a pin that resolves, by name or by custom version, and reads nothing for a set that pins nothing', async () => {
    for (const pin of [{ revisionName: nameOf(REV2) }, { customVersion: 'old' }]) expect((await validate(pinning(pin), counted(HISTORY))).outcome).toBe('allowed');
    const revisions = counted(HISTORY);
    expect((await validate(pinning(undefined), revisions)).outcome).toBe('allowed');
    expect(revisions.reads).toEqual([]);
  });

  it.each([
    [{ revisionName: 'agent-gone' }, 'SidecarSet agent pins ControllerRevision agent-gone, which does not exist'],
    [{ customVersion: 'never' }, 'SidecarSet agent pins custom version never, but no ControllerRevision carries it'],
  ])('refuses a pin that does not resolve (%j) with a field error at spec.injectionStrategy.revision', async (pin, reason) => {
    const result = await validate(pinning(pin), counted(HISTORY));
    expect(result).toMatchObject({ outcome: 'denied', response: { status: { code: 422, reason: 'Invalid' } } });
    const message = result.outcome === 'failed' ? '' : (result.response.status?.message ?? '');
    expect(message).toBe(`spec.injectionStrategy.revision: Invalid value: ${JSON.stringify({ ...pin, policy: 'Always' })}: Cannot find specific ControllerRevision: ${reason}`);
  });

  it('refuses a pin by name of another set\'s revision at spec.injectionStrategy.revision', async () => {
    const others = newRevision(sidecarSet('other', { containers: [sidecar('agent', { image: 'evil:1' })] }), NAMESPACE, 1, 0);
    const result = await validate(pinning({ revisionName: nameOf(others) }), counted([...HISTORY, others]));
    expect(result).toMatchObject({ outcome: 'denied', response: { status: { code: 422, reason: 'Invalid' } } });
    const message = result.outcome === 'failed' ? '' : (result.response.status?.message ?? '');
    expect(message).toBe(
      `spec.injectionStrategy.revision: Invalid value: ${JSON.stringify({ revisionName: nameOf(others), policy: 'Always' })}: Cannot find specific ControllerRevision: SidecarSet agent pins ControllerRevision ${nameOf(others)}, which belongs to SidecarSet "other": a set may pin only its own revisions`,
    );
  });

  it('lists a pin that does not resolve beside the set\'s other errors, as Kruise does', async () => {
    const set = pinning({ revisionName: 'agent-gone' }, { maxUnavailable: 'lots' });
    const result = await validate(set, counted(HISTORY));
    const message = result.outcome === 'failed' ? '' : (result.response.status?.message ?? '');
    expect(message).toContain('spec.updateStrategy.maxUnavailable');
    expect(message).toContain('spec.injectionStrategy.revision: Invalid value: {"revisionName":"agent-gone","policy":"Always"}: Cannot find specific ControllerRevision: SidecarSet agent pins ControllerRevision agent-gone, which does not exist');
  });

  it('does not compare a set whose pin does not resolve with the other SidecarSets, as Kruise does not', async () => {
    // Same sidecar name as the set below: a cross-set clash that Kruise reports only for a set valid on its own.
    const rival = sidecarSet('rival', { containers: [sidecar('agent', { image: 'agent:9' })] });
    const result = await sidecarSetValidateHandler(decodeReview(sidecarSetReview('uid', pinning({ revisionName: 'agent-gone' }))), deps([rival], counted(HISTORY)));
    const message = result.outcome === 'failed' ? '' : (result.response.status?.message ?? '');
    expect(message).toMatch(/^spec\.injectionStrategy\.revision: .*does not exist$/);
  });

  it('refuses an otherwise invalid set with its errors, not 503, when its pinned revision cannot be read', async () => {
    const result = await validate(pinning({ customVersion: 'old' }, { maxUnavailable: 'lots' }), counted(HISTORY, new Error('the API server answered 500')));
    expect(result).toMatchObject({ outcome: 'denied', response: { status: { code: 422 } } });
    const message = result.outcome === 'failed' ? '' : (result.response.status?.message ?? '');
    expect(message).toContain('spec.updateStrategy.maxUnavailable');
    expect(message).not.toContain('injectionStrategy');
  });

  it('cannot decide (503), rather than refuse, where no ControllerRevisions are read at all', async () => {
    const result = await sidecarSetValidateHandler(decodeReview(sidecarSetReview('uid', pinning({ customVersion: 'old' }))), deps([], undefined));
    expect(result).toMatchObject({ outcome: 'failed', failure: { status: 503, message: 'cannot check the pinned revision: SidecarSet agent pins custom version "old", but ControllerRevisions are not read here' } });
  });

  it('cannot decide (503) when the revisions cannot be read', async () => {
    const result = await validate(pinning({ customVersion: 'old' }), counted(HISTORY, new Error('the API server answered 500')));
    expect(result).toEqual({
      outcome: 'failed',
      failure: expect.objectContaining({
        status: 503,
        message: 'cannot check the pinned revision: SidecarSet agent pins custom version "old" (namespace kruise-system), which cannot be read: the API server answered 500',
      }) as unknown,
    });
  });
});
