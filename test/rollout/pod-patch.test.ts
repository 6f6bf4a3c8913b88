import { describe, expect, it } from '@jest/globals';
import { applyPatch } from '../../lib/admission/json-patch-apply.ts';
import { JsonPatchError } from '../../lib/admission/json-patch.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { backfillInjectedList, podUpdatePatch, UnpatchablePodError } from '../../lib/rollout/pod-patch.ts';
import { upgradableConditionPatch } from '../../lib/rollout/upgradable-condition.ts';
import { FencedPodError, heldPatchPodMetadataKeys } from '../../lib/rollout/fence-check.ts';
import type { RolloutPlan } from '../../lib/rollout/plan.ts';
import { PATCH_METADATA_HELD_REASON, batchWrites } from '../../lib/rollout/batch.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { hashOf, OLD_IMAGE, rolloutSet, withoutImageOf } from './fixtures.ts';

const NOW = new Date('2026-12-01T01:32:23.456Z');
const set = rolloutSet();
const oldSet = rolloutSet({ image: OLD_IMAGE });

/** rollout.md §5: `pod-1` injected by test-sidecarset at centos:6.7. */
function pod1(annotations: Record<string, string> = {}): Pod {
  return {
    metadata: {
      name: 'pod-1',
      namespace: 'default',
      resourceVersion: '42',
      labels: { app: 'web' },
      annotations: {
        'kruise.io/sidecarset-hash': `{"test-sidecarset":{"updateTimestamp":"2025-01-01T00:00:00Z","hash":"${hashOf(oldSet)}","sidecarSetName":"test-sidecarset","sidecarList":["sidecar1"],"controllerRevision":"test-sidecarset-cf4bf7796"}}`,
        'kruise.io/sidecarset-hash-without-image': `{"test-sidecarset":{"updateTimestamp":"2025-01-01T00:00:00Z","hash":"${withoutImageOf(oldSet)}","sidecarSetName":"test-sidecarset","sidecarList":["sidecar1"]}}`,
        'kruise.io/sidecarset-injected-list': 'test-sidecarset',
        // The rollout fence pod-inject wrote (lib/sidecarset/rollout-fence.ts).
        'serverless-sidecarset/rollout-containers': 'sidecar1',
        'serverless-sidecarset/rollout-annotations': 'fresh,kept,merged,over',
        ...annotations,
      },
    },
    spec: { containers: [{ name: 'app', image: 'nginx:1' }, { name: 'sidecar1', image: OLD_IMAGE, env: [{ name: 'IS_INJECTED', value: 'true' }] }] },
    status: {
      phase: 'Running',
      containerStatuses: [
        { name: 'app', image: 'nginx:1', imageID: 'docker.io/library/nginx@sha256:bbbb' },
        { name: 'sidecar1', image: OLD_IMAGE, imageID: 'docker.io/library/centos@sha256:aaaa' },
      ],
    },
  };
}

function update(pod: Pod, s: SidecarSet = set) {
  return podUpdatePatch({ pod, set: s, latestRevision: 'test-sidecarset-78bb8d68cc', injectedList: 'test-sidecarset', now: NOW });
}

