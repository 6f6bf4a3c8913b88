/**
 * A copy of the webhook configurations saved before a rotation, applied
 * again (as people and GitOps tools do with the file the README writes),
 * points every webhook (and the CRD's conversion webhook) at a secret no
 * function accepts. One resync
 * on a real API server, as the reconciler's identity of infra/k8s/rbac.yaml,
 * points them back at the current secret, says so in a warning line and
 * counts it in a metric; the stored secret is not touched.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { composeStatusSync } from '../../functions/status-sync/compose.ts';
import { secretOfUrl, type SecretStore } from '../../lib/auth/rotation.ts';
import { emfRecorder } from '../../lib/metrics/emf-recorder.ts';
import { renderWebhookConfigurations } from '../../lib/webhook-config/webhook-configurations.ts';
import { ADMISSION_FUNCTIONS, FUNCTION_NAMES, type AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { capturingLogger, fixedSecret } from '../../testkit/reviews.ts';
import { extractedMetrics } from '../metrics/emf-check.ts';

const CURRENT = fixedSecret('repair current');
const STALE = fixedSecret('repair stale, from before the last rotation');

let cp: ControlPlane;

/** The clientConfig URLs of both configurations, mutating then validating. */
async function webhookUrls(): Promise<string[]> {
  const urls: string[] = [];
  for (const kind of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
    const res = await cp.request('admin', 'GET', `/apis/admissionregistration.k8s.io/v1/${kind}/serverless-sidecarset`);
    expect(res.status).toBe(200);
    urls.push(...(JSON.parse(res.body) as { webhooks: { clientConfig: { url: string } }[] }).webhooks.map((w) => w.clientConfig.url));
  }
  return urls;
}

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/sidecarsets.apps.kruise.io';

/** The SidecarSet CRD's conversion webhook URL. */
async function conversionUrl(): Promise<string> {
  const res = await cp.request('admin', 'GET', CRD_PATH);
  return (JSON.parse(res.body) as { spec: { conversion: { webhook: { clientConfig: { url: string } } } } }).spec.conversion.webhook.clientConfig.url;
}

