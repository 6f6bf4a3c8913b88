/**
 * infra/k8s/crd.yaml on the pinned kube-apiserver: its Kubernetes types are
 * the ones that server serves; every SidecarSet of the examples, the golden
 * cases and OpenKruise-style samples is accepted with strict field validation
 * and stored as written, also after the webhooks default it; a typo is
 * warned about and pruned; `kubectl explain` has descriptions to show.
 */
import { canaryBaseOf } from '../../lib/sidecarset/canary.ts';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { crdPath, startLocalStack, waitForCrd, type LocalStack } from '../../functions/server/local-stack.ts';
import { cloneJson, isObject } from '../../lib/kube/json.ts';
import { DEFAULT_REVISION_NAMESPACE, LABEL_CUSTOM_VERSION, newRevision } from '../../lib/sidecarset/revisions.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { fetchOpenApiSubset, readOpenApiSubset } from '../../scripts/crd.ts';
import { withConversionClientConfig } from '../../lib/crd/sidecarset-crd.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { forCreate } from '../../testkit/bench/cluster.ts';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { sidecarSetCorpus } from './sidecarset-corpus.ts';

const SETS = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
const corpus = sidecarSetCorpus();

/** The one default the CRD itself applies, as OpenKruise's does. */
function withCrdDefaults(spec: unknown): unknown {
  const copy = cloneJson(spec);
  if (isObject(copy) && isObject(copy.injectionStrategy) && isObject(copy.injectionStrategy.revision)) {
    copy.injectionStrategy.revision.policy ??= 'Always';
  }
  return copy;
}

/** A copy of `set` without the fields named as the API server names them (`spec.containers[0].x`). */
function withoutFields(set: SidecarSet, paths: readonly string[]): SidecarSet {
  const copy = cloneJson(set);
  for (const path of paths) {
    const steps = path.match(/[^.[\]]+/g) ?? [];
    const last = steps.pop() ?? '';
    let node: unknown = copy;
    for (const step of steps) node = (node as Record<string, unknown>)[step];
    Reflect.deleteProperty(node as object, last);
  }
  return copy;
}

const typo = (): SidecarSet => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'typo' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    containers: [{ name: 'agent', image: 'agent:1', imagee: 'agent:2', env: [{ name: 'A', value: 'x', valeu: 'y' }] }],
  },
});

async function createAndRead(cp: ControlPlane, set: SidecarSet, query = ''): Promise<{ status: number; body: string; warnings: string[]; stored?: SidecarSet }> {
  const res = await cp.request('admin', 'POST', `${SETS}${query}`, forCreate(set));
  if (res.status !== 201) return res;
  const stored = JSON.parse((await cp.request('admin', 'GET', `${SETS}/${set.metadata?.name ?? ''}`)).body) as SidecarSet;
  return { ...res, stored };
}

async function remove(cp: ControlPlane, name: string): Promise<void> {
  const res = await cp.request('admin', 'DELETE', `${SETS}/${name}`);
  expect([200, 404]).toContain(res.status);
}

it('the corpus holds the examples, every golden case and the samples', () => {
  const sources = corpus.map((entry) => entry.source);
  expect(sources).toEqual(expect.arrayContaining(['examples/sidecarset.yaml', 'examples/rollout/sidecarset.yaml', 'examples/hot-upgrade/sidecarset.yaml']));
  expect(sources.filter((s) => s.startsWith('test/golden/inject/')).length).toBeGreaterThanOrEqual(11);
  expect(sources.filter((s) => s.startsWith('test/golden/reviews/')).length).toBeGreaterThanOrEqual(5);
  expect(sources.filter((s) => s.startsWith('test/crd/kruise-samples.yaml')).length).toBe(4);
  expect(corpus.filter((entry) => entry.unknownFields.length > 0).map((entry) => entry.source)).toEqual(['test/golden/reviews/default-create.yaml#request.object']);
});

