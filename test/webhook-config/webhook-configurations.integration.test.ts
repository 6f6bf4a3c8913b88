/**
 * `npm run manifests`: the rendered YAML for a Lambda deployment and for the
 * local server, its errors, and proof that the output applies cleanly to a
 * real API server.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { MANAGED_URL_COMMENT, renderManifests } from '../../functions/render-manifests/main.ts';
import { ensureServingTls } from '../../functions/server/tls.ts';
import { functionUrlsFromOutputs, webhookUrl } from '../../lib/webhook-config/targets.ts';
import { WEBHOOK_CONFIGURATION_NAME } from '../../lib/webhook-config/webhook-configurations.ts';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';

const secret = randomBytes(32).toString('base64url');
let dir: string;
let outputsFile: string;
let secretFile: string;
let predictableFile: string;
let storedFile: string;

const outputs = {
  SidecarSetStack: {
    SidecarSetDefaultFunctionUrl: 'https://aaa.lambda-url.eu-west-1.on.aws/',
    SidecarSetValidateFunctionUrl: 'https://bbb.lambda-url.eu-west-1.on.aws/',
    PodInjectFunctionUrl: 'https://ccc.lambda-url.eu-west-1.on.aws/',
    PodChangeFunctionUrl: 'https://eee.lambda-url.eu-west-1.on.aws/',
    SidecarSetConvertFunctionUrl: 'https://ddd.lambda-url.eu-west-1.on.aws/',
    WebhookSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:webhook',
  },
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'manifests-'));
  outputsFile = join(dir, 'outputs.json');
  secretFile = join(dir, 'secret');
  await writeFile(outputsFile, JSON.stringify(outputs));
  await writeFile(secretFile, `${secret}\n`);
  predictableFile = join(dir, 'predictable');
  await writeFile(predictableFile, `${'a'.repeat(43)}\n`);
  storedFile = join(dir, 'stored.json');
  await writeFile(storedFile, JSON.stringify({ current: secret, previous: randomBytes(32).toString('base64url'), rotatedAt: '2026-01-01T00:00:00.000Z' }));
  await ensureServingTls(join(dir, 'tls'));
  await writeFile(join(dir, 'tls', 'webhook-secret'), `${secret}\n`);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Hook {
  name: string;
  failurePolicy: string;
  sideEffects: string;
  timeoutSeconds: number;
  clientConfig: { url: string; caBundle?: string };
  namespaceSelector?: unknown;
  matchConditions?: { name: string }[];
}

function docs(yaml: string): { kind: string; webhooks?: Hook[] }[] {
  return parseAllDocuments(yaml).map((d) => d.toJS() as { kind: string; webhooks?: Hook[] });
}

describe('functionUrlsFromOutputs and webhookUrl', () => {
  it('finds each function URL in CDK outputs by its key', () => {
    expect(functionUrlsFromOutputs(outputs)).toEqual({
      'sidecarset-default': 'https://aaa.lambda-url.eu-west-1.on.aws/',
      'sidecarset-validate': 'https://bbb.lambda-url.eu-west-1.on.aws/',
      'pod-inject': 'https://ccc.lambda-url.eu-west-1.on.aws/',
      'pod-change': 'https://eee.lambda-url.eu-west-1.on.aws/',
      'sidecarset-convert': 'https://ddd.lambda-url.eu-west-1.on.aws/',
    });
  });
  it('appends the secret as the last path segment', () => {
    expect(webhookUrl('https://aaa.lambda-url.eu-west-1.on.aws/', secret)).toBe(`https://aaa.lambda-url.eu-west-1.on.aws/${secret}`);
  });
  it.each([['http://x/', /not https/], ['https://x/?a=b', /query/], ['nope', /not a URL/]])('rejects %s', (url, message) => {
    expect(() => webhookUrl(url, secret)).toThrow(message);
  });
});

describe('renderManifests', () => {
  it('renders the CRD, RBAC and webhooks for Lambda Function URLs with the secret path and no caBundle', async () => {
    const out = docs(await renderManifests(['--function-urls', outputsFile, '--secret-file', secretFile]));
    expect(out.map((d) => d.kind)).toEqual([
      'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'Namespace', 'Role', 'RoleBinding', 'Role', 'RoleBinding', 'Role', 'RoleBinding', 'Role', 'RoleBinding',
      'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding',
      'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding',
    ]);
    const hooks = out.flatMap((d) => d.webhooks ?? []);
    expect(hooks.map((h) => h.clientConfig.url)).toEqual([
      `https://aaa.lambda-url.eu-west-1.on.aws/${secret}`,
      `https://ccc.lambda-url.eu-west-1.on.aws/${secret}`,
      `https://bbb.lambda-url.eu-west-1.on.aws/${secret}`,
      `https://eee.lambda-url.eu-west-1.on.aws/${secret}`,
      // pod-eviction: the pod-change function, at its URL.
      `https://eee.lambda-url.eu-west-1.on.aws/${secret}`,
    ]);
    expect(hooks.every((h) => h.clientConfig.caBundle === undefined)).toBe(true);
  });

  it('renders the policy path by default, and the webhook path alone (no policy; pod-inject for every pod) with --injection webhook', async () => {
    const render = async (argv: string[]) => docs(await renderManifests(['--function-urls', outputsFile, '--secret-file', secretFile, '--only', 'webhooks', ...argv]));
    const podInject = (out: ReturnType<typeof docs>) => out.flatMap((d) => d.webhooks ?? []).find((h) => h.name === 'pod-inject.sidecarset.kruise.io');
    const byDefault = await render([]);
    expect(byDefault.map((d) => d.kind)).toEqual(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding']);
    expect(podInject(byDefault)?.matchConditions?.length).toBeGreaterThan(0);
    expect(await render(['--injection', 'policy'])).toEqual(byDefault);
    const webhook = await render(['--injection', 'webhook']);
    expect(webhook.map((d) => d.kind)).toEqual(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);
    expect(podInject(webhook)?.matchConditions).toBeUndefined();
    await expect(renderManifests(['--function-urls', outputsFile, '--secret-file', secretFile, '--injection', 'both'])).rejects.toThrow('--injection must be policy or webhook, not both');
  });

  it('points the CRD\'s conversion webhook at the sidecarset-convert Function URL with the secret path (Lambda), or at the local server with its caBundle', async () => {
    const conversionOf = (yaml: string) => (docs(yaml)[0] as unknown as { spec: { conversion: unknown } }).spec.conversion;
    expect(conversionOf(await renderManifests(['--function-urls', outputsFile, '--secret-file', secretFile]))).toEqual({
      strategy: 'Webhook',
      webhook: { clientConfig: { url: `https://ddd.lambda-url.eu-west-1.on.aws/${secret}` }, conversionReviewVersions: ['v1'] },
    });
    const ca = await readFile(join(dir, 'tls', 'ca.crt'), 'utf8');
    expect(conversionOf(await renderManifests(['--local', '--tls-dir', join(dir, 'tls'), '--port', '9443']))).toEqual({
      strategy: 'Webhook',
      webhook: { clientConfig: { url: `https://127.0.0.1:9443/sidecarset-convert/${secret}`, caBundle: Buffer.from(ca).toString('base64') }, conversionReviewVersions: ['v1'] },
    });
  });

  it('applies the pod failure policy, timeout and extra excluded namespaces', async () => {
    const out = docs(await renderManifests(['--function-urls', outputsFile, '--secret-file', secretFile, '--pod-failure-policy', 'Ignore', '--timeout', '5', '--exclude-namespace', 'infra', '--only', 'webhooks']));
    const hooks = out.flatMap((d) => d.webhooks ?? []);
    expect(hooks.map((h) => [h.name, h.failurePolicy, h.timeoutSeconds])).toEqual([
      ['sidecarset-default.sidecarset.kruise.io', 'Fail', 5],
      ['pod-inject.sidecarset.kruise.io', 'Ignore', 5],
      ['sidecarset-validate.sidecarset.kruise.io', 'Fail', 5],
      // Its own bound: a webhook that only triggers never holds a kubelet's write longer.
      ['pod-change.sidecarset.kruise.io', 'Ignore', 1],
      // The reconciler's evictions: fail closed, within its own bound.
      ['pod-eviction.sidecarset.kruise.io', 'Fail', 5],
    ]);
    expect(JSON.stringify(hooks[1]?.namespaceSelector)).toContain('infra');
  });

  it('declares the side effect of the webhooks that start reconciles (NoneOnDryRun: never on a dry run), and none for the others', async () => {
    const out = docs(await renderManifests(['--function-urls', outputsFile, '--secret-file', secretFile, '--only', 'webhooks']));
    const hooks = out.flatMap((d) => d.webhooks ?? []);
    expect(hooks.map((h) => [h.name, h.sideEffects])).toEqual([
      ['sidecarset-default.sidecarset.kruise.io', 'None'],
      ['pod-inject.sidecarset.kruise.io', 'NoneOnDryRun'],
      ['sidecarset-validate.sidecarset.kruise.io', 'NoneOnDryRun'],
      ['pod-change.sidecarset.kruise.io', 'NoneOnDryRun'],
      ['pod-eviction.sidecarset.kruise.io', 'None'],
    ]);
  });

  it('asks only for the admission functions\' URLs with --only webhooks, and names the conversion function\'s when the CRD is rendered too', async () => {
    const urls = ['pod-inject', 'sidecarset-default', 'sidecarset-validate', 'pod-change'].flatMap((fn) => [`--url-${fn}`, `https://${fn}.lambda-url.eu-west-1.on.aws/`]);
    const out = docs(await renderManifests([...urls, '--secret-file', secretFile, '--only', 'webhooks']));
    expect(out.flatMap((d) => d.webhooks ?? []).map((h) => h.clientConfig.url.split('/')[2])).toEqual([
      'sidecarset-default.lambda-url.eu-west-1.on.aws',
      'pod-inject.lambda-url.eu-west-1.on.aws',
      'sidecarset-validate.lambda-url.eu-west-1.on.aws',
      'pod-change.lambda-url.eu-west-1.on.aws',
      // pod-eviction: pod-change's function, at its URL.
      'pod-change.lambda-url.eu-west-1.on.aws',
    ]);
    await expect(renderManifests([...urls, '--secret-file', secretFile])).rejects.toThrow('no Function URL for sidecarset-convert');
  });

  it('puts the ControllerRevision RBAC in the configured revision namespace: the flag, else SIDECARSET_REVISION_NAMESPACE, else kruise-system', async () => {
    const placed = async (argv: string[], env: Record<string, string>) =>
      (parseAllDocuments(await renderManifests(['--function-urls', outputsFile, '--secret-file', secretFile, ...argv], env)).map((d) => d.toJS() as unknown) as { kind: string; metadata: { name: string; namespace?: string } }[])
        .filter((d) => ['Namespace', 'Role', 'RoleBinding'].includes(d.kind))
        .map((d) => `${d.kind} ${d.metadata.namespace ?? ''}/${d.metadata.name}`);
    const inNamespace = (ns: string) => [
      `Namespace /${ns}`,
      `Role ${ns}/sidecarset-webhooks-revisions`,
      `RoleBinding ${ns}/sidecarset-webhooks-revisions`,
      `Role ${ns}/sidecarset-status-sync-revisions`,
      `RoleBinding ${ns}/sidecarset-status-sync-revisions`,
      // Its heartbeat Lease, beside the revisions.
      `Role ${ns}/sidecarset-status-sync-lease`,
      `RoleBinding ${ns}/sidecarset-status-sync-lease`,
      // Its Events about SidecarSets are in default, wherever the revisions are.
      'Role default/sidecarset-status-sync-events',
      'RoleBinding default/sidecarset-status-sync-events',
    ];
    expect(await placed([], {})).toEqual(inNamespace('kruise-system'));
    const moved = inNamespace('sidecarset-history');
    expect(await placed([], { SIDECARSET_REVISION_NAMESPACE: 'sidecarset-history' })).toEqual(moved);
    expect(await placed(['--revision-namespace', 'sidecarset-history'], { SIDECARSET_REVISION_NAMESPACE: 'elsewhere' })).toEqual(moved);
    await expect(renderManifests(['--revision-namespace', 'Not_A_Namespace'], {})).rejects.toThrow(/^--revision-namespace must be a namespace name \(a lowercase RFC 1123 label/);
    await expect(renderManifests([], { SIDECARSET_REVISION_NAMESPACE: 'a.b' })).rejects.toThrow(/^SIDECARSET_REVISION_NAMESPACE must be a namespace name .*; got "a.b"$/);
  });

  it('leaves the Namespace out with --no-namespace, so that deleting the manifests cannot delete Kruise\'s namespace', async () => {
    const kinds = async (argv: string[]) => docs(await renderManifests(['--function-urls', outputsFile, '--secret-file', secretFile, ...argv], {})).map((d) => d.kind);
    expect(await kinds([])).toContain('Namespace');
    const without = await kinds(['--no-namespace']);
    expect(without).not.toContain('Namespace');
    // Everything else stays: the Role and RoleBinding still go to the revision namespace.
    expect(without).toEqual((await kinds([])).filter((kind) => kind !== 'Namespace'));
  });

  it('says above each webhook configuration that its URLs are managed by status-sync', async () => {
    const yaml = await renderManifests(['--function-urls', outputsFile, '--secret-file', secretFile, '--only', 'webhooks']);
    const comment = MANAGED_URL_COMMENT.split('\n').map((line) => `#${line}\n`).join('');
    expect(yaml.split(`${comment}\napiVersion: admissionregistration.k8s.io/v1\n`)).toHaveLength(3);
    // The policy and its binding carry no URL: no comment.
    expect(docs(yaml).map((d) => d.kind)).toEqual(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding']);
  });

  it('renders for the local server with its caBundle and secret', async () => {
    const out = docs(await renderManifests(['--local', '--tls-dir', join(dir, 'tls'), '--port', '9443', '--only', 'webhooks']));
    const hooks = out.flatMap((d) => d.webhooks ?? []);
    expect(hooks[0]?.clientConfig.url).toBe(`https://127.0.0.1:9443/sidecarset-default/${secret}`);
    expect(Buffer.from(hooks[0]?.clientConfig.caBundle ?? '', 'base64').toString()).toContain('BEGIN CERTIFICATE');
  });

  it('takes the current secret of a file in the stored JSON form (as Secrets Manager and the local server keep it)', async () => {
    const out = docs(await renderManifests(['--function-urls', outputsFile, '--secret-file', storedFile]));
    const urls = out.flatMap((d) => d.webhooks ?? []).map((w) => w.clientConfig.url);
    expect(urls).toHaveLength(5);
    for (const url of urls) expect(url.endsWith(`/${secret}`)).toBe(true);
  });

  it.each<[string, () => string[], RegExp]>([
    ['no URLs', () => ['--secret-file', secretFile], /no Function URL for sidecarset-default, sidecarset-validate, pod-inject, pod-change, sidecarset-convert/],
    ['no secret', () => ['--url-sidecarset-default', 'https://a/', '--url-sidecarset-validate', 'https://b/', '--url-pod-inject', 'https://c/', '--url-pod-change', 'https://e/', '--url-sidecarset-convert', 'https://d/'], /caller secret is needed/],
    ['a JSON secret file without "current"', () => ['--function-urls', outputsFile, '--secret-file', outputsFile], /the caller secret has no string "current"/],
    ['a predictable secret', () => ['--function-urls', outputsFile, '--secret-file', predictableFile], /the caller secret \(current\) is too predictable.*openssl rand/],
    ['a bad failure policy', () => ['--pod-failure-policy', 'Sometimes'], /must be Fail or Ignore/],
    ['a timeout out of range', () => ['--function-urls', outputsFile, '--secret-file', secretFile, '--timeout', '99'], /timeoutSeconds must be an integer from 1 to 30/],
    ['an unknown argument', () => ['--frobnicate'], /unknown argument --frobnicate/],
    ['an unreadable outputs file', () => ['--function-urls', '/nonexistent.json'], /cannot read outputs file/],
  ])('refuses %s with a clear message', async (_name, argv, message) => {
    const saved = process.env.WEBHOOK_SECRET;
    Reflect.deleteProperty(process.env, 'WEBHOOK_SECRET');
    try {
      await expect(renderManifests(argv())).rejects.toThrow(message);
    } finally {
      if (saved !== undefined) process.env.WEBHOOK_SECRET = saved;
    }
  });
});

describeWithControlPlane('the rendered manifests on a real API server', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startControlPlane();
  }, 30 * 60_000);
  afterAll(async () => {
    await cp.stop();
  });

  const policyPath = '/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies/serverless-sidecarset-inject';
  it.each([
    ['Lambda', () => ['--function-urls', outputsFile, '--secret-file', secretFile, '--pod-failure-policy', 'Ignore']],
    ['local', () => ['--local', '--tls-dir', join(dir, 'tls')]],
  ])('applies cleanly, the injection policy and its binding included (%s)', async (_name, argv) => {
    await cp.apply(await renderManifests(argv()));
    const mutating = await cp.request('admin', 'GET', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/serverless-sidecarset');
    expect(mutating.status).toBe(200);
    const crd = await cp.request('admin', 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/sidecarsets.apps.kruise.io');
    expect(crd.status).toBe(200);
    expect((await cp.request('admin', 'GET', policyPath)).status).toBe(200);
    expect((await cp.request('admin', 'GET', '/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings/serverless-sidecarset-inject')).status).toBe(200);
  });

  it('applies the webhook path cleanly (--injection webhook): pod-inject without matchConditions', async () => {
    await cp.apply(await renderManifests(['--local', '--tls-dir', join(dir, 'tls'), '--injection', 'webhook']));
    const mutating = JSON.parse((await cp.request('admin', 'GET', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/serverless-sidecarset')).body) as { webhooks: Hook[] };
    expect(mutating.webhooks.find((h) => h.name === 'pod-inject.sidecarset.kruise.io')?.matchConditions).toBeUndefined();
  });
});

describe('infra/k8s/rbac.yaml', () => {
  it('lets the functions get and patch only the project\'s own webhook configurations, by name', async () => {
    const rbac = parseAllDocuments(await readFile(join(process.cwd(), 'infra', 'k8s', 'rbac.yaml'), 'utf8')).map((d) => d.toJS() as { kind: string; rules?: { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] }[] });
    const rules = rbac.flatMap((d) => d.rules ?? []).filter((r) => r.apiGroups.includes('admissionregistration.k8s.io') || r.apiGroups.includes('apiextensions.k8s.io'));
    expect(rules).toEqual([
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'], resourceNames: [WEBHOOK_CONFIGURATION_NAME], verbs: ['get', 'patch'] },
      // The CRD's conversion URL carries the same secret: that one CRD, by name.
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: ['sidecarsets.apps.kruise.io'], verbs: ['get', 'patch'] },
    ]);
  });
});
