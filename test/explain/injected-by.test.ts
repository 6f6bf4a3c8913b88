/**
 * explain names the path that injected a live pod: the injection policy when
 * its record on the pod names the set, pod-inject otherwise (a set the policy
 * takes still goes to pod-inject until the reconciler recorded its revision).
 */
import { describe, expect, it } from '@jest/globals';
import { explainPod } from '../../lib/explain/explain.ts';
import { explanationText } from '../../lib/explain/text.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { ANNOTATION_POLICY_RECORD } from '../../lib/sidecarset/policy-record.ts';
import { appPod } from '../../testkit/reviews.ts';
import { NOW } from '../../testkit/sidecarset-objects.ts';

const set = defaultSidecarSet({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'agent' }, spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'agent', image: 'agent:1' }] } });
const injected = injectPod({ pod: appPod(), namespace: 'default', sidecarSets: [set], namespaceLabels: new Map(), now: NOW }).pod;
const withRecord = (record: string): Pod => ({ ...injected, metadata: { ...injected.metadata, annotations: { ...injected.metadata?.annotations, [ANNOTATION_POLICY_RECORD]: record } } });
const explain = (pod: Pod) => explainPod({ pod, namespace: 'default', sets: [set], namespaceLabels: new Map() });

describe('which path injected a live pod', () => {
  it.each([
    ['pod-inject, for a pod without the policy\'s record', injected, 'pod-inject', 'injected at creation by pod-inject'],
    ['the injection policy, for a pod whose record names the set', withRecord('set=agent;base=;before=agent;after=;initBefore=;initAfter=;volumes=;imagePullSecrets=;annotations=;reads='), 'policy', 'injected at creation by the injection policy'],
    ['pod-inject, for a record naming only other sets', withRecord('set=other;base=;before=x;after=;initBefore=;initAfter=;volumes=;imagePullSecrets=;annotations=;reads='), 'pod-inject', 'injected at creation by pod-inject'],
  ])('is %s', (_what, pod, by, line) => {
    const explained = explain(pod);
    expect(explained.sets[0]?.injectedBy).toBe(by);
    expect(explanationText(explained, true)).toContain(line);
  });
});