describeWithControlPlane('the CRD on the pinned kube-apiserver, without webhooks', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startControlPlane();
    await cp.apply(await readFile(crdPath, 'utf8'));
    await waitForCrd(cp, 'sidecarsets.apps.kruise.io');
  }, 30 * 60_000);
  afterAll(async () => {
    await cp.stop();
  });

  it('embeds exactly the types the pinned server serves (infra/k8s/openapi/core-v1.json is current)', async () => {
    expect(await fetchOpenApiSubset(cp)).toEqual(await readOpenApiSubset());
  });

  it('is itself valid without a warning under strict field validation', async () => {
    // Pointed at the harness's conversion webhook, as cp.apply does: the placeholder URL would fail every later write.
    const crd = withConversionClientConfig(parse(await readFile(crdPath, 'utf8')) as JsonObject, { url: cp.conversion.url, caBundle: Buffer.from(cp.conversion.caPem).toString('base64') }) as JsonObject & {
      metadata: { name: string };
    };
    const res = await cp.request(
      'admin',
      'PATCH',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}?fieldManager=crd-test&fieldValidation=Strict&force=true`,
      crd,
      'application/apply-patch+yaml',
    );
    expect({ status: res.status, warnings: res.warnings }).toEqual({ status: 200, warnings: [] });
    const status = (JSON.parse(res.body) as { status: { conditions: { type: string; status: string; message: string }[] } }).status;
    expect(status.conditions.find((c) => c.type === 'NonStructuralSchema')).toBeUndefined();
  });

  it.each(corpus.filter((entry) => entry.unknownFields.length === 0).map((entry) => [entry.source, entry] as const))(
    'stores %s as written under strict field validation',
    async (_source, { set }) => {
      const res = await createAndRead(cp, set, '?fieldValidation=Strict');
      try {
        expect({ status: res.status, warnings: res.warnings }).toEqual({ status: 201, warnings: [] });
        expect(res.stored?.spec).toEqual(withCrdDefaults(set.spec));
      } finally {
        await remove(cp, set.metadata?.name ?? '');
      }
    },
  );

  it.each(corpus.filter((entry) => entry.unknownFields.length > 0).map((entry) => [entry.source, entry] as const))(
    'warns about the deliberately unknown fields of %s and stores the rest',
    async (_source, { set, unknownFields }) => {
      const res = await createAndRead(cp, set);
      try {
        expect(res.status).toBe(201);
        expect(res.warnings.map((w) => /unknown field \\"([^\\]+)\\"/.exec(w)?.[1])).toEqual(unknownFields);
        expect(res.stored?.spec).toEqual(withCrdDefaults(withoutFields(set, unknownFields).spec));
      } finally {
        await remove(cp, set.metadata?.name ?? '');
      }
    },
  );

  it('warns about an unknown field and prunes it (default field validation)', async () => {
    const res = await createAndRead(cp, typo());
    try {
      expect(res.status).toBe(201);
      expect(res.warnings).toEqual(
        expect.arrayContaining([expect.stringContaining('unknown field \\"spec.containers[0].imagee\\"'), expect.stringContaining('unknown field \\"spec.containers[0].env[0].valeu\\"')]),
      );
      expect(res.stored?.spec?.containers).toEqual([{ name: 'agent', image: 'agent:1', env: [{ name: 'A', value: 'x' }] }]);
    } finally {
      await remove(cp, 'typo');
    }
  });

  it('refuses an unknown field under strict field validation, naming it', async () => {
    const res = await createAndRead(cp, typo(), '?fieldValidation=Strict');
    // The API server's answer to a strict decoding error: 400 BadRequest.
    expect(res.status).toBe(400);
    expect(res.body).toContain('unknown field \\"spec.containers[0].imagee\\"');
  });

  it('publishes descriptions for kubectl explain (OpenAPI v3 of apps.kruise.io/v1alpha1)', async () => {
    // The API server publishes a new CRD's OpenAPI shortly after it is established.
    const deadline = Date.now() + 60_000;
    type Described = { description?: string; items?: { properties?: Record<string, { description?: string }> } };
    const served = async (): Promise<{ properties?: Record<string, Described> } | undefined> => {
      const res = await cp.request('admin', 'GET', '/openapi/v3/apis/apps.kruise.io/v1alpha1');
      if (res.status !== 200) return undefined;
      const doc = JSON.parse(res.body) as { components: { schemas: Record<string, { properties?: { spec?: { properties?: Record<string, Described> } } }> } };
      return doc.components.schemas['io.kruise.apps.v1alpha1.SidecarSet']?.properties?.spec;
    };
    let spec = await served();
    while (spec === undefined && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      spec = await served();
    }
    expect(spec).toBeDefined();
    const properties = spec?.properties ?? {};
    for (const [name, field] of Object.entries(properties)) expect([name, field.description ?? '']).toEqual([name, expect.stringMatching(/\w/)]);
    const container = properties.containers?.items?.properties ?? {};
    expect(container.image?.description).toMatch(/image/i);
    expect(container.podInjectPolicy?.description).toMatch(/BeforeAppContainer/);
  });
});

describeWithControlPlane('the CRD behind the webhooks', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
    // Validation refuses a pin that does not resolve (as Kruise does): store the revisions the samples pin.
    for (const { set } of corpus) {
      const pin = set.spec?.injectionStrategy?.revision;
      if (!isObject(pin)) continue;
      const revision = newRevision(defaultSidecarSet(forCreate(set)), DEFAULT_REVISION_NAMESPACE, 1, 0);
      if (typeof pin.revisionName === 'string') revision.metadata = { ...revision.metadata, name: pin.revisionName };
      if (typeof pin.customVersion === 'string') revision.metadata = { ...revision.metadata, labels: { ...revision.metadata?.labels, [LABEL_CUSTOM_VERSION]: pin.customVersion } };
      // No owner: the set it names is created and deleted by the tests below.
      revision.metadata = { ...revision.metadata, ownerReferences: [] };
      const res = await stack.cp.request('admin', 'POST', `/apis/apps/v1/namespaces/${DEFAULT_REVISION_NAMESPACE}/controllerrevisions`, revision);
      expect([201, 409]).toContain(res.status);
    }
  }, 30 * 60_000);
  afterAll(async () => {
    await stack.stop();
  });

  it.each(corpus.filter((entry) => entry.valid && entry.unknownFields.length === 0).map((entry) => [entry.source, entry] as const))(
    'stores %s exactly as the defaulting webhook wrote it (nothing pruned)',
    async (_source, { set }) => {
      // A canary is refused without its base (the validating webhook reads it): a plain base is stored first.
      const base = canaryBaseOf(set);
      if (base !== undefined) expect((await createAndRead(stack.cp, { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: base }, spec: { selector: { matchLabels: { base } }, containers: [{ name: 'base-agent', image: 'agent:1' }] } })).status).toBe(201);
      const res = await createAndRead(stack.cp, set, '?fieldValidation=Strict');
      try {
        expect({ status: res.status, warnings: res.warnings, body: res.status === 201 ? '' : res.body }).toEqual({ status: 201, warnings: [], body: '' });
        const expected = defaultSidecarSet(forCreate(set));
        expect(res.stored?.spec).toEqual(expected.spec);
        expect(res.stored?.metadata?.annotations).toEqual(expect.objectContaining(expected.metadata?.annotations ?? {}));
      } finally {
        await remove(stack.cp, set.metadata?.name ?? '');
        if (base !== undefined) await remove(stack.cp, base);
      }
    },
  );

  it('prunes a typo before the webhooks see it, so the stored hash is the hash of what is stored', async () => {
    const res = await createAndRead(stack.cp, typo());
    try {
      expect(res.status).toBe(201);
      expect(res.warnings.join('\n')).toContain('unknown field \\"spec.containers[0].imagee\\"');
      const expected = defaultSidecarSet({ ...typo(), spec: { ...typo().spec, containers: [{ name: 'agent', image: 'agent:1', env: [{ name: 'A', value: 'x' }] }] } });
      expect(res.stored?.spec).toEqual(expected.spec);
      expect(res.stored?.metadata?.annotations).toEqual(expect.objectContaining(expected.metadata?.annotations ?? {}));
    } finally {
      await remove(stack.cp, 'typo');
    }
  });
});

