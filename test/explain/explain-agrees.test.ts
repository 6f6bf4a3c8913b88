/**
 * explain holds together with what it explains, for generated pods and
 * sets: `invoke explain` says a set applies exactly when the pod-inject
 * handler (the webhook's own, through the review invoke sends) injects that
 * set (a pod being deleted included, which the handler skips), and
 * that a pod is updated next exactly when the rollout plan picks it; a pod
 * it says partition holds is among the plan's last `partition` waiting pods,
 * and one it says runs the current sidecars is one the counts call updated
 * and ready.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { wrapInReview } from '../../lib/admission/wrap.ts';
import { explainPod, type PodExplanation } from '../../lib/explain/explain.ts';
import { runExplainFiles } from '../../functions/invoke/explain.ts';
import { namespacesWithHint } from '../../functions/invoke/namespace-hint.ts';
import type { JsonObject, Pod } from '../../lib/kube/types.ts';
import { planRollout, podFacts } from '../../lib/rollout/plan.ts';
import { matchedPods } from '../../lib/rollout/candidates.ts';
import { parseInjectedList } from '../../lib/sidecarset/pod-annotations.ts';
import { ANNOTATION_INJECTED_LIST, type SidecarSet, type SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { POD_INJECT } from '../../lib/webhooks/descriptors.ts';
import { runReview } from '../../lib/webhooks/registry.ts';
import { sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { NO_NAMESPACES, rolloutPod, rolloutSet } from '../rollout/fixtures.ts';

const NAMES = ['alpha', 'beta', 'gamma', 'delta'] as const;
const label = fc.constantFrom('web', 'web', 'db', 'api');

/** A selector over the labels app and tier, in each form matching knows. */
const selector = fc.oneof(
  { arbitrary: fc.record({ matchLabels: fc.record({ app: label }) }), weight: 4 },
  { arbitrary: fc.record({ matchLabels: fc.record({ app: label, tier: fc.constantFrom('x', 'y') }) }), weight: 1 },
  { arbitrary: fc.record({ matchExpressions: fc.tuple(fc.constantFrom('app', 'tier'), fc.constantFrom('In', 'NotIn'), fc.subarray(['web', 'db', 'x'], { minLength: 1 })).map(([key, operator, values]) => [{ key, operator, values }]) }), weight: 1 },
  { arbitrary: fc.record({ matchExpressions: fc.tuple(fc.constantFrom('app', 'tier'), fc.constantFrom('Exists', 'DoesNotExist')).map(([key, operator]) => [{ key, operator }]) }), weight: 1 },
);

/** One set of the generated cluster: scoped by namespace or namespaceSelector or neither, maybe paused, maybe a canary of another. */
const setAt = (name: string) =>
  fc
    .record({
      selector,
      // Weighted so that sets often select the pod together, where canaries and pausing decide.
      scope: fc.constantFrom('none', 'none', 'none', 'namespace:default', 'namespace:prod', 'nsSelector:a', 'nsSelector:b'),
      paused: fc.constantFrom(false, false, false, true),
      canaryOf: fc.option(fc.constantFrom(...NAMES), { nil: undefined }),
    })
    .map(({ selector: s, scope, paused, canaryOf }): SidecarSet => {
      const [kind, value] = scope.split(':');
      const set = sidecarSet(name, {
        selector: s,
        ...(kind === 'namespace' ? { namespace: value } : {}),
        ...(kind === 'nsSelector' ? { namespaceSelector: { matchLabels: { env: value as string } } } : {}),
        ...(paused ? { injectionStrategy: { paused: true } } : {}),
      });
      // A canary of itself is no canary; validation refuses a base that is itself a canary, which the generated sets may be (matching does not care).
      if (canaryOf === undefined || canaryOf === name) return set;
      return { ...set, metadata: { ...set.metadata, annotations: { ...set.metadata?.annotations, 'apps.kruise.io/sidecarset-canary': 'true', 'apps.kruise.io/sidecarset-base': canaryOf } } };
    });

const cluster = fc.record({
  sets: fc.subarray([...NAMES], { minLength: 1 }).chain((names) => fc.tuple(...names.map(setAt))),
  podLabels: fc.record({ app: label, tier: fc.constantFrom('x', 'y') }, { requiredKeys: [] }),
  namespace: fc.constantFrom('default', 'prod'),
  envOf: fc.record({ default: fc.constantFrom('a', 'b'), prod: fc.constantFrom('a', 'b') }),
});

const namespaces = (envOf: { default: string; prod: string }) =>
  Object.entries(envOf).map(([name, env]) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { env } } }));

