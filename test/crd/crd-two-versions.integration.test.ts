/**
 * The two-version CRD (`npm run crd -- --v1beta1 ...`) on the pinned
 * kube-apiserver: both schemas are structural and accepted, both versions
 * are served and published for `kubectl explain`, and a v1beta1 SidecarSet
 * with customVersion is stored under strict field validation. The conversion
 * stanza is swapped for strategy None here: this proves the schemas, not the
 * conversion webhook (which is wired later, with the sidecarset-convert
 * function).
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { sidecarSetCrd, CRD_NAME } from '../../lib/crd/sidecarset-crd.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { waitForCrd } from '../../functions/server/local-stack.ts';
import { readOpenApiSubset } from '../../scripts/crd.ts';
import { forCreate } from '../../testkit/bench/cluster.ts';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';

type Described = { description?: string; type?: string };

describeWithControlPlane('the two-version CRD on the pinned kube-apiserver', () => {
  let cp: ControlPlane;
  let crd: JsonObject;
  beforeAll(async () => {
    cp = await startControlPlane();
    const rendered = sidecarSetCrd((await readOpenApiSubset()).schemas, { served: 'v1alpha1+v1beta1', conversion: { url: 'https://127.0.0.1:9/convert' } });
    crd = { ...rendered, spec: { ...(rendered.spec as JsonObject), conversion: { strategy: 'None' } } };
    const res = await cp.request('admin', 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldValidation=Strict', crd);
    expect({ status: res.status, warnings: res.warnings, body: res.status === 201 ? '' : res.body }).toEqual({ status: 201, warnings: [], body: '' });
    await waitForCrd(cp, CRD_NAME);
  }, 30 * 60_000);
  afterAll(async () => {
    await cp.stop();
  });

  it('accepts both schemas as structural and stores v1beta1', async () => {
    const res = await cp.request('admin', 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`);
    const stored = JSON.parse(res.body) as { spec: { versions: { name: string; served: boolean; storage: boolean }[] }; status: { conditions: { type: string }[]; storedVersions: string[] } };
    expect(stored.status.conditions.map((c) => c.type)).not.toContain('NonStructuralSchema');
    expect(stored.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([
      ['v1alpha1', true, false],
      ['v1beta1', true, true],
    ]);
    expect(stored.status.storedVersions).toEqual(['v1beta1']);
  });

  it('stores a v1beta1 SidecarSet with customVersion under strict field validation, and refuses namespace there', async () => {
    const set = {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'SidecarSet',
      metadata: { name: 'beta' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'shop' } },
        customVersion: 'v2',
        containers: [{ name: 'agent', image: 'agent:1' }],
      },
    };
    const created = await cp.request('admin', 'POST', '/apis/apps.kruise.io/v1beta1/sidecarsets?fieldValidation=Strict', forCreate(set));
    expect({ status: created.status, warnings: created.warnings }).toEqual({ status: 201, warnings: [] });
    expect((JSON.parse(created.body) as { spec: unknown }).spec).toEqual(set.spec);
    const withNamespace = { ...set, metadata: { name: 'beta-ns' }, spec: { ...set.spec, namespace: 'shop' } };
    const refused = await cp.request('admin', 'POST', '/apis/apps.kruise.io/v1beta1/sidecarsets?fieldValidation=Strict', forCreate(withNamespace));
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('unknown field \\"spec.namespace\\"');
  });

  it.each(['v1alpha1', 'v1beta1'])('publishes %s for kubectl explain', async (version) => {
    const deadline = Date.now() + 60_000;
    const served = async (): Promise<Record<string, Described> | undefined> => {
      const res = await cp.request('admin', 'GET', `/openapi/v3/apis/apps.kruise.io/${version}`);
      if (res.status !== 200) return undefined;
      const doc = JSON.parse(res.body) as { components: { schemas: Record<string, { properties?: { spec?: { properties?: Record<string, Described> } } }> } };
      return doc.components.schemas[`io.kruise.apps.${version}.SidecarSet`]?.properties?.spec?.properties;
    };
    let spec = await served();
    while (spec === undefined && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      spec = await served();
    }
    expect(spec).toBeDefined();
    const names = Object.keys(spec ?? {});
    expect(names.includes('customVersion')).toBe(version === 'v1beta1');
    expect(names.includes('namespace')).toBe(version === 'v1alpha1');
    for (const [name, field] of Object.entries(spec ?? {})) expect([name, field.description ?? '']).toEqual([name, expect.stringMatching(/\w/)]);
  });
});