describe('the in-place update patch (rollout.md §1.5, §5)', () => {
  it('writes exactly the example’s annotations, byte for byte, and only the sidecar image', () => {
    const ops = update(pod1());
    expect(ops).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'replace', path: '/spec/containers/1/image', value: 'centos:6.8' },
      {
        op: 'replace',
        path: '/metadata/annotations/kruise.io~1sidecarset-hash',
        value:
          '{"test-sidecarset":{"updateTimestamp":"2026-12-01T01:32:23Z","hash":"88v5cd6b6bb8vwf45wfd54w62c9xb4wxv4v7cc4zf6xfv9xb9w96cbv8wb7z2vbw","sidecarSetName":"test-sidecarset","sidecarList":["sidecar1"],"controllerRevision":"test-sidecarset-78bb8d68cc"}}',
      },
      {
        op: 'add',
        path: '/metadata/annotations/kruise.io~1sidecarset-inplace-update-state',
        value:
          '{"test-sidecarset":{"revision":"88v5cd6b6bb8vwf45wfd54w62c9xb4wxv4v7cc4zf6xfv9xb9w96cbv8wb7z2vbw","updateTimestamp":"2026-12-01T01:32:23Z","lastContainerStatuses":{"sidecar1":{"imageID":"docker.io/library/centos@sha256:aaaa"}}}}',
      },
    ]);
    const after = applyPatch(pod1(), ops) as Pod;
    expect(after.metadata!.annotations!['kruise.io/sidecarset-hash-without-image']).toBe(pod1().metadata!.annotations!['kruise.io/sidecarset-hash-without-image']);
    expect(after.spec!.containers[1]).toEqual({ name: 'sidecar1', image: 'centos:6.8', env: [{ name: 'IS_INJECTED', value: 'true' }] });
  });

  it('the patch does not apply to a pod changed since it was listed', () => {
    const ops = update(pod1());
    const changed = pod1();
    changed.metadata!.resourceVersion = '43';
    expect(() => applyPatch(changed, ops)).toThrow(JsonPatchError);
  });

  it('a pod already at the image gets only the hash and state: updated without a restart', () => {
    const p = pod1();
    p.spec!.containers[1]!.image = 'centos:6.8';
    const ops = update(p);
    expect(ops.some((o) => o.path.startsWith('/spec'))).toBe(false);
    expect(ops.find((o) => o.path.endsWith('inplace-update-state'))).toMatchObject({ value: expect.stringContaining('"lastContainerStatuses":{}') });
  });

  it('an existing state entry keeps its revision and timestamp (Kruise’s quirk); other sets’ entries stay', () => {
    const state = '{"other":{"revision":"o","updateTimestamp":"2024-01-01T00:00:00Z","lastContainerStatuses":{}},"test-sidecarset":{"revision":"first","updateTimestamp":"2025-06-01T00:00:00Z","lastContainerStatuses":{"x":{}}}}';
    const ops = update(pod1({ 'kruise.io/sidecarset-inplace-update-state': state }));
    expect(ops.find((o) => o.path.endsWith('inplace-update-state'))).toEqual({
      op: 'replace',
      path: '/metadata/annotations/kruise.io~1sidecarset-inplace-update-state',
      value:
        '{"other":{"revision":"o","updateTimestamp":"2024-01-01T00:00:00Z","lastContainerStatuses":{}},"test-sidecarset":{"revision":"first","updateTimestamp":"2025-06-01T00:00:00Z","lastContainerStatuses":{"sidecar1":{"imageID":"docker.io/library/centos@sha256:aaaa"},"x":{}}}}',
    });
  });

  it('other sets’ hash entries are kept, keys sorted', () => {
    const p = pod1();
    const hash = JSON.parse(p.metadata!.annotations!['kruise.io/sidecarset-hash']!);
    p.metadata!.annotations!['kruise.io/sidecarset-hash'] = JSON.stringify({ zzz: { updateTimestamp: '2020-01-01T00:00:00Z', hash: 'z', sidecarSetName: 'zzz', sidecarList: ['z'] }, ...hash, aaa: { updateTimestamp: '2020-01-01T00:00:00Z', hash: 'a', sidecarSetName: 'aaa', sidecarList: ['a'] } });
    const value = update(p).find((o) => o.path.endsWith('sidecarset-hash'))! as { value: string };
    expect(Object.keys(JSON.parse(value.value))).toEqual(['aaa', 'test-sidecarset', 'zzz']);
    expect(value.value).toContain('"aaa":{"updateTimestamp":"2020-01-01T00:00:00Z","hash":"a","sidecarSetName":"aaa","sidecarList":["a"]}');
  });

  it('old-form hash annotations are converted, each entry keeping its own set name (Kruise writes the updating set’s)', () => {
    const p = pod1({
      'kruise.io/sidecarset-hash': `{"other":"oh","test-sidecarset":"${hashOf(oldSet)}"}`,
      'kruise.io/sidecarset-hash-without-image': `{"other":"ow","test-sidecarset":"${withoutImageOf(oldSet)}"}`,
    });
    const ops = update(p);
    const hash = ops.find((o) => o.path.endsWith('sidecarset-hash')) as { value: string };
    expect(hash.value).toContain('"other":{"updateTimestamp":"2026-12-01T01:32:23Z","hash":"oh","sidecarSetName":"other","sidecarList":null}');
    const without = ops.find((o) => o.path.endsWith('without-image')) as { value: string };
    expect(without.value).toBe(
      `{"other":{"updateTimestamp":"2026-12-01T01:32:23Z","hash":"ow","sidecarSetName":"other","sidecarList":null},"test-sidecarset":{"updateTimestamp":"2026-12-01T01:32:23Z","hash":"${withoutImageOf(oldSet)}","sidecarSetName":"test-sidecarset","sidecarList":null}}`,
    );
  });

  it('an unreadable hash annotation is replaced by this set’s entry alone, as Kruise does', () => {
    const hash = update(pod1({ 'kruise.io/sidecarset-hash': '{"a":"x","b":{}}' })).find((o) => o.path.endsWith('sidecarset-hash')) as { value: string };
    expect(Object.keys(JSON.parse(hash.value))).toEqual(['test-sidecarset']);
  });

  it('the injected list is written only when missing or empty', () => {
    expect(update(pod1({ 'kruise.io/sidecarset-injected-list': '' })).find((o) => o.path.endsWith('injected-list'))).toEqual({
      op: 'replace',
      path: '/metadata/annotations/kruise.io~1sidecarset-injected-list',
      value: 'test-sidecarset',
    });
    expect(update(pod1()).some((o) => o.path.endsWith('injected-list'))).toBe(false);
  });

  it('backfill order: namespace-scoped sets first, each group in list order (not sorted)', () => {
    const s = (name: string, namespace?: string): SidecarSet => ({ metadata: { name }, spec: namespace ? { namespace } : {} });
    expect(backfillInjectedList([s('b'), s('z', 'ns'), s('a'), s('c', 'ns')])).toBe('z,c,b,a');
  });

  it('patchPodMetadata is applied again: Retain only when absent, Overwrite always, MergePatchJson merged', () => {
    const s: SidecarSet = {
      ...set,
      spec: {
        ...set.spec,
        patchPodMetadata: [
          { patchPolicy: 'Retain', annotations: { kept: 'new', fresh: 'yes' } },
          { patchPolicy: 'Overwrite', annotations: { over: 'new' } },
          { patchPolicy: 'MergePatchJson', annotations: { merged: '{"b":2}' } },
        ],
      },
    };
    const ops = update(pod1({ kept: 'old', over: 'old', merged: '{"a":1}' }), s);
    const byKey = Object.fromEntries(ops.filter((o) => o.path.startsWith('/metadata/annotations/')).map((o) => [o.path.slice('/metadata/annotations/'.length), o]));
    expect(byKey.kept).toBeUndefined();
    expect(byKey.fresh).toEqual({ op: 'add', path: '/metadata/annotations/fresh', value: 'yes' });
    expect(byKey.over).toEqual({ op: 'replace', path: '/metadata/annotations/over', value: 'new' });
    expect(byKey.merged).toEqual({ op: 'replace', path: '/metadata/annotations/merged', value: '{"a":1,"b":2}' });
  });

  it('the image path indexes the pod’s own container list, even past a malformed entry', () => {
    const p = pod1();
    (p.spec!.containers as unknown[]).unshift(null);
    expect(update(p)[1]).toEqual({ op: 'replace', path: '/spec/containers/2/image', value: 'centos:6.8' });
  });

  it('a pod without a resourceVersion is refused with a clear error', () => {
    const p = pod1();
    delete p.metadata!.resourceVersion;
    expect(() => update(p)).toThrow(UnpatchablePodError);
  });

  it('a pod without annotations (so without a fence) is not written at all, its bookkeeping included', () => {
    const p = pod1();
    p.spec!.containers[1]!.image = 'centos:6.8';
    delete p.metadata!.annotations;
    expect(() => update(p)).toThrow(FencedPodError);
  });
});

