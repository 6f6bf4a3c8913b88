/**
 * docs/MIGRATION.md's CRD steps, walked on the real API server: "Kruise to
 * this project" step 3 (this project's CRD replaces Kruise's) and "This
 * project back to Kruise" step 2 (Kruise's CRD comes back), for Kruise 1.8
 * (its CRD serves and stores v1alpha1 alone) and 1.9 (both versions,
 * v1beta1 stored, conversion through Kruise's manager).
 *
 * The control plane starts with Kruise's CRD, not this project's: the
 * harness installs none. Kruise's CRD is rendered here in Kruise's shape
 * (no part-of label; 1.8 one version, 1.9 two) and created as `helm
 * install` creates it (a POST, field manager helm). Kruise 1.9's converts
 * through a second instance of the project's conversion webhook at its own
 * URL: Kruise's manager converts as the project does (the conformance
 * suite's convert cases compare the two on generated sets, Kruise 1.9.0's
 * code), and what these steps depend on is which URL the CRD names at each moment, which the two
 * instances' review counts show. The operator's commands are sent as kubectl
 * sends them: `kubectl apply --server-side --force-conflicts` is an apply
 * patch with force and field manager kubectl, `kubectl replace` a PUT, the
 * storedVersions edit a merge patch of the status subresource. After each
 * swap every set reads back byte-equal in both versions, etcd holds the
 * version the doc says, and the pod is untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { startConversionWebhook, type ConversionWebhook } from '../../control-plane/conversion-webhook.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { waitForCrd } from '../../functions/server/local-stack.ts';
import { CRD_NAME, DEFAULT_CRD_VERSIONS, sidecarSetCrd, withConversionClientConfig } from '../../lib/crd/sidecarset-crd.ts';
import type { OpenApiSchemas } from '../../lib/crd/openapi-structural.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { readOpenApiSubset } from '../../scripts/crd.ts';
import { runMigrate } from '../../functions/migrate/cli.ts';
import { kubeMigrationReads } from '../../lib/adapters/kube-migrate.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { KRUISE_NAMESPACE } from '../../lib/migrate/kruise-manager.ts';

const CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`;
const NS = 'shop';
const sets = (version: string): string => `/apis/apps.kruise.io/${version}/sidecarsets`;

/** The sets an operator of either release has: written in v1alpha1 (spec.namespace) and v1beta1 (namespaceSelector, customVersion). */
const ALPHA_SETS: JsonObject[] = [
  {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'log-agent', labels: { 'apps.kruise.io/sidecarset-custom-version': 'v3' } },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      namespace: NS,
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1, paused: true },
      containers: [{ name: 'log', image: 'log:1', podInjectPolicy: 'BeforeAppContainer', shareVolumePolicy: { type: 'enabled' } }],
      volumes: [{ name: 'logs', emptyDir: {} }],
    },
  },
  {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'mesh', annotations: { owner: 'platform' } },
    spec: {
      selector: { matchExpressions: [{ key: 'mesh', operator: 'In', values: ['on'] }] },
      injectionStrategy: { paused: false },
      initContainers: [{ name: 'mesh-init', image: 'mesh-init:1' }],
      containers: [{ name: 'proxy', image: 'proxy:1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } }],
    },
  },
];
const BETA_SET: JsonObject = {
  apiVersion: 'apps.kruise.io/v1beta1',
  kind: 'SidecarSet',
  metadata: { name: 'metrics' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
    customVersion: 'v2',
    containers: [{ name: 'metrics', image: 'metrics:1', env: [{ name: 'PORT', value: '9100' }] }],
  },
};
const STATUS = { observedGeneration: 1, matchedPods: 3, updatedPods: 3, readyPods: 2, updatedReadyPods: 2, latestRevision: 'rev-abc' };

