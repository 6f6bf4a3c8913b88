/**
 * Every control plane the tests start converts SidecarSets through the
 * project's own sidecarset-convert webhook: infra/k8s/crd.yaml (two versions,
 * v1beta1 stored, the placeholder conversion URL) applied through the
 * harness points at the harness's conversion webhook, so a suite that
 * writes v1alpha1 keeps reading what it wrote while etcd holds v1beta1.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import type { JsonObject } from '../../lib/kube/types.ts';
import { CONVERSION_URL_PLACEHOLDER, CRD_NAME } from '../../lib/crd/sidecarset-crd.ts';
import { crdPath, waitForCrd } from '../../functions/server/local-stack.ts';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';

const ALPHA = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
const BETA = '/apis/apps.kruise.io/v1beta1/sidecarsets';

/** The object etcd holds for a SidecarSet, through etcd's JSON gateway (loopback, no auth). */
async function stored(cp: ControlPlane, name: string): Promise<JsonObject> {
  const key = Buffer.from(`/registry/apps.kruise.io/sidecarsets/${name}`).toString('base64');
  const res = await fetch(`${cp.etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key }) });
  const kvs = ((await res.json()) as { kvs?: { value: string }[] }).kvs ?? [];
  expect(kvs).toHaveLength(1);
  return JSON.parse(Buffer.from(kvs[0]?.value ?? '', 'base64').toString('utf8')) as JsonObject;
}

function post(url: string, ca: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method: 'POST', ca, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => {
        resolve(res.statusCode ?? 0);
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describeWithControlPlane('the harness\'s conversion webhook behind infra/k8s/crd.yaml', () => {
  let cp: ControlPlane;

  beforeAll(async () => {
    cp = await startControlPlane();
    await cp.apply(await readFile(crdPath, 'utf8'));
    await waitForCrd(cp, CRD_NAME);
  }, 30 * 60_000);
  afterAll(async () => {
    await cp.stop();
  });

  it('installs the CRD pointing at the project\'s conversion webhook over TLS, never at the placeholder', async () => {
    const crd = JSON.parse((await cp.request('admin', 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`)).body) as JsonObject;
    const spec = crd.spec as { conversion: { strategy: string; webhook: { clientConfig: { url: string; caBundle: string } } }; versions: { name: string; served: boolean; storage: boolean }[] };
    expect(spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([
      ['v1alpha1', true, false],
      ['v1beta1', true, true],
    ]);
    expect(spec.conversion.strategy).toBe('Webhook');
    expect(spec.conversion.webhook.clientConfig.url).toBe(cp.conversion.url);
    expect(spec.conversion.webhook.clientConfig.url).not.toBe(CONVERSION_URL_PLACEHOLDER);
    expect(spec.conversion.webhook.clientConfig.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/sidecarset-convert\/[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(spec.conversion.webhook.clientConfig.caBundle, 'base64').toString('utf8')).toBe(cp.conversion.caPem);
  });

  it('a set written in v1alpha1 is stored as v1beta1 and reads back in v1alpha1 as written, converted by the HTTP handler', async () => {
    const before = cp.conversion.reviews;
    const spec = { selector: { matchLabels: { app: 'web' } }, namespace: 'shop', containers: [{ name: 'agent', image: 'agent:1' }] };
    const created = await cp.request('admin', 'POST', ALPHA, { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'written-alpha' }, spec });
    expect([created.status, created.status === 201 ? '' : created.body]).toEqual([201, '']);
    const inEtcd = await stored(cp, 'written-alpha');
    expect(inEtcd.apiVersion).toBe('apps.kruise.io/v1beta1');
    expect(inEtcd.spec).toEqual({ selector: spec.selector, containers: spec.containers, namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'shop' } } });
    const alpha = JSON.parse((await cp.request('admin', 'GET', `${ALPHA}/written-alpha`)).body) as JsonObject;
    expect([alpha.apiVersion, alpha.spec]).toEqual(['apps.kruise.io/v1alpha1', spec]);
    const beta = JSON.parse((await cp.request('admin', 'GET', `${BETA}/written-alpha`)).body) as JsonObject;
    expect((beta.spec as JsonObject).namespaceSelector).toEqual({ matchLabels: { 'kubernetes.io/metadata.name': 'shop' } });
    expect(cp.conversion.reviews).toBeGreaterThan(before);
    // The HTTP handler's own line: the function's name and the outcome, as the admission functions log theirs.
    expect(cp.conversion.logs.map((l) => JSON.parse(l) as Record<string, unknown>)).toContainEqual(expect.objectContaining({ message: 'admission', function: 'sidecarset-convert', outcome: 'allowed', statusCode: 200 }));
  });

  it('publishes both versions in the OpenAPI v3 that kubectl explain reads, each with its own fields', async () => {
    const index = JSON.parse((await cp.request('admin', 'GET', '/openapi/v3')).body) as { paths: Record<string, { serverRelativeURL: string }> };
    for (const [version, has, hasNot] of [['v1alpha1', 'namespace', 'customVersion'], ['v1beta1', 'customVersion', 'namespace']] as const) {
      const entry = index.paths[`apis/apps.kruise.io/${version}`];
      expect(entry).toBeDefined();
      const doc = JSON.parse((await cp.request('admin', 'GET', entry?.serverRelativeURL ?? '')).body) as { components: { schemas: Record<string, { properties?: Record<string, { properties?: Record<string, { description?: string }> }> }> } };
      const schema = doc.components.schemas[`io.kruise.apps.${version}.SidecarSet`];
      const spec = schema?.properties?.spec?.properties ?? {};
      expect([version, has in spec, hasNot in spec]).toEqual([version, true, false]);
      expect(spec.containers?.description).toEqual(expect.any(String));
    }
  });

  it('turns away a caller without the secret, as every function\'s HTTP handler does', async () => {
    const withoutSecret = cp.conversion.url.replace(/\/[^/]+$/, '/not-the-secret');
    expect(await post(withoutSecret, cp.conversion.caPem, '{}')).toBe(404);
    expect(await post(cp.conversion.url, cp.conversion.caPem, '{"kind":"AdmissionReview"}')).toBe(400);
  });
});