describe('the in-place update patch under the rollout fence (what the pod policy lets the reconciler write)', () => {
  const withMetadata = (keys: Record<string, string>): SidecarSet => ({ ...set, spec: { ...set.spec, patchPodMetadata: [{ patchPolicy: 'Overwrite', annotations: keys }] } });
  const withoutFence = (): Pod => {
    const p = pod1();
    delete p.metadata!.annotations!['serverless-sidecarset/rollout-containers'];
    delete p.metadata!.annotations!['serverless-sidecarset/rollout-annotations'];
    return p;
  };

  it('refuses to re-image a sidecar of a pod created before the fence, naming the annotation and what to do', () => {
    expect(() => update(withoutFence())).toThrow(FencedPodError);
    expect(() => update(withoutFence())).toThrow(/carries no serverless-sidecarset\/rollout-containers annotation/);
    expect(() => update(withoutFence())).toThrow(/recreate the pod, or have an administrator record its sidecars/);
  });

  // Issue 45, item 1: the policy admits bookkeeping on fenced pods only, so a bookkeeping-only write would loop on a 422.
  it('refuses even a bookkeeping-only write (the sidecar already at the set’s image) to a pod without the fence', () => {
    const p = withoutFence();
    p.spec!.containers[1]!.image = set.spec!.containers![0]!.image!;
    expect(() => update(p)).toThrow(/change nothing in it, neither an image nor the SidecarSet bookkeeping/);
  });

  it('refuses to re-image a container carrying IS_INJECTED that pod-inject did not list', () => {
    const p = pod1({ 'serverless-sidecarset/rollout-containers': 'other' });
    expect(() => update(p)).toThrow(/container\(s\) sidecar1 of the pod were not injected by pod-inject \(its serverless-sidecarset\/rollout-containers annotation lists other\)/);
  });

  it('leaves out a patchPodMetadata key the fence does not list, and a kubernetes.io one it does, and still rolls the image', () => {
    const s = withMetadata({ over: 'new', 'iam.amazonaws.com/role': 'admin', 'x.kubernetes.io/y': 'z' });
    const p = pod1({ 'serverless-sidecarset/rollout-annotations': 'over,x.kubernetes.io/y' });
    const ops = update(p, s);
    const paths = ops.map((o) => o.path);
    expect(paths).toContain('/spec/containers/1/image');
    expect(paths).toContain('/metadata/annotations/over');
    expect(paths.filter((x) => x.includes('iam.amazonaws.com') || x.includes('kubernetes.io'))).toEqual([]);
    expect(heldPatchPodMetadataKeys(p, s)).toEqual(['iam.amazonaws.com/role', 'x.kubernetes.io/y']);
  });

  it('tells the round’s held keys in one Warning Event naming the keys and pods', () => {
    const s = withMetadata({ 'karpenter.sh/do-not-disrupt': 'true' });
    const p = pod1();
    const writes = batchWrites(s, { status: {}, updates: [{ pod: p, images: {} }], notUpgradable: [], flips: [], swapping: [] } as unknown as RolloutPlan, 'rev', () => 'test-sidecarset', NOW);
    expect(writes.held).toEqual({ reason: PATCH_METADATA_HELD_REASON, message: expect.stringMatching(/^1 pod\(s\) updated without patchPodMetadata key\(s\) karpenter.sh\/do-not-disrupt \(default\/pod-1\): .*recreate the pods to get them$/) });
    expect(writes.updates).toHaveLength(1);
  });
});