describeWithControlPlane('swapping Kruise\'s SidecarSet CRD for this project\'s, and back (docs/MIGRATION.md)', () => {
  let types: OpenApiSchemas;
  beforeAll(async () => {
    types = (await readOpenApiSubset()).schemas;
  });

  /** Kruise's CRD as its chart ships it: no part-of label; 1.9's converts through Kruise's webhook (here `kruiseConvert`). */
  function kruiseCrd(line: '1.8' | '1.9', kruiseConvert?: ConversionWebhook): JsonObject {
    const rendered =
      line === '1.8' || kruiseConvert === undefined
        ? sidecarSetCrd(types, { served: 'v1alpha1' })
        : sidecarSetCrd(types, { served: 'v1alpha1+v1beta1', conversion: { url: kruiseConvert.url, caBundle: Buffer.from(kruiseConvert.caPem).toString('base64') } });
    return { ...rendered, metadata: { name: CRD_NAME, annotations: { 'controller-gen.kubebuilder.io/version': 'v0.16.5' } } };
  }

  /** This project's CRD as `npm run manifests` renders it, converting through the deployment's sidecarset-convert (the harness's webhook). */
  function ourCrd(cp: ControlPlane): JsonObject {
    return withConversionClientConfig(sidecarSetCrd(types, DEFAULT_CRD_VERSIONS), { url: cp.conversion.url, caBundle: Buffer.from(cp.conversion.caPem).toString('base64') });
  }

  /** One request as kubectl sends it; like client-go, it retries a 429 (the storage re-initialising after a CRD change) for up to 30 s. */
  async function call(cp: ControlPlane, method: string, path: string, body?: unknown, contentType?: string): Promise<JsonObject> {
    const deadline = Date.now() + 30_000;
    let res = await cp.request('admin', method, path, body, contentType);
    while (res.status === 429 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      res = await cp.request('admin', method, path, body, contentType);
    }
    if (res.status !== 200 && res.status !== 201) throw new Error(`${method} ${path}: ${res.status} ${res.body}`);
    return JSON.parse(res.body) as JsonObject;
  }

  /** `kubectl apply --server-side --force-conflicts -f crd.yaml`. */
  async function applyServerSide(cp: ControlPlane, crd: JsonObject): Promise<void> {
    await call(cp, 'PATCH', `${CRD_PATH}?fieldManager=kubectl&force=true`, crd, 'application/apply-patch+yaml');
    await waitForCrd(cp, CRD_NAME);
  }

  async function crdNow(cp: ControlPlane): Promise<{ versions: [string, boolean, boolean][]; storedVersions: string[]; conversion: unknown; labels: unknown }> {
    const crd = (await call(cp, 'GET', CRD_PATH)) as { metadata: { labels?: unknown }; spec: { versions: { name: string; served: boolean; storage: boolean }[]; conversion?: unknown }; status: { storedVersions: string[] } };
    return { versions: crd.spec.versions.map((v) => [v.name, v.served, v.storage]), storedVersions: crd.status.storedVersions, conversion: crd.spec.conversion, labels: crd.metadata.labels };
  }

  /** Waits until `version` of SidecarSets lists (or, with `served` false, is no longer served): the API server swaps a CRD's storage asynchronously. */
  async function waitServed(cp: ControlPlane, version: string, served = true): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await cp.request('admin', 'GET', `${sets(version)}?limit=1`);
      if ((res.status === 200) === served && (served || res.status === 404)) return;
      if (Date.now() > deadline) throw new Error(`${version} SidecarSets: ${res.status} after 30 s: ${res.body.slice(0, 300)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Every set as a version serves it, without what a rewrite changes (resourceVersion, managedFields): JSON text by name. */
  async function readAll(cp: ControlPlane, version: string): Promise<Record<string, string>> {
    const list = (await call(cp, 'GET', sets(version))) as { items: { metadata: Record<string, unknown> }[] };
    const out: Record<string, string> = {};
    for (const item of list.items) {
      const metadata = { ...item.metadata };
      delete metadata.resourceVersion;
      delete metadata.managedFields;
      out[String(metadata.name)] = JSON.stringify({ ...item, metadata });
    }
    return out;
  }

  /** `kubectl get sidecarsets.<version>.apps.kruise.io -o json | kubectl replace -f -`. */
  async function restoreAll(cp: ControlPlane, version: string): Promise<void> {
    const list = (await call(cp, 'GET', sets(version))) as { items: { metadata: { name: string } }[] };
    for (const item of list.items) await call(cp, 'PUT', `${sets(version)}/${item.metadata.name}`, item);
  }

  /** `kubectl patch crd ... --subresource=status --type=merge -p '{"status":{"storedVersions":[...]}}'`. */
  async function setStoredVersions(cp: ControlPlane, storedVersions: string[]): Promise<void> {
    await call(cp, 'PATCH', `${CRD_PATH}/status`, { status: { storedVersions } }, 'application/merge-patch+json');
  }

  /** The apiVersion etcd holds each set in (etcd's JSON gateway: the value is the object as JSON). */
  async function storedIn(cp: ControlPlane): Promise<Record<string, string>> {
    const prefix = '/registry/apps.kruise.io/sidecarsets/';
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    const res = await fetch(`${cp.etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: b64(prefix), range_end: b64(prefix.slice(0, -1) + '0') }) });
    const body = (await res.json()) as { kvs?: { key: string; value: string }[] };
    const out: Record<string, string> = {};
    for (const kv of body.kvs ?? []) {
      const object = JSON.parse(Buffer.from(kv.value, 'base64').toString('utf8')) as { apiVersion: string };
      out[Buffer.from(kv.key, 'base64').toString('utf8').slice(prefix.length)] = object.apiVersion;
    }
    return out;
  }

  /** The preflight's CRD line (`npm run -s migrate -- check`): what an operator reads after each CRD step. */
  async function preflightCrdLine(cp: ControlPlane): Promise<string> {
    const out: string[] = [];
    const client = kubeConfigClient(parseKubeConfig(cp.kubeconfig('admin'), 'the test control plane'));
    await runMigrate(['check'], { out: (t) => out.push(t), err: () => undefined }, () =>
      Promise.resolve({ reads: kubeMigrationReads(client), revisionNamespace: KRUISE_NAMESPACE, server: cp.url }),
    );
    return out.join('').split('\n').find((line) => line.includes('SidecarSet CRD:'))?.trim() ?? out.join('');
  }

  /** A pod the sets select, whose resourceVersion must not move. */
  async function createPod(cp: ControlPlane): Promise<string> {
    await call(cp, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const pod = (await call(cp, 'POST', `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-0', labels: { app: 'web', mesh: 'on' } },
      spec: { containers: [{ name: 'app', image: 'app:1' }] },
    })) as { metadata: { resourceVersion: string } };
    return pod.metadata.resourceVersion;
  }

  async function podVersion(cp: ControlPlane): Promise<string> {
    return ((await call(cp, 'GET', `/api/v1/namespaces/${NS}/pods/web-0`)) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  }

  /** Creates a set in the version it is written in, then gives it a status as Kruise's controller would. */
  async function createSet(cp: ControlPlane, set: JsonObject): Promise<void> {
    const version = String(set.apiVersion).split('/')[1] ?? '';
    const created = await call(cp, 'POST', `${sets(version)}?fieldManager=kubectl-create`, set);
    await call(cp, 'PUT', `${sets(version)}/${(set.metadata as { name: string }).name}/status`, { ...created, status: STATUS });
  }

  describe('Kruise 1.8: v1alpha1 only', () => {
    let cp: ControlPlane;
    let podRv: string;
    let before: Record<string, string>;
    let beta: Record<string, string>;
    beforeAll(async () => {
      cp = await startControlPlane();
      // helm install creates the CRD; nothing else installs one.
      expect((await cp.request('admin', 'GET', CRD_PATH)).status).toBe(404);
      await call(cp, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldManager=helm', kruiseCrd('1.8'));
      await waitForCrd(cp, CRD_NAME);
      await waitServed(cp, 'v1alpha1');
      for (const set of ALPHA_SETS) await createSet(cp, set);
      podRv = await createPod(cp);
      before = await readAll(cp, 'v1alpha1');
    }, 10 * 60_000);
    afterAll(async () => {
      await cp.stop();
    });

    it('starts as Kruise 1.8 leaves a cluster: v1alpha1 served and stored alone', async () => {
      expect(await crdNow(cp)).toMatchObject({ versions: [['v1alpha1', true, true]], storedVersions: ['v1alpha1'], conversion: { strategy: 'None' } });
      expect(await storedIn(cp)).toEqual({ 'log-agent': 'apps.kruise.io/v1alpha1', mesh: 'apps.kruise.io/v1alpha1' });
      expect(Object.keys(before)).toEqual(['log-agent', 'mesh']);
      expect(await preflightCrdLine(cp)).toBe("SidecarSet CRD: Kruise's; serves v1alpha1, stores v1alpha1; storedVersions v1alpha1");
    });

    it('step 3: this project\'s CRD applies server-side over Kruise\'s, and storedVersions lists both until the rewrite', async () => {
      const reviews = cp.conversion.reviews;
      await applyServerSide(cp, ourCrd(cp));
      await waitServed(cp, 'v1beta1');
      const crd = await crdNow(cp);
      expect(crd.versions).toEqual([['v1alpha1', true, false], ['v1beta1', true, true]]);
      expect(crd.storedVersions).toEqual(['v1alpha1', 'v1beta1']);
      expect(crd.conversion).toMatchObject({ strategy: 'Webhook', webhook: { clientConfig: { url: cp.conversion.url } } });
      // The v1alpha1 objects read unchanged with no conversion; their v1beta1 reads go through sidecarset-convert.
      expect(await readAll(cp, 'v1alpha1')).toEqual(before);
      beta = await readAll(cp, 'v1beta1');
      expect(cp.conversion.reviews).toBeGreaterThan(reviews);
      expect(await storedIn(cp)).toEqual({ 'log-agent': 'apps.kruise.io/v1alpha1', mesh: 'apps.kruise.io/v1alpha1' });
    });

    it('step 3, Kruise 1.8: the rewrite stores every set as v1beta1, then storedVersions is cut to v1beta1; both versions read back byte-equal', async () => {
      await restoreAll(cp, 'v1beta1');
      expect(await storedIn(cp)).toEqual({ 'log-agent': 'apps.kruise.io/v1beta1', mesh: 'apps.kruise.io/v1beta1' });
      await setStoredVersions(cp, ['v1beta1']);
      expect((await crdNow(cp)).storedVersions).toEqual(['v1beta1']);
      expect(await preflightCrdLine(cp)).toBe("SidecarSet CRD: this project's; serves v1alpha1, v1beta1, stores v1beta1; storedVersions v1beta1; conversion through sidecarset-convert");
      expect(await readAll(cp, 'v1beta1')).toEqual(beta);
      expect(await readAll(cp, 'v1alpha1')).toEqual(before);
      expect(await podVersion(cp)).toBe(podRv);
    }, 120_000);

    it('the way back, step 2 for 1.8: v1alpha1 made the storage version, every set re-stored, storedVersions cut, then Kruise\'s CRD applies', async () => {
      expect((await crdNow(cp)).versions.map(([name]) => name)).toEqual(['v1alpha1', 'v1beta1']);
      await call(
        cp,
        'PATCH',
        CRD_PATH,
        [
          { op: 'replace', path: '/spec/versions/0/storage', value: true },
          { op: 'replace', path: '/spec/versions/1/storage', value: false },
        ],
        'application/json-patch+json',
      );
      await waitForCrd(cp, CRD_NAME);
      // The API server swaps the storage after the CRD changes: rewrite only once a rewrite stores v1alpha1.
      const deadline = Date.now() + 30_000;
      for (;;) {
        await restoreAll(cp, 'v1alpha1');
        const stored = await storedIn(cp);
        if (Object.values(stored).every((v) => v === 'apps.kruise.io/v1alpha1')) break;
        if (Date.now() > deadline) throw new Error(`still stored as ${JSON.stringify(stored)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      await setStoredVersions(cp, ['v1alpha1']);
      await applyServerSide(cp, kruiseCrd('1.8'));
      await waitServed(cp, 'v1beta1', false);
      const crd = await crdNow(cp);
      expect(crd).toMatchObject({ versions: [['v1alpha1', true, true]], storedVersions: ['v1alpha1'], conversion: { strategy: 'None' } });
      // The same field manager (kubectl) applied both: the part-of label only this project's CRD sets is gone with it.
      expect(crd.labels).toBeUndefined();
      expect(await preflightCrdLine(cp)).toBe("SidecarSet CRD: Kruise's; serves v1alpha1, stores v1alpha1; storedVersions v1alpha1");
      expect(await storedIn(cp)).toEqual({ 'log-agent': 'apps.kruise.io/v1alpha1', mesh: 'apps.kruise.io/v1alpha1' });
      expect(await readAll(cp, 'v1alpha1')).toEqual(before);
      expect(await podVersion(cp)).toBe(podRv);
    }, 120_000);
  });

  describe('Kruise 1.9: both versions, v1beta1 stored, converted by Kruise\'s webhook', () => {
    let cp: ControlPlane;
    let kruiseConvert: ConversionWebhook;
    let podRv: string;
    let before: { v1alpha1: Record<string, string>; v1beta1: Record<string, string> };
    beforeAll(async () => {
      cp = await startControlPlane();
      // Kruise's manager's /convert: the project's conversion webhook at its own URL, with the API server's serving certificate (issued for 127.0.0.1).
      kruiseConvert = await startConversionWebhook({ certFile: join(cp.dir, 'certs', 'apiserver.crt'), keyFile: join(cp.dir, 'certs', 'apiserver.key'), caPem: cp.caCert });
      expect((await cp.request('admin', 'GET', CRD_PATH)).status).toBe(404);
      await call(cp, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldManager=helm', kruiseCrd('1.9', kruiseConvert));
      await waitForCrd(cp, CRD_NAME);
      await waitServed(cp, 'v1beta1');
      await waitServed(cp, 'v1alpha1');
      for (const set of [...ALPHA_SETS, BETA_SET]) await createSet(cp, set);
      podRv = await createPod(cp);
      before = { v1alpha1: await readAll(cp, 'v1alpha1'), v1beta1: await readAll(cp, 'v1beta1') };
    }, 10 * 60_000);
    afterAll(async () => {
      await kruiseConvert.stop();
      await cp.stop();
    });

    it('starts as Kruise 1.9 leaves a cluster: every set stored as v1beta1, v1alpha1 reads converted by Kruise\'s webhook', async () => {
      expect(await crdNow(cp)).toMatchObject({ versions: [['v1alpha1', true, false], ['v1beta1', true, true]], storedVersions: ['v1beta1'] });
      expect(await storedIn(cp)).toEqual({ 'log-agent': 'apps.kruise.io/v1beta1', mesh: 'apps.kruise.io/v1beta1', metrics: 'apps.kruise.io/v1beta1' });
      expect(kruiseConvert.reviews).toBeGreaterThan(0);
      expect(cp.conversion.reviews).toBe(0);
      expect(await preflightCrdLine(cp)).toBe("SidecarSet CRD: Kruise's; serves v1alpha1, v1beta1, stores v1beta1; storedVersions v1beta1; conversion through Kruise’s webhook");
    });

    it('step 3: this project\'s CRD applies server-side over Kruise\'s; reads convert through sidecarset-convert and are byte-equal; nothing else to do', async () => {
      await applyServerSide(cp, ourCrd(cp));
      const crd = await crdNow(cp);
      expect(crd.versions).toEqual([['v1alpha1', true, false], ['v1beta1', true, true]]);
      expect(crd.storedVersions).toEqual(['v1beta1']);
      expect(crd.conversion).toMatchObject({ webhook: { clientConfig: { url: cp.conversion.url } } });
      expect(await preflightCrdLine(cp)).toBe("SidecarSet CRD: this project's; serves v1alpha1, v1beta1, stores v1beta1; storedVersions v1beta1; conversion through sidecarset-convert");
      const deadline = Date.now() + 30_000;
      // The API server picks the new conversion URL up when it re-initialises the storage.
      while (cp.conversion.reviews === 0) {
        expect(await readAll(cp, 'v1alpha1')).toEqual(before.v1alpha1);
        if (Date.now() > deadline) throw new Error('v1alpha1 reads never reached sidecarset-convert');
        await new Promise((r) => setTimeout(r, 200));
      }
      const settled = kruiseConvert.reviews;
      expect(await readAll(cp, 'v1alpha1')).toEqual(before.v1alpha1);
      expect(await readAll(cp, 'v1beta1')).toEqual(before.v1beta1);
      expect(kruiseConvert.reviews).toBe(settled);
      expect(await storedIn(cp)).toEqual({ 'log-agent': 'apps.kruise.io/v1beta1', mesh: 'apps.kruise.io/v1beta1', metrics: 'apps.kruise.io/v1beta1' });
      expect(await podVersion(cp)).toBe(podRv);
    }, 120_000);

    it('the way back, step 2 for 1.9: Kruise\'s CRD applies server-side; reads convert through Kruise\'s webhook again, byte-equal', async () => {
      await applyServerSide(cp, kruiseCrd('1.9', kruiseConvert));
      const crd = await crdNow(cp);
      expect(crd).toMatchObject({ versions: [['v1alpha1', true, false], ['v1beta1', true, true]], storedVersions: ['v1beta1'] });
      expect(crd.conversion).toMatchObject({ webhook: { clientConfig: { url: kruiseConvert.url } } });
      expect(crd.labels).toBeUndefined();
      const kruise = kruiseConvert.reviews;
      const deadline = Date.now() + 30_000;
      while (kruiseConvert.reviews === kruise) {
        expect(await readAll(cp, 'v1alpha1')).toEqual(before.v1alpha1);
        if (Date.now() > deadline) throw new Error('v1alpha1 reads never reached Kruise\'s webhook again');
        await new Promise((r) => setTimeout(r, 200));
      }
      const settled = cp.conversion.reviews;
      expect(await readAll(cp, 'v1alpha1')).toEqual(before.v1alpha1);
      expect(await readAll(cp, 'v1beta1')).toEqual(before.v1beta1);
      expect(cp.conversion.reviews).toBe(settled);
      expect(await storedIn(cp)).toEqual({ 'log-agent': 'apps.kruise.io/v1beta1', mesh: 'apps.kruise.io/v1beta1', metrics: 'apps.kruise.io/v1beta1' });
      expect(await podVersion(cp)).toBe(podRv);
      expect(await preflightCrdLine(cp)).toBe("SidecarSet CRD: Kruise's; serves v1alpha1, v1beta1, stores v1beta1; storedVersions v1beta1; conversion through Kruise’s webhook");
    }, 120_000);
  });
});
