import { describe, expect, it } from '@jest/globals';
import type { AdmissionConfigEvent } from '../../lib/ports.ts';
import { repairRecorder, WEBHOOK_SECRET_REPAIRED } from '../../lib/webhook-config/refused-webhooks.ts';

describe('repairRecorder: the Event a repaired secret segment gets (issue 45, item 2)', () => {
  it('records one Warning Event per configuration, naming its repaired webhooks', async () => {
    const recorded: AdmissionConfigEvent[] = [];
    await repairRecorder({ record: (event) => Promise.resolve(void recorded.push(event)) })([
      { configuration: 'MutatingWebhookConfiguration', webhook: 'pod-inject.sidecarset.kruise.io' },
      { configuration: 'CustomResourceDefinition', webhook: 'sidecarset-convert' },
      { configuration: 'MutatingWebhookConfiguration', webhook: 'sidecarset-default.sidecarset.kruise.io' },
    ]);
    expect(recorded.map((e) => [e.object.kind, e.object.name, e.type, e.reason])).toEqual([
      ['MutatingWebhookConfiguration', 'serverless-sidecarset', 'Warning', WEBHOOK_SECRET_REPAIRED],
      ['CustomResourceDefinition', 'sidecarsets.apps.kruise.io', 'Warning', WEBHOOK_SECRET_REPAIRED],
    ]);
    expect(recorded[0]?.message).toMatch(/^webhook "pod-inject.sidecarset.kruise.io", webhook "sidecarset-default.sidecarset.kruise.io" carried a last URL segment that is not the webhook secret/);
  });

  it('tries every Event, then throws the first failure', async () => {
    let tries = 0;
    const recorder = repairRecorder({ record: () => Promise.reject(new Error(`refused ${++tries}`)) });
    await expect(recorder([{ configuration: 'MutatingWebhookConfiguration', webhook: 'a' }, { configuration: 'ValidatingWebhookConfiguration', webhook: 'b' }])).rejects.toThrow('refused 1');
    expect(tries).toBe(2);
  });
});
