/**
 * The pure conversion (lib/conversion/) behind a bare HTTPS server of this
 * test, named in the two-version CRD's conversion stanza, on the pinned
 * kube-apiserver: what a v1alpha1 writer writes reads back the same in
 * v1alpha1 (an unchanged write-back changes nothing), v1beta1 readers see
 * Kruise 1.9's mapping, and an edit in v1beta1 is what v1alpha1 shows. This
 * is not the sidecarset-convert function (no caller check, no HTTP handler): that is
 * wired later; this proves the mapping and the annotation against the API
 * server's own rules for conversions (which fields it lets a webhook change,
 * how it stores metadata).
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { answerConversionReview } from '../../lib/conversion/review.ts';
import { CONVERTED_FROM_ANNOTATION } from '../../lib/conversion/parts.ts';
import { CRD_NAME, sidecarSetCrd } from '../../lib/crd/sidecarset-crd.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { waitForCrd } from '../../functions/server/local-stack.ts';
import { generateServingTls } from '../../functions/server/tls.ts';
import { readOpenApiSubset } from '../../scripts/crd.ts';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';

const ALPHA = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
const BETA = '/apis/apps.kruise.io/v1beta1/sidecarsets';
const CV = 'apps.kruise.io/sidecarset-custom-version';
const selector = { matchLabels: { app: 'web' } };
const containers = [{ name: 'agent', image: 'agent:1' }];

describeWithControlPlane('the conversion behind the two-version CRD, on the pinned kube-apiserver', () => {
  let cp: ControlPlane;
  let server: Server;
  let reviews = 0;

  const get = async (path: string): Promise<JsonObject> => {
    const res = await cp.request('admin', 'GET', path);
    expect({ path, status: res.status, body: res.status === 200 ? '' : res.body }).toEqual({ path, status: 200, body: '' });
    return JSON.parse(res.body) as JsonObject;
  };
  const create = async (path: string, object: JsonObject): Promise<void> => {
    const res = await cp.request('admin', 'POST', `${path}?fieldValidation=Strict`, object);
    expect({ status: res.status, warnings: res.warnings, body: res.status === 201 ? '' : res.body }).toEqual({ status: 201, warnings: [], body: '' });
  };
  const put = async (path: string, object: JsonObject): Promise<JsonObject> => {
    const res = await cp.request('admin', 'PUT', path, object);
    expect({ status: res.status, body: res.status === 200 ? '' : res.body }).toEqual({ status: 200, body: '' });
    return JSON.parse(res.body) as JsonObject;
  };
  const meta = (object: JsonObject) => object.metadata as JsonObject & { resourceVersion: string; generation: number };

  beforeAll(async () => {
    const tls = generateServingTls();
    server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        reviews++;
        const answer = answerConversionReview(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer.review));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    cp = await startControlPlane();
    const crd = sidecarSetCrd((await readOpenApiSubset()).schemas, {
      served: 'v1alpha1+v1beta1',
      conversion: { url: `https://127.0.0.1:${port}/convert`, caBundle: Buffer.from(tls.caPem).toString('base64') },
    });
    const res = await cp.request('admin', 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    expect(res.status).toBe(201);
    await waitForCrd(cp, CRD_NAME);
  }, 30 * 60_000);
  afterAll(async () => {
    await cp.stop();
    await new Promise((resolve) => server.close(resolve));
  });

  it('a v1alpha1 namespace is stored as Kruise\'s v1beta1 selector, and reads back in v1alpha1 as written', async () => {
    const written = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'in-shop' }, spec: { selector, namespace: 'shop', containers } };
    await create(ALPHA, written);
    expect(reviews).toBeGreaterThan(0);
    const alpha = await get(`${ALPHA}/in-shop`);
    expect(alpha.spec).toEqual(written.spec);
    expect(meta(alpha).annotations).toBeUndefined();
    const beta = await get(`${BETA}/in-shop`);
    expect(beta.spec).toEqual({ selector, namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'shop' } }, containers });
    expect((meta(beta).annotations as JsonObject)[CONVERTED_FROM_ANNOTATION]).toBe('{"v1alpha1":{"annotations":null,"labels":null,"spec":{"namespace":"shop"}}}');
    // Writing back what was read changes nothing (no new generation, no new resourceVersion).
    const again = await put(`${ALPHA}/in-shop`, alpha);
    expect([meta(again).generation, meta(again).resourceVersion]).toEqual([meta(alpha).generation, meta(alpha).resourceVersion]);
  });

  it('the custom-version label, alone among the labels, is v1beta1\'s customVersion and comes back as the only label', async () => {
    await create(ALPHA, { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'versioned', labels: { [CV]: 'v2' } }, spec: { selector, containers } });
    const beta = await get(`${BETA}/versioned`);
    expect([beta.spec, meta(beta).labels, meta(beta).annotations]).toEqual([{ selector, containers, customVersion: 'v2' }, undefined, undefined]);
    const alpha = await get(`${ALPHA}/versioned`);
    expect([alpha.spec, meta(alpha).labels, meta(alpha).annotations]).toEqual([{ selector, containers }, { [CV]: 'v2' }, undefined]);
  });

  it('a v1beta1 edit is what v1alpha1 shows, and a v1alpha1 write-back of it keeps the v1beta1 object as it was', async () => {
    await create(ALPHA, { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'edited' }, spec: { selector, namespace: 'shop', containers } });
    const stored = await get(`${BETA}/edited`);
    const edited = await put(`${BETA}/edited`, { ...stored, spec: { ...(stored.spec as JsonObject), namespaceSelector: { matchLabels: { env: 'prod' } } } });
    const alpha = await get(`${ALPHA}/edited`);
    expect(alpha.spec).toEqual({ selector, namespaceSelector: { matchLabels: { env: 'prod' } }, containers });
    const back = await put(`${ALPHA}/edited`, alpha);
    expect(meta(back).resourceVersion).toBe(meta(alpha).resourceVersion);
    const beta = await get(`${BETA}/edited`);
    expect([beta.spec, meta(beta).annotations, meta(beta).resourceVersion]).toEqual([edited.spec, meta(edited).annotations, meta(edited).resourceVersion]);
  });

  it('lists in either version, and the status written in v1beta1 reads the same in v1alpha1', async () => {
    const stored = await get(`${BETA}/versioned`);
    const status = { observedGeneration: 1, matchedPods: 2, updatedPods: 1, readyPods: 2, updatedReadyPods: 1, latestRevision: 'versioned-abc' };
    await put(`${BETA}/versioned/status`, { ...stored, status });
    expect((await get(`${ALPHA}/versioned`)).status).toEqual(status);
    const alphaList = (await get(ALPHA)).items as JsonObject[];
    const betaList = (await get(BETA)).items as JsonObject[];
    expect(alphaList.map((o) => [meta(o).name, o.apiVersion])).toEqual([
      ['edited', 'apps.kruise.io/v1alpha1'],
      ['in-shop', 'apps.kruise.io/v1alpha1'],
      ['versioned', 'apps.kruise.io/v1alpha1'],
    ]);
    expect(betaList.map((o) => o.apiVersion)).toEqual(['apps.kruise.io/v1beta1', 'apps.kruise.io/v1beta1', 'apps.kruise.io/v1beta1']);
  });
});