describe('explain and pod-inject', () => {
  it('says a set applies exactly when the pod-inject handler injects it, and injects the containers the handler adds', async () => {
    await fc.assert(
      fc.asyncProperty(cluster, fc.boolean(), async ({ sets, podLabels, namespace, envOf }, deleting) => {
        const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace, labels: podLabels, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
        const deps = { sidecarSets: memorySidecarSetSource(sets), namespaces: memoryNamespaceSource(namespaces(envOf)), clock: { now: () => new Date('2026-01-01T00:00:00Z') } };
        const event = wrapInReview({ object: pod, operation: 'CREATE', uid: 'u' });
        const outcome = await runReview(POD_INJECT.name, event, deps);
        if (outcome.kind !== 'review' || !outcome.review.response.allowed) throw new Error(`pod-inject did not answer: ${JSON.stringify(outcome)}`);
        const patch = outcome.review.response.patch;
        const injected = (patch === undefined ? pod : applyPatch(pod, decodePatch(patch))) as Pod;
        const injectedSets = parseInjectedList(injected.metadata?.annotations?.[ANNOTATION_INJECTED_LIST]);

        // explain as `invoke explain` runs it, on the same review.
        let printed = '';
        const code = await runExplainFiles({
          sets,
          pods: [],
          namespaces: namespacesWithHint(namespaces(envOf), undefined),
          deps,
          event,
          resulting: (e, review) => (review.response.patch === undefined ? (e.request as JsonObject).object : applyPatch((e.request as JsonObject).object, decodePatch(review.response.patch))),
          output: 'json',
          stdout: (text) => (printed += text),
          stderr: (text) => {
            throw new Error(text);
          },
        });
        expect(code).toBe(0);
        const explanation = JSON.parse(printed) as PodExplanation;
        expect(explanation.sets.filter((s) => s.applies).map((s) => s.set)).toEqual(injectedSets);
        expect(explanation.sets.map((s) => s.set)).toEqual(sets.map((s) => s.metadata?.name).sort());
        for (const s of explanation.sets) {
          // Every set is told, and one that does not apply says why.
          expect(s.applies || (s.why ?? '') !== '').toBe(true);
          if (s.applies) expect(s.injects?.containers).toEqual([`${s.set}-sidecar`]);
          else expect(s.injects).toBeUndefined();
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** A pod of the generated fleet: how it stands with the set. */
const podState = fc.record({
  updated: fc.boolean(),
  inconsistent: fc.boolean(),
  ready: fc.boolean(),
  otherFields: fc.boolean(),
  group: fc.constantFrom('a', 'b'),
});

const intOrPercent = (max: number) => fc.oneof(fc.integer({ min: 0, max }), fc.constantFrom('0%', '30%', '50%', '100%'));

const strategy: fc.Arbitrary<SidecarSetUpdateStrategy> = fc
  .record({
    partition: fc.option(intOrPercent(4), { nil: undefined }),
    maxUnavailable: fc.option(fc.oneof(fc.integer({ min: 1, max: 3 }), fc.constantFrom('50%', '100%')), { nil: undefined }),
    paused: fc.boolean(),
    selector: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }),
    type: fc.constantFrom('RollingUpdate', 'RollingUpdate', 'RollingUpdate', 'NotUpdate'),
  })
  .map(({ partition, maxUnavailable, paused, selector: group, type }) => ({
    type,
    ...(partition === undefined ? {} : { partition }),
    ...(maxUnavailable === undefined ? {} : { maxUnavailable }),
    ...(paused ? { paused: true } : {}),
    ...(group === undefined ? {} : { selector: { matchLabels: { group } } }),
  }));

describe('explain and the rollout plan', () => {
  it('says a pod is updated next exactly when the plan picks it, and what holds the others as the plan holds them', () => {
    fc.assert(
      fc.property(strategy, fc.array(podState, { minLength: 1, maxLength: 8 }), (updateStrategy, states) => {
        const set = rolloutSet({ strategy: updateStrategy });
        const pods = states.map((s, i) =>
          rolloutPod(set, { name: `p-${i}`, updated: s.updated, inconsistent: s.updated && s.inconsistent, ready: s.ready, otherFields: !s.updated && s.otherFields, labels: { group: s.group } }),
        );
        const plan = planRollout(set, pods, NO_NAMESPACES, { holds: true });
        const next = new Set(plan.updates.map((u) => u.pod));
        const matched = matchedPods(set, pods, NO_NAMESPACES);
        const facts = podFacts(set, matched);
        for (const pod of pods) {
          const [explained] = explainPod({ pod, namespace: 'default', sets: [set], namespaceLabels: NO_NAMESPACES, scopePods: new Map([['test-sidecarset', pods]]) }).sets;
          const rollout = explained?.rollout;
          expect(rollout?.matched).toBe(true);
          expect(rollout?.hold?.kind === 'next').toBe(next.has(pod));
          const fact = facts[matched.indexOf(pod)];
          expect(rollout?.current).toBe(fact !== undefined && fact.updated && fact.consistent && fact.ready);
          // A waiting pod of a rolling set is held by partition exactly when the plan's batch left it to partition, by maxUnavailable likewise.
          const rolling = rollout?.state === 'Waiting' && !['not-update', 'paused', 'flipping', 'invalid-strategy'].includes(plan.waiting?.kind ?? '');
          if (rolling) {
            expect(rollout.hold?.kind === 'partition').toBe(plan.holds?.partition.includes(pod) === true);
            expect(rollout.hold?.kind === 'max-unavailable').toBe(plan.holds?.maxUnavailable.includes(pod) === true && plan.waiting?.kind === 'max-unavailable');
          }
          if (rollout?.hold?.kind === 'partition') expect(plan.holds?.partition).toContain(pod);
          if (rollout?.hold?.kind === 'max-unavailable') expect(plan.waiting?.kind).toBe('max-unavailable');
          if (rollout?.hold?.kind === 'paused') expect(updateStrategy.paused).toBe(true);
          if (rollout?.hold?.kind === 'not-upgradable') expect(plan.updates.some((u) => u.pod === pod)).toBe(false);
        }
        // Every pod the plan picks is one explain says is next (none left unexplained).
        const told = pods.filter((pod) => explainPod({ pod, namespace: 'default', sets: [set], namespaceLabels: NO_NAMESPACES, scopePods: new Map([['test-sidecarset', pods]]) }).sets[0]?.rollout?.hold?.kind === 'next');
        expect(told.length).toBe(plan.updates.length);
      }),
      { numRuns: 300 },
    );
  });
});