describeWithControlPlane('a stale copy of the webhook configurations and the CRD, repaired by one resync', () => {
  beforeAll(async () => {
    cp = await startControlPlane();
    await cp.apply(await readFile(join(process.cwd(), 'infra', 'k8s', 'crd.yaml'), 'utf8'));
    // A new CRD is served a moment after it is stored.
    const deadline = Date.now() + 30_000;
    while ((await cp.request('functions', 'GET', '/apis/apps.kruise.io/v1alpha1/sidecarsets')).status !== 200) {
      if (Date.now() > deadline) throw new Error('the SidecarSet CRD is not served after 30 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 30 * 60_000);

  afterAll(async () => {
    await cp.stop();
  });

  it('points every webhook carrying an unknown secret at the current one in one resync, with a warning and a metric', async () => {
    // Nothing listens there: only the URLs matter, and no write in this test goes through the webhooks.
    const targets = Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, { url: `https://127.0.0.1:9/${fn}/${STALE}` }])) as Record<AdmissionFunctionName, { url: string }>;
    await cp.apply(renderWebhookConfigurations({ targets }).map((object) => JSON.stringify(object)).join('\n---\n'));
    expect((await webhookUrls()).map(secretOfUrl)).toEqual([STALE, STALE, STALE, STALE, STALE]);
    // The CRD of the same stale copy: its conversion URL carries the stale secret too (no SidecarSet exists, so nothing converts meanwhile).
    const crdPatch = await cp.request('admin', 'PATCH', CRD_PATH, { spec: { conversion: { webhook: { clientConfig: { url: `https://127.0.0.1:9/sidecarset-convert/${STALE}` } } } } }, 'application/merge-patch+json');
    expect(crdPatch.status).toBe(200);

    // Rotated an hour ago: the next rotation is not due for 23 hours.
    let stored = JSON.stringify({ current: CURRENT, rotatedAt: new Date(Date.now() - 3_600_000).toISOString() });
    const writes: string[] = [];
    const secretStore: SecretStore = {
      read: () => Promise.resolve(stored),
      write: (text) => {
        writes.push(text);
        stored = text;
        return Promise.resolve();
      },
    };
    const log = capturingLogger();
    const metricLines: string[] = [];
    const statusSync = await composeStatusSync(
      // The URLs this deployment made: the repair writes a secret into these only.
      { KUBECONFIG_CONTENT: cp.kubeconfig('status-sync'), WEBHOOK_SECRET_ROTATION_PERIOD_MS: String(24 * 3_600_000), DEPLOYED_WEBHOOK_URLS: FUNCTION_NAMES.map((fn) => `https://127.0.0.1:9/${fn}/`).join(',') },
      { logger: log.logger, secretStore, metrics: emfRecorder({ namespace: 'ServerlessSidecarSet', write: (line) => metricLines.push(line) }) },
    );

    const first = await statusSync.resync();
    expect(first.errors).toEqual([]);
    expect(first.secretRotation).toMatchObject({ step: 'waiting', detail: 'not due' });
    expect([...(first.secretRotation?.repaired ?? [])].sort()).toEqual([
      'CustomResourceDefinition webhook "sidecarsets.apps.kruise.io conversion"',
      'MutatingWebhookConfiguration webhook "pod-inject.sidecarset.kruise.io"',
      'MutatingWebhookConfiguration webhook "sidecarset-default.sidecarset.kruise.io"',
      'ValidatingWebhookConfiguration webhook "pod-change.sidecarset.kruise.io"',
      'ValidatingWebhookConfiguration webhook "pod-eviction.sidecarset.kruise.io"',
      'ValidatingWebhookConfiguration webhook "sidecarset-validate.sidecarset.kruise.io"',
    ]);
    expect(await webhookUrls()).toEqual([`https://127.0.0.1:9/sidecarset-default/${CURRENT}`, `https://127.0.0.1:9/pod-inject/${CURRENT}`, `https://127.0.0.1:9/sidecarset-validate/${CURRENT}`, `https://127.0.0.1:9/pod-change/${CURRENT}`, `https://127.0.0.1:9/pod-change/${CURRENT}`]);
    expect(await conversionUrl()).toBe(`https://127.0.0.1:9/sidecarset-convert/${CURRENT}`);
    expect(writes).toEqual([]);

    const warning = log.entries().find((entry) => entry.level === 'warn' && String(entry.message).startsWith('repointed webhooks'));
    expect(warning).toMatchObject({ webhooks: first.secretRotation?.repaired });
    const repointed = metricLines.flatMap((line) => extractedMetrics(line)).filter((m) => m.name === 'WebhooksRepointed');
    expect(repointed).toEqual([{ name: 'WebhooksRepointed', unit: 'Count', dimensions: { Function: 'status-sync' }, value: 6 }]);
    // No secret, stale or current, in any line.
    expect(log.lines.join('\n')).not.toContain(STALE);
    expect(log.lines.join('\n')).not.toContain(CURRENT);

    // The next resync finds nothing to repair.
    const next = await statusSync.resync();
    expect(next.secretRotation?.repaired).toBeUndefined();

    // Someone (not the reconciler: the policy refuses it that) points pod-inject at another server with an unknown secret:
    // no secret is written into it, and the resync tells it with a Warning Event on the configuration and the metric.
    const index = (JSON.parse((await cp.request('admin', 'GET', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/serverless-sidecarset')).body) as { webhooks: { name: string }[] }).webhooks.findIndex((w) => w.name.startsWith('pod-inject.'));
    const elsewhere = await cp.request('admin', 'PATCH', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/serverless-sidecarset', [{ op: 'replace', path: `/webhooks/${index}/clientConfig/url`, value: `https://127.0.0.1:10/pod-inject/${STALE}` }], 'application/json-patch+json');
    expect(elsewhere.status).toBe(200);
    const refused = await statusSync.resync();
    expect(refused.errors).toEqual([]);
    expect(refused.secretRotation?.refused).toEqual([{ configuration: 'MutatingWebhookConfiguration', webhook: 'pod-inject.sidecarset.kruise.io', pointsAt: 'https://127.0.0.1:10/pod-inject/' }]);
    expect((await webhookUrls())[1]).toBe(`https://127.0.0.1:10/pod-inject/${STALE}`);
    const events = JSON.parse((await cp.request('admin', 'GET', '/api/v1/namespaces/default/events?fieldSelector=reason%3DWebhookNotDeployed')).body) as { items: { type: string; involvedObject: { kind: string; name: string }; message: string }[] };
    expect(events.items.map((e) => [e.type, e.involvedObject.kind, e.involvedObject.name])).toEqual([['Warning', 'MutatingWebhookConfiguration', 'serverless-sidecarset']]);
    expect(events.items[0]?.message).toContain('"pod-inject.sidecarset.kruise.io" points at https://127.0.0.1:10/pod-inject/…');
    expect(events.items[0]?.message).not.toContain(STALE);
    const notDeployed = metricLines.flatMap((line) => extractedMetrics(line)).filter((m) => m.name === 'WebhooksNotDeployed' && m.value > 0);
    expect(notDeployed).toEqual([{ name: 'WebhooksNotDeployed', unit: 'Count', dimensions: { Function: 'status-sync' }, value: 1 }]);
  }, 120_000);
});
