/**
 * The webhooks take SidecarSets of both versions, as OpenKruise 1.9's do:
 * defaulting answers a v1beta1 review with a patch of the v1beta1 object as
 * sent (the same defaults and hashes as v1alpha1's), validation applies
 * each version's rules, and pod injection works from sets of either
 * version. Reviews are made as the API server sends them (wrapInReview).
 */
import { describe, expect, it } from '@jest/globals';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import type { AdmissionRequest } from '../../lib/admission/review.ts';
import { wrapInReview } from '../../lib/admission/wrap.ts';
import { convertSidecarSet } from '../../lib/conversion/sidecarset-conversion.ts';
import { memoryNamespaceSource, memoryRevisionSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { FUNCTION_DESCRIPTORS } from '../../lib/webhooks/descriptors.ts';
import type { HandlerDeps, HandlerResult } from '../../lib/webhooks/handler.ts';
import { podInjectHandler } from '../../lib/webhooks/pod-inject.ts';
import { sidecarSetDefaultHandler } from '../../lib/webhooks/sidecarset-default.ts';
import { sidecarSetValidateHandler } from '../../lib/webhooks/sidecarset-validate.ts';
import { appPod } from '../../testkit/reviews.ts';
import { NOW } from '../../testkit/sidecarset-objects.ts';

const CV = 'apps.kruise.io/sidecarset-custom-version';

/** A v1beta1 set as a user writes it from Kruise 1.9's docs. */
function betaSet(name = 'log-agent', spec: JsonObject = {}): JsonObject {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'shop' } },
      customVersion: 'v2',
      containers: [{ name: `${name}-sidecar`, image: `${name}:1.0`, volumeMounts: [{ name: 'logs', mountPath: '/var/log' }] }],
      volumes: [{ name: 'logs', emptyDir: {} }],
      ...spec,
    },
  };
}

/** The same set written as v1alpha1 (Kruise's mapping, through lib/conversion). */
function asAlpha(object: JsonObject): JsonObject {
  const converted = convertSidecarSet(object, 'v1alpha1');
  if (!converted.ok) throw new Error(converted.error);
  return converted.object;
}

function request(object: JsonObject, oldObject?: JsonObject): AdmissionRequest {
  const review = wrapInReview({ object, operation: oldObject === undefined ? 'CREATE' : 'UPDATE', uid: 'uid-1', ...(oldObject === undefined ? {} : { oldObject }) });
  return review.request as AdmissionRequest;
}

function deps(sets: readonly JsonObject[] = []): HandlerDeps {
  return {
    sidecarSets: memorySidecarSetSource(sets),
    namespaces: memoryNamespaceSource([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: { 'kubernetes.io/metadata.name': 'shop' } } }]),
    revisions: memoryRevisionSource([]),
    clock: { now: () => NOW },
  };
}

/** The object the answer's patch makes of the object as sent (the object itself when nothing is patched). */
function patchedObject(sent: JsonObject, result: HandlerResult): JsonObject {
  expect(result).toMatchObject({ response: { allowed: true } });
  const patch = 'response' in result ? result.response.patch : undefined;
  return (patch === undefined ? sent : applyPatch(sent, decodePatch(patch))) as JsonObject;
}

describe('the SidecarSet webhooks are registered for both versions', () => {
  it.each(['sidecarset-default', 'sidecarset-validate'])('%s: apps.kruise.io v1alpha1 and v1beta1, as Kruise 1.9 registers them', (name) => {
    const caller = FUNCTION_DESCRIPTORS.find((d) => d.name === name)?.caller;
    expect(caller !== undefined && 'rules' in caller ? caller.rules : undefined).toEqual([expect.objectContaining({ apiGroups: ['apps.kruise.io'], apiVersions: ['v1alpha1', 'v1beta1'], resources: ['sidecarsets'] })]);
  });
});

describe('defaulting a v1beta1 SidecarSet', () => {
  it('patches the v1beta1 object as sent: its own fields kept, the defaults and hashes those of the same set in v1alpha1', async () => {
    const sent = betaSet();
    const defaulted = patchedObject(sent, await sidecarSetDefaultHandler(request(sent), deps()));
    expect(defaulted.apiVersion).toBe('apps.kruise.io/v1beta1');
    const spec = defaulted.spec as JsonObject;
    expect([spec.customVersion, spec.namespaceSelector, 'namespace' in spec]).toEqual(['v2', { matchLabels: { 'kubernetes.io/metadata.name': 'shop' } }, false]);
    expect(spec.updateStrategy).toEqual({ type: 'RollingUpdate', maxUnavailable: 1, partition: 0 });

    const alpha = asAlpha(sent);
    const alphaDefaulted = patchedObject(alpha, await sidecarSetDefaultHandler(request(alpha), deps()));
    // Field for field the same set: the v1alpha1 result is the v1beta1 result converted.
    expect(asAlpha(defaulted)).toEqual(alphaDefaulted);
    const annotations = (defaulted.metadata as JsonObject).annotations as JsonObject;
    expect(annotations['kruise.io/sidecarset-hash']).toBe(((alphaDefaulted.metadata as JsonObject).annotations as JsonObject)['kruise.io/sidecarset-hash']);
    expect(annotations['kruise.io/sidecarset-hash']).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{64}$/);
  });

  it('a defaulted v1beta1 set is answered with no patch at all', async () => {
    const sent = patchedObject(betaSet(), await sidecarSetDefaultHandler(request(betaSet()), deps()));
    expect(await sidecarSetDefaultHandler(request(sent), deps())).toMatchObject({ outcome: 'allowed' });
  });

  it.each([
    ['sidecarset-default', sidecarSetDefaultHandler],
    ['sidecarset-validate', sidecarSetValidateHandler],
  ])('%s refuses a version it does not take with a 400 naming the versions it takes', async (_name, handler) => {
    const sent = request(betaSet());
    const result = await handler({ ...sent, kind: { ...sent.kind, version: 'v1beta2' } }, deps());
    expect(result).toMatchObject({
      outcome: 'denied',
      response: { allowed: false, status: { code: 400, reason: 'BadRequest', message: 'unsupported version: "v1beta2" (the SidecarSet webhooks take v1alpha1 and v1beta1)' } },
    });
  });
});