describe('the SidecarSetUpgradable condition (rollout.md §1.7, §5)', () => {
  const bare: Pod = { metadata: { name: 'p' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } };

  it('an updated pod: True, AllSidecarsetUpgradable, exact field order', () => {
    expect(JSON.stringify(upgradableConditionPatch(bare, 'test-sidecarset', true, NOW))).toBe(
      '{"status":{"conditions":[{"type":"SidecarSetUpgradable","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-12-01T01:32:23Z","reason":"AllSidecarsetUpgradable","message":"{\\"test-sidecarset\\":true}"}]}}',
    );
  });

  it('a not-upgradable pod: False, UpdateImmutableField', () => {
    expect(upgradableConditionPatch(bare, 'test-sidecarset', false, NOW)!.status.conditions[0]).toMatchObject({ status: 'False', reason: 'UpdateImmutableField', message: '{"test-sidecarset":false}' });
  });

  it('two sets share the message; any false makes it False; the transition time moves only on a flip; no change sends nothing', () => {
    const withCondition = (status: string, message: string): Pod => ({
      ...bare,
      status: { conditions: [{ type: 'SidecarSetUpgradable', status, lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z', reason: status === 'True' ? 'AllSidecarsetUpgradable' : 'UpdateImmutableField', message }] },
    });
    const flipped = upgradableConditionPatch(withCondition('True', '{"set-a":true}'), 'set-b', false, NOW)!.status.conditions[0];
    expect(flipped).toMatchObject({ status: 'False', message: '{"set-a":true,"set-b":false}', lastTransitionTime: '2026-12-01T01:32:23Z' });
    const same = upgradableConditionPatch(withCondition('False', '{"set-b":false}'), 'set-a', false, NOW)!.status.conditions[0];
    expect(same).toMatchObject({ status: 'False', message: '{"set-a":false,"set-b":false}', lastTransitionTime: '2026-01-01T00:00:00Z' });
    expect(upgradableConditionPatch(withCondition('True', '{"set-a":true}'), 'set-a', true, NOW)).toBeUndefined();
  });
});
