/**
 * The webhook secret rotates while pods are being created, on a real
 * kube-apiserver calling the webhooks over TLS: the status loop (as the
 * least-privilege identity of infra/k8s/rbac.yaml) stores a new secret,
 * waits for the server to re-read it, repoints the webhook configurations,
 * then drops the old one. No pod may be refused (pod-inject fails closed
 * here) and none may be created without its sidecar. Intervals are short
 * (1 s re-read, 2 s margins) so that a whole rotation takes seconds.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { kubeWebhookUrls } from '../../lib/adapters/kube-webhook-configurations.ts';
import { parseSecretDocument, secretOfUrl } from '../../lib/auth/rotation.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { podReview } from '../../testkit/reviews.ts';

let stack: LocalStack;

/** POSTs a review to the webhook server as the API server would, trusting its CA. */
function callWebhook(path: string, body: unknown): Promise<number> {
  const url = new URL(stack.serverUrl);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port: url.port, method: 'POST', path, ca: stack.caPem, agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => {
          resolve(res.statusCode ?? 0);
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function webhookUrls(): Promise<string[]> {
  const urls: string[] = [];
  for (const kind of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
    const res = await stack.cp.request('admin', 'GET', `/apis/admissionregistration.k8s.io/v1/${kind}/serverless-sidecarset`);
    expect(res.status).toBe(200);
    const config = JSON.parse(res.body) as { webhooks: { clientConfig: { url: string } }[] };
    urls.push(...config.webhooks.map((w) => w.clientConfig.url));
  }
  return urls;
}

/** Rotation steps the status loop logged, in order. */
function rotationSteps(): string[] {
  return stack.logs
    .map((line) => JSON.parse(line) as { message?: string; secretRotation?: { step: string } })
    .filter((entry) => entry.message === 'resync' && entry.secretRotation !== undefined)
    .map((entry) => entry.secretRotation?.step ?? '');
}

describeWithControlPlane('webhook secret rotation on a real API server', () => {
  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    // The webhook path: every pod reaches pod-inject, through the URLs whose secret rotates.
    stack = await startLocalStack({
      injection: 'webhook',
      podFailurePolicy: 'Fail',
      statusSyncIntervalMs: 1_000,
      env: { WEBHOOK_SECRET_REFRESH_MS: '1000', WEBHOOK_SECRET_ROTATION_MARGIN_MS: '2000', WEBHOOK_SECRET_ROTATION_PERIOD_MS: '8000' },
    });
    const ns = await stack.cp.request('admin', 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
    expect(ns.status).toBe(201);
    const set = await stack.cp.request('admin', 'POST', '/apis/apps.kruise.io/v1alpha1/sidecarsets', {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'log-agent' },
      spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'log-agent', image: 'fluent-bit:3.1' }] },
    });
    expect(set.status).toBe(201);
  }, 30 * 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  it('creates and injects every pod while the secret rotates, then accepts only the new secret', async () => {
    const initial = stack.secret;
    expect((await webhookUrls()).map(secretOfUrl)).toEqual([initial, initial, initial, initial, initial]);

    const outcomes: { name: string; status: number; injected: boolean; message: string }[] = [];
    let creating = true;
    let n = 0;
    const creator = async () => {
      while (creating) {
        const name = `web-${n++}`;
        const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } };
        const res = await stack.cp.request('admin', 'POST', '/api/v1/namespaces/shop/pods', pod);
        const created = JSON.parse(res.body) as Pod & { message?: string };
        outcomes.push({ name, status: res.status, injected: created.spec?.containers.some((c) => c.name === 'log-agent') ?? false, message: created.message ?? '' });
      }
    };
    const creators = [creator(), creator()];

    // A whole rotation: new secret stored, webhooks repointed, old one dropped.
    const deadline = Date.now() + 120_000;
    let finished = false;
    while (!finished && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      const doc = parseSecretDocument(await readFile(stack.secretFile, 'utf8'));
      finished = doc.current !== initial && doc.previous === undefined;
    }
    // The next rotation is due a period (8 s) after this one began: stop the loop before it.
    await stack.statusLoop?.stop();
    expect(finished).toBe(true);
    // Keep creating past the drop of the old secret and the server's next re-read.
    await new Promise((r) => setTimeout(r, 2_500));
    creating = false;
    await Promise.all(creators);

    const refused = outcomes.filter((o) => o.status !== 201);
    const bare = outcomes.filter((o) => o.status === 201 && !o.injected);
    expect(refused).toEqual([]);
    expect(bare).toEqual([]);
    // Pods kept coming through every phase (each creation takes milliseconds; the rotation seconds).
    expect(outcomes.length).toBeGreaterThan(20);
    expect(rotationSteps().filter((s) => s !== 'waiting')).toEqual(['started', 'webhooks-updated', 'finished']);

    const doc = parseSecretDocument(await readFile(stack.secretFile, 'utf8'));
    expect(doc.previous).toBeUndefined();
    expect((await webhookUrls()).map(secretOfUrl)).toEqual([doc.current, doc.current, doc.current, doc.current, doc.current]);
    expect(await callWebhook(`/pod-inject/${doc.current}`, podReview('uid-new'))).toBe(200);
    expect(await callWebhook(`/pod-inject/${initial}`, podReview('uid-old'))).toBe(404);
    expect(stack.logs.join('\n')).not.toContain(initial);
    expect(stack.logs.join('\n')).not.toContain(doc.current);
  }, 5 * 60_000);

  it('lets the functions identity repoint only an unchanged URL, and only of the project\'s own configurations', async () => {
    const urls = kubeWebhookUrls(kubeConfigClient(parseKubeConfig(stack.cp.kubeconfig('functions'), 'functions kubeconfig')));
    const endpoints = (await urls.list()) ?? [];
    // The five webhooks (pod-eviction at pod-change's URL) and the CRD's conversion (sidecarset-convert), each repointed with the secret.
    expect(endpoints.map((e) => e.webhook).sort()).toEqual(['pod-change.sidecarset.kruise.io', 'pod-eviction.sidecarset.kruise.io', 'pod-inject.sidecarset.kruise.io', 'sidecarset-default.sidecarset.kruise.io', 'sidecarset-validate.sidecarset.kruise.io', 'sidecarsets.apps.kruise.io conversion']);
    const pod = endpoints.find((e) => e.webhook === 'pod-inject.sidecarset.kruise.io');
    if (pod?.url === undefined) throw new Error('no pod-inject webhook');
    // Someone changed the URL since it was read: the conditional patch is refused, nothing is overwritten.
    await expect(urls.setUrl({ ...pod, url: `${pod.url}-stale` }, `${pod.url}-mine`)).rejects.toThrow(/the API server answered 422/);
    expect((await urls.list())?.find((e) => e.webhook === pod.webhook)?.url).toBe(pod.url);

    // Another team's configuration: RBAC's resourceNames keep the functions out.
    const other = await stack.cp.request('admin', 'POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'someone-else' },
      webhooks: [],
    });
    expect(other.status).toBe(201);
    const foreign = kubeWebhookUrls(kubeConfigClient(parseKubeConfig(stack.cp.kubeconfig('functions'), 'functions kubeconfig')), { name: 'someone-else' });
    await expect(foreign.list()).rejects.toThrow(/the API server answered 403/);
  });
});
