/** Whether the API server calls the pod webhook for a pod, read from the webhook configuration we render. */
import { describe, expect, it } from '@jest/globals';
import { webhookSelectorMismatch } from '../../lib/explain/webhook-selector-match.ts';
import { renderWebhookConfigurations } from '../../lib/webhook-config/webhook-configurations.ts';
import { FUNCTION_NAMES } from '../../lib/webhooks/registry.ts';

const targets = Object.fromEntries(FUNCTION_NAMES.map((name) => [name, { url: `https://example.com/${name}` }])) as Parameters<typeof renderWebhookConfigurations>[0]['targets'];
const [mutating] = renderWebhookConfigurations({ targets, excludedNamespaces: ['tools'] });

describe('webhookSelectorMismatch', () => {
  it('lets a pod of an ordinary namespace through to the pod webhook', () => {
    expect(webhookSelectorMismatch(mutating, { app: 'web' }, { 'kubernetes.io/metadata.name': 'default' })).toBeUndefined();
  });

  it.each([
    ['a system namespace', { 'kubernetes.io/metadata.name': 'kube-system' }, { index: 0, key: 'kubernetes.io/metadata.name', have: 'kube-system' }],
    ['a namespace excluded at deployment', { 'kubernetes.io/metadata.name': 'tools' }, { index: 0, key: 'kubernetes.io/metadata.name', have: 'tools' }],
    ['a namespace that opted out', { 'kubernetes.io/metadata.name': 'legacy', 'sidecarset.kruise.io/injection': 'disabled' }, { index: 1, key: 'sidecarset.kruise.io/injection', have: 'disabled' }],
  ])('names the namespaceSelector term that leaves out %s', (_what, namespaceLabels, term) => {
    expect(webhookSelectorMismatch(mutating, { app: 'web' }, namespaceLabels)).toEqual({
      webhook: 'pod-inject.sidecarset.kruise.io',
      selector: 'namespaceSelector',
      mismatch: expect.objectContaining({ term: 'matchExpressions', operator: 'NotIn', ...term }),
    });
  });

  it('reads an objectSelector a deployment added', () => {
    const configuration = { webhooks: [{ name: 'p', rules: [{ operations: ['CREATE'], resources: ['pods'] }], objectSelector: { matchLabels: { inject: 'yes' } } }] };
    expect(webhookSelectorMismatch(configuration, { app: 'web' }, {})).toEqual({ webhook: 'p', selector: 'objectSelector', mismatch: { term: 'matchLabels', key: 'inject', want: 'yes', have: undefined } });
  });
});
