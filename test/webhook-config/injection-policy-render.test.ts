import { describe, expect, it } from '@jest/globals';
import { ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD } from '../../lib/sidecarset/policy-record.ts';
import { renderInjectionPolicy } from '../../lib/webhook-config/injection-policy.ts';
import { excludedNamespaces, injectableNamespaces, renderWebhookConfigurations } from '../../lib/webhook-config/webhook-configurations.ts';
import { ADMISSION_FUNCTIONS } from '../../lib/webhooks/registry.ts';

const targets = Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, { url: `https://127.0.0.1:8443/${fn}/secret` }])) as Parameters<typeof renderWebhookConfigurations>[0]['targets'];

function podInjectWebhook(injection?: 'webhook' | 'policy'): Record<string, unknown> {
  const [mutating] = renderWebhookConfigurations({ targets, ...(injection ? { injection } : {}) });
  const webhooks = (mutating?.webhooks ?? []) as Record<string, unknown>[];
  const found = webhooks.find((w) => w.name === 'pod-inject.sidecarset.kruise.io');
  if (found === undefined) throw new Error('no pod-inject webhook');
  return found;
}

describe('rendering the injection path', () => {
  it('leaves pod-inject called for every pod by default', () => {
    expect(podInjectWebhook()).not.toHaveProperty('matchConditions');
    expect(podInjectWebhook('webhook')).toEqual(podInjectWebhook());
  });

  it('calls pod-inject on the policy path only for marked pods or bookkeeping without the record', () => {
    const conditions = podInjectWebhook('policy').matchConditions as { expression: string }[];
    expect(conditions).toHaveLength(1);
    expect(conditions[0]?.expression).toContain(ANNOTATION_INJECT_MARK);
    expect(conditions[0]?.expression).toContain(ANNOTATION_POLICY_RECORD);
  });

  it('binds the policy to every SidecarSet, in the namespaces the pod webhook is sent, failing closed', () => {
    const selector = injectableNamespaces(excludedNamespaces(['tools']));
    const [policy, binding] = renderInjectionPolicy(selector) as { spec: Record<string, unknown> }[];
    expect(policy?.spec).toMatchObject({ failurePolicy: 'Fail', reinvocationPolicy: 'Never', paramKind: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet' } });
    expect(binding?.spec).toMatchObject({ paramRef: { selector: {}, parameterNotFoundAction: 'Allow' }, matchResources: { namespaceSelector: selector } });
    expect(podInjectWebhook('policy').namespaceSelector).toEqual(injectableNamespaces(excludedNamespaces()));
  });
});