describe('validating each version with its own rules', () => {
  const validate = async (object: JsonObject, others: JsonObject[] = [], oldObject?: JsonObject) => {
    const result = await sidecarSetValidateHandler(request(defaultSidecarSet(object), oldObject === undefined ? undefined : defaultSidecarSet(oldObject)), deps(others.map((o) => defaultSidecarSet(o))));
    return result.outcome === 'denied' ? result.response.status?.message : result.outcome;
  };

  it.each<[string, JsonObject, string]>([
    ['a v1beta1 set with a namespaceSelector and a customVersion', betaSet(), 'allowed'],
    ['a v1beta1 set without customVersion', betaSet('a', { customVersion: undefined }), 'allowed'],
    ['a customVersion no label may hold (becomes the revisions\' label)', betaSet('a', { customVersion: 'v2 beta!' }), 'spec.customVersion: Invalid value: "v2 beta!": a valid label must be'],
    ['a customVersion longer than a label value', betaSet('a', { customVersion: 'v'.repeat(64) }), 'spec.customVersion: Invalid value: "' + 'v'.repeat(64) + '": must be no more than 63 characters'],
    ['a customVersion that is not a string', betaSet('a', { customVersion: 5 }), 'spec.customVersion: Invalid value: 5: must be a string'],
    ['an empty namespaceSelector (the shared rules apply)', betaSet('a', { namespaceSelector: {} }), 'spec.namespaceSelector: Invalid value: {}: empty selector is not valid for sidecarset.'],
    ['no selector', betaSet('a', { selector: undefined }), 'spec.selector: Required value: no selector defined for SidecarSet'],
  ])('%s', async (_name, object, expected) => {
    const answer = await validate(object);
    if (expected === 'allowed') expect(answer).toBe('allowed');
    else expect(answer).toContain(expected);
  });

  it('admits a set whose patchPodMetadata writes a kubernetes.io or k8s.io key, warning that a rollout cannot change it in place', async () => {
    const object = betaSet('a', { patchPodMetadata: [{ patchPolicy: 'Overwrite', annotations: { 'example.com/team': 'a', 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'false', 'node.k8s.io/x': 'y' } }] });
    const result = await sidecarSetValidateHandler(request(defaultSidecarSet(object)), deps());
    if (result.outcome !== 'allowed') throw new Error(`not allowed: ${result.outcome}`);
    expect(result.response.warnings).toEqual([
      'cluster-autoscaler.kubernetes.io/safe-to-evict: a kubernetes.io/k8s.io key; rollouts never change it in running pods',
      'node.k8s.io/x: a kubernetes.io/k8s.io key; rollouts never change it in running pods',
    ]);
    const plain = await sidecarSetValidateHandler(request(defaultSidecarSet(betaSet('b', { patchPodMetadata: [{ patchPolicy: 'Overwrite', annotations: { 'example.com/team': 'a', 'notkubernetes.io/x': 'y' } }] }))), deps());
    expect(plain.outcome === 'allowed' ? plain.response.warnings : 'not allowed').toBeUndefined();
  });

  it('the v1alpha1 custom-version label is left to the API server\'s label rules, as before', async () => {
    const alpha = asAlpha(betaSet('a'));
    expect((alpha.metadata as JsonObject).labels).toEqual({ [CV]: 'v2' });
    expect(await validate(alpha)).toBe('allowed');
  });

  it('a v1beta1 set conflicts with a v1alpha1 set in the namespace its selector names, and not with one elsewhere', async () => {
    const other = (namespace: string): JsonObject => ({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'other' }, spec: { selector: { matchLabels: { app: 'web' } }, namespace, containers: [{ name: 'log-agent-sidecar', image: 'x:1' }] } });
    expect(await validate(betaSet(), [other('shop')])).toContain('spec.containers[0].name: Invalid value: "log-agent-sidecar": container log-agent-sidecar already exist in other');
    expect(await validate(betaSet(), [other('team-a')])).toBe('allowed');
  });

  it('an UPDATE of a v1beta1 set keeps the upgrade types, as v1alpha1\'s', async () => {
    const old = betaSet();
    const changed = betaSet('log-agent', { containers: [{ name: 'log-agent-sidecar', image: 'log-agent:1.1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' }, volumeMounts: [{ name: 'logs', mountPath: '/var/log' }] }] });
    expect(await validate(changed, [], old)).toContain('upgradeType is immutable');
  });
});

describe('injecting from sets of either version', () => {
  it('a pod gets the same sidecars, volumes and annotations from a v1beta1 set as from the same set in v1alpha1', async () => {
    const beta = defaultSidecarSet(betaSet());
    const alpha = asAlpha(beta);
    const pod = { ...appPod(), metadata: { ...(appPod().metadata as JsonObject), namespace: 'shop' } };
    const inject = async (set: JsonObject) => patchedObject(pod, await podInjectHandler(request(pod), deps([set])));
    const fromBeta = await inject(beta);
    expect(((fromBeta.spec as JsonObject).containers as JsonObject[]).map((c) => c.name)).toEqual(['log-agent-sidecar', 'app']);
    expect(fromBeta).toEqual(await inject(alpha));
  });
});
