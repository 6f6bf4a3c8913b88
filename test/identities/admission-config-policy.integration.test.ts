/**
 * The reconciler's identity against the project's webhook configurations
 * and the SidecarSet CRD on a real kube-apiserver: RBAC lets it patch them
 * (it rotates the secret in their URLs), and infra/k8s/rbac.yaml's
 * ValidatingAdmissionPolicy `sidecarset-status-sync-admission-config`
 * narrows that to the last path segment of a clientConfig.url. Each attack
 * of issue 36 item 1 is tried as `sidecarset-status-sync`; the rotation's own
 * patches (the adapter status-sync uses) still pass, on the real 650 KB CRD.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane, type ControlPlaneResponse, type ControlPlaneUser } from '../../control-plane/harness.ts';
import { kubeWebhookUrls } from '../../lib/adapters/kube-webhook-configurations.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { kubeAdmissionConfigEventSink } from '../../lib/adapters/kube-events.ts';
import { rotateWebhookSecret, secretOfUrl, urlPrefixOf } from '../../lib/auth/rotation.ts';
import { repairRecorder, WEBHOOK_SECRET_REPAIRED } from '../../lib/webhook-config/refused-webhooks.ts';
import { CRD_NAME } from '../../lib/crd/sidecarset-crd.ts';
import { renderWebhookConfigurations, WEBHOOK_CONFIGURATION_NAME } from '../../lib/webhook-config/webhook-configurations.ts';
import { ADMISSION_FUNCTIONS } from '../../lib/webhooks/registry.ts';
import { ensureServingTls } from '../../functions/server/tls.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';

const POLICY = 'sidecarset-status-sync-admission-config';
const JSON_PATCH = 'application/json-patch+json';
const MUTATING = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${WEBHOOK_CONFIGURATION_NAME}`;
const VALIDATING = `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${WEBHOOK_CONFIGURATION_NAME}`;
const CRD = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`;
const CONVERSION_URL = '/spec/conversion/webhook/clientConfig/url';

const secret = (): string => randomBytes(32).toString('base64url');

describeWithControlPlane('the reconciler’s writes to the webhook configurations and the SidecarSet CRD on a real kube-apiserver', () => {
  let controlPlane: ControlPlane | undefined;
  /** A well-formed CA that is not the one the webhooks trust (the API server parses a CRD's caBundle). */
  let evilCa = '';
  /** pod-inject's place in the mutating configuration. */
  let P = 0;
  /** The pod-eviction webhook's place in the validating configuration (issue 45, item 5). */
  let E = 0;
  const cp = (): ControlPlane => {
    if (controlPlane === undefined) throw new Error('the control plane did not start');
    return controlPlane;
  };
  const patch = (user: ControlPlaneUser, path: string, ops: unknown[]): Promise<ControlPlaneResponse> => cp().request(user, 'PATCH', path, ops, JSON_PATCH);
  const read = async (path: string): Promise<Record<string, unknown>> => JSON.parse((await cp().request('admin', 'GET', path)).body) as Record<string, unknown>;
  const urlOf = async (path: string, index = P): Promise<string> => ((await read(path)) as { webhooks: { clientConfig: { url: string } }[] }).webhooks[index]?.clientConfig.url ?? '';
  const conversionUrl = async (): Promise<string> => ((await read(CRD)) as { spec: { conversion: { webhook: { clientConfig: { url: string } } } } }).spec.conversion.webhook.clientConfig.url;
  const withLast = (url: string, segment: string): string => `${url.slice(0, url.lastIndexOf('/') + 1)}${segment}`;
  const refusal = (res: ControlPlaneResponse): string => `${res.status} ${(JSON.parse(res.body) as { message?: string }).message ?? ''}`;

  beforeAll(async () => {
    controlPlane = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await controlPlane.apply(await readFile(join(process.cwd(), 'infra', 'k8s', 'crd.yaml'), 'utf8'));
    const tls = await mkdtemp(join(tmpdir(), 'evil-ca-'));
    evilCa = Buffer.from((await ensureServingTls(tls)).caPem).toString('base64');
    await rm(tls, { recursive: true, force: true });
    const s = secret();
    // Nothing listens there: these tests write the configurations, never call them.
    const targets = Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, { url: `https://127.0.0.1:9/${fn}/${s}` }])) as Parameters<typeof renderWebhookConfigurations>[0]['targets'];
    await controlPlane.apply(renderWebhookConfigurations({ targets, caPem: cp().caCert }).map((c) => stringify(c)).join('---\n'));
    P = ((await read(MUTATING)) as { webhooks: { name: string }[] }).webhooks.findIndex((w) => w.name.startsWith('pod-inject.'));
    E = ((await read(VALIDATING)) as { webhooks: { name: string }[] }).webhooks.findIndex((w) => w.name.startsWith('pod-eviction.'));
    if (E < 0) throw new Error('the rendered validating configuration has no pod-eviction webhook');
    // Policies reach the API server through a watch: wait until a repoint is refused.
    for (const deadline = Date.now() + 30_000; ; ) {
      const url = await urlOf(MUTATING);
      const res = await patch('status-sync', MUTATING, [{ op: 'replace', path: `/webhooks/${P}/clientConfig/url`, value: withLast(url, 'x').replace('127.0.0.1:9', '127.0.0.1:10') }]);
      if (res.status === 422 && res.body.includes(POLICY)) break;
      if (res.status === 200) await patch('admin', MUTATING, [{ op: 'replace', path: `/webhooks/${P}/clientConfig/url`, value: url }]);
      if (Date.now() > deadline) throw new Error(`the admission-config policy is not in force after 30 s: ${res.status} ${res.body}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 30 * 60_000);

  afterAll(async () => {
    await controlPlane?.stop();
  });

  describe('what a rotation writes passes', () => {
    it('repoints every webhook and the CRD’s conversion webhook at a new secret through the adapter status-sync rotates with', async () => {
      const urls = kubeWebhookUrls(kubeConfigClient(parseKubeConfig(cp().kubeconfig('status-sync'), 'status-sync kubeconfig')));
      const next = secret();
      const endpoints = (await urls.list()) ?? [];
      expect(endpoints.map((e) => e.configuration).sort()).toEqual(['CustomResourceDefinition', 'MutatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);
      const started = Date.now();
      for (const endpoint of endpoints) await urls.setUrl(endpoint, withLast(endpoint.url ?? '', next));
      const tookMs = Date.now() - started;
      expect(((await urls.list()) ?? []).map((e) => secretOfUrl(e.url))).toEqual(endpoints.map(() => next));
      // The CRD's patch compares its whole 650 KB spec in CEL: well inside the request's time.
      expect(tookMs).toBeLessThan(10_000);
    });
  });

  // Issue 45, item 2: what is still possible, a well-shaped wrong secret, and what ends it: the next resync, told.
  describe('a well-shaped wrong secret', () => {
    it('is admitted, and one resync as the reconciler points it back at the current secret and records a WebhookSecretRepaired Event', async () => {
      const client = kubeConfigClient(parseKubeConfig(cp().kubeconfig('status-sync'), 'status-sync kubeconfig'));
      const urls = kubeWebhookUrls(client);
      const before = await urlOf(MUTATING);
      const current = secretOfUrl(before) ?? '';
      expect((await patch('status-sync', MUTATING, [{ op: 'replace', path: `/webhooks/${P}/clientConfig/url`, value: withLast(before, secret()) }])).status).toBe(200);
      const deployed = ((await urls.list()) ?? []).map((e) => urlPrefixOf(e.url ?? ''));
      const store = { read: () => Promise.resolve(JSON.stringify({ current, rotatedAt: new Date().toISOString() })), write: () => Promise.reject(new Error('not due: nothing is stored')) };
      const recordRepaired = repairRecorder(kubeAdmissionConfigEventSink(client));
      const result = await rotateWebhookSecret({ store, webhooks: urls, now: () => new Date(), deployed, recordRepaired }, { periodMs: 86_400_000, refreshMs: 60_000, marginMs: 30_000 });
      expect(result).toMatchObject({ step: 'waiting', repaired: [expect.stringContaining('pod-inject.sidecarset.kruise.io')] });
      expect(await urlOf(MUTATING)).toBe(before);
      const events = JSON.parse((await cp().request('admin', 'GET', '/api/v1/namespaces/default/events')).body) as { items: { reason: string; involvedObject: { kind: string } }[] };
      expect(events.items.filter((e) => e.reason === WEBHOOK_SECRET_REPAIRED).map((e) => e.involvedObject.kind)).toEqual(['MutatingWebhookConfiguration']);
    });
  });

  describe('everything else is refused, naming the policy and the rule', () => {
    const webhookRule = 'may change only the secret (the last path segment of clientConfig.url, 43 to 1024 base64url characters) of the project\'s webhooks';
    const crdRule = 'may change only the secret (the last path segment of the conversion webhook\'s clientConfig.url, 43 to 1024 base64url characters) of the SidecarSet CRD';
    // Issue 45, item 2: segments that are no secret, which the old rule admitted (every pod creation then failed).
    const noSecrets: [string, (url: string) => string][] = [
      ['x', () => 'x'],
      ['..', () => '..'],
      ['.', () => '.'],
      ['the empty string', () => ''],
      ['a@evil.example.com', () => 'a@evil.example.com'],
      ['..%2Fpod-change%2F<secret>', (url) => `..%2Fpod-change%2F${url.slice(url.lastIndexOf('/') + 1)}`],
      ['1025 base64url characters', () => 'a'.repeat(1025)],
    ];
    const metadataRule = 'may not change the labels, annotations, finalizers or owner references';

    it.each<[string, string, (url: string) => unknown[], string]>([
      ['pod-inject repointed at another host (same path and secret)', MUTATING, (url) => [{ op: 'replace', path: `/webhooks/${P}/clientConfig/url`, value: url.replace('127.0.0.1:9', 'evil.example') }], webhookRule],
      ['pod-inject repointed at another host with another secret', MUTATING, () => [{ op: 'replace', path: `/webhooks/${P}/clientConfig/url`, value: `https://evil.example/pod-inject/${secret()}` }], webhookRule],
      ['another path before the secret', MUTATING, (url) => [{ op: 'replace', path: `/webhooks/${P}/clientConfig/url`, value: url.replace(/^(https:\/\/[^/]+\/)[^/]+\//, '$1elsewhere/') }], webhookRule],
      ['another caBundle', MUTATING, () => [{ op: 'replace', path: `/webhooks/${P}/clientConfig/caBundle`, value: evilCa }], webhookRule],
      ['a service instead of the URL', MUTATING, () => [{ op: 'replace', path: `/webhooks/${P}/clientConfig`, value: { service: { namespace: 'evil', name: 'inject' } } }], webhookRule],
      ['an emptied namespaceSelector (kube-system included)', MUTATING, () => [{ op: 'replace', path: `/webhooks/${P}/namespaceSelector`, value: {} }], webhookRule],
      ['an objectSelector', MUTATING, () => [{ op: 'replace', path: `/webhooks/${P}/objectSelector`, value: { matchLabels: { never: 'x' } } }], webhookRule],
      ['failurePolicy Ignore', MUTATING, () => [{ op: 'replace', path: `/webhooks/${P}/failurePolicy`, value: 'Ignore' }], webhookRule],
      ['another timeout', MUTATING, () => [{ op: 'replace', path: `/webhooks/${P}/timeoutSeconds`, value: 1 }], webhookRule],
      ['other rules', MUTATING, () => [{ op: 'replace', path: `/webhooks/${P}/rules`, value: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['pods'], scope: '*' }] }], webhookRule],
      ['a matchCondition', MUTATING, () => [{ op: 'add', path: `/webhooks/${P}/matchConditions`, value: [{ name: 'never', expression: 'false' }] }], webhookRule],
      ['an emptied validating configuration', VALIDATING, () => [{ op: 'replace', path: '/webhooks', value: [] }], webhookRule],
      ['a second webhook', MUTATING, () => [{ op: 'add', path: '/webhooks/-', value: { name: 'evil.example.com', clientConfig: { url: `https://evil.example/x/${secret()}` }, sideEffects: 'None', admissionReviewVersions: ['v1'] } }], webhookRule],
      ['a label', MUTATING, () => [{ op: 'add', path: '/metadata/labels/evil', value: 'x' }], metadataRule],
      // Issue 45, item 5: the pod-eviction webhook is held as the others are, or a stolen credential would unhook it before evicting.
      ['the pod-eviction webhook removed', VALIDATING, () => [{ op: 'remove', path: `/webhooks/${E}` }], webhookRule],
      ['the pod-eviction webhook’s failurePolicy set to Ignore', VALIDATING, () => [{ op: 'replace', path: `/webhooks/${E}/failurePolicy`, value: 'Ignore' }], webhookRule],
      ['the pod-eviction webhook’s matchConditions set to match nothing', VALIDATING, () => [{ op: 'replace', path: `/webhooks/${E}/matchConditions`, value: [{ name: 'is-status-sync', expression: 'false' }] }], webhookRule],
      ['the pod-eviction webhook repointed at another host', VALIDATING, (url) => [{ op: 'replace', path: `/webhooks/${E}/clientConfig/url`, value: url.replace('127.0.0.1:9', 'evil.example') }], webhookRule],
      ['the pod-eviction webhook’s rules changed to pods DELETE', VALIDATING, () => [{ op: 'replace', path: `/webhooks/${E}/rules/0/resources`, value: ['pods'] }], webhookRule],
      ['the CRD’s stored version flipped', CRD, () => [{ op: 'replace', path: '/spec/versions/0/storage', value: true }, { op: 'replace', path: '/spec/versions/1/storage', value: false }], crdRule],
      ['the CRD’s schema opened up', CRD, () => [{ op: 'add', path: '/spec/versions/1/schema/openAPIV3Schema/properties/spec/x-kubernetes-preserve-unknown-fields', value: true }], crdRule],
      ['the CRD’s conversion repointed at another host', CRD, (url) => [{ op: 'replace', path: CONVERSION_URL, value: url.replace(/^https:\/\/[^/]+/, 'https://evil.example') }], crdRule],
      ['the CRD’s conversion webhook given another caBundle', CRD, () => [{ op: 'replace', path: '/spec/conversion/webhook/clientConfig/caBundle', value: evilCa }], crdRule],
      ['the CRD’s conversion turned off', CRD, () => [{ op: 'replace', path: '/spec/conversion', value: { strategy: 'None' } }], crdRule],
      ...noSecrets.map(([what, segment]): [string, string, (url: string) => unknown[], string] => [`pod-inject’s secret segment set to ${what}`, MUTATING, (url) => [{ op: 'replace', path: `/webhooks/${P}/clientConfig/url`, value: withLast(url, segment(url)) }], webhookRule]),
      ...noSecrets.map(([what, segment]): [string, string, (url: string) => unknown[], string] => [`the CRD conversion’s secret segment set to ${what}`, CRD, (url) => [{ op: 'replace', path: CONVERSION_URL, value: withLast(url, segment(url)) }], crdRule]),
    ])('refuses %s', async (_what, path, ops, rule) => {
      const before = await read(path);
      const url = path === CRD ? await conversionUrl() : await urlOf(path, path === MUTATING ? P : E);
      const res = await patch('status-sync', path, ops(url));
      expect(refusal(res)).toContain(`ValidatingAdmissionPolicy '${POLICY}' with binding '${POLICY}' denied request: sidecarset-status-sync ${rule}`);
      expect(res.status).toBe(422);
      const after = await read(path);
      expect((after.metadata as { resourceVersion: string }).resourceVersion).toBe((before.metadata as { resourceVersion: string }).resourceVersion);
    });

    it('holds any member of the reconciler’s group, whatever its username (the functions test identity)', async () => {
      const url = await urlOf(MUTATING);
      const res = await patch('functions', MUTATING, [{ op: 'replace', path: `/webhooks/${P}/clientConfig/url`, value: url.replace('127.0.0.1:9', 'evil.example') }]);
      expect(refusal(res)).toContain(`denied request: sidecarset-status-sync ${webhookRule}`);
    });

    it('refuses DELETE even where RBAC grants it', async () => {
      // RBAC grants the reconciler get and patch only; a deployment that granted more is still held.
      await cp().apply(stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'too-wide' },
        rules: [
          { apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'], verbs: ['delete'] },
          { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['delete'] },
        ],
      }) + '---\n' + stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'too-wide' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'too-wide' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'sidecarset-status-sync' }],
      }));
      for (const path of [MUTATING, VALIDATING, CRD]) {
        let res: ControlPlaneResponse;
        // RBAC learns the new binding through a watch: 403 until it does.
        for (const deadline = Date.now() + 30_000; ; ) {
          res = await cp().request('status-sync', 'DELETE', path);
          if (res.status !== 403 || Date.now() > deadline) break;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        expect(refusal(res)).toContain(`denied request: sidecarset-status-sync may not delete the project's webhook configurations or the SidecarSet CRD`);
        expect((await cp().request('admin', 'GET', path)).status).toBe(200);
      }
    });

    it('leaves no identity of the project a write on MutatingAdmissionPolicies or their bindings: RBAC alone guards them', async () => {
      // The API server runs no API-based policy on admission policies or bindings (k8s.io/apiserver
      // pkg/admission/plugin/policy/generic/plugin.go, isExcludedFromAPIHooks): this ValidatingAdmissionPolicy
      // cannot hold them, so a write RBAC granted would let a stolen credential inject into every pod.
      const MAPS = '/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies';
      const BINDINGS = '/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings';
      const policy = {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingAdmissionPolicy',
        metadata: { name: 'takeover' },
        spec: {
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] },
          reinvocationPolicy: 'Never',
          mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: "[JSONPatch{op: 'add', path: '/metadata/labels', value: {'taken': 'over'}}]" } }],
        },
      };
      const binding = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingAdmissionPolicyBinding', metadata: { name: 'takeover' }, spec: { policyName: 'takeover' } };
      for (const user of ['status-sync', 'functions', 'webhooks'] as const) {
        expect((await cp().request(user, 'POST', MAPS, policy)).status).toBe(403);
        expect((await cp().request(user, 'POST', BINDINGS, binding)).status).toBe(403);
      }
      expect((await cp().request('admin', 'POST', MAPS, policy)).status).toBe(201);
      for (const user of ['status-sync', 'functions', 'webhooks'] as const) {
        expect((await patch(user, `${MAPS}/takeover`, [{ op: 'replace', path: '/spec/reinvocationPolicy', value: 'IfNeeded' }])).status).toBe(403);
        expect((await cp().request(user, 'DELETE', `${MAPS}/takeover`)).status).toBe(403);
      }
      expect((await cp().request('admin', 'DELETE', `${MAPS}/takeover`)).status).toBe(200);
    });

    it('leaves every other identity alone: the admin changes a failure policy', async () => {
      const res = await patch('admin', MUTATING, [{ op: 'replace', path: `/webhooks/${P}/timeoutSeconds`, value: 9 }]);
      expect(res.status).toBe(200);
    });
  });
});
