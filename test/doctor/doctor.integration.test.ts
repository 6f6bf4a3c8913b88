/**
 * `npm run doctor` against the local stack (started in-process as the e2e
 * suites start it): every check holds on a healthy stack; a webhook called
 * with a stale secret and a policy without its binding are each named, with
 * what to do, and fail the run; so is a stopped reconciler (its loop really
 * stopped, and its heartbeat Lease left to run out).
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { runDoctor } from '../../functions/doctor/run.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import { untilInjected } from '../../functions/server/until-injected.ts';
import { parseSingleObject } from '../../lib/kube/yaml-objects.ts';
import { kubeConfigClient, kubeConfigOf } from '../../lib/adapters/kubeconfig.ts';
import { readKubeconfig } from '../../lib/adapters/kubeconfig-reader.ts';
import type { ExpectedStack } from '../../lib/doctor/checks.ts';
import { ADMISSION_FUNCTIONS } from '../../lib/webhooks/registry.ts';
import { ANNOTATION_POLICY_RECORD } from '../../lib/sidecarset/policy-record.ts';
import { WEBHOOK_CONFIGURATION_NAME } from '../../lib/webhook-config/webhook-configurations.ts';

const INTERVAL_MS = 3_000;
/** A set that transfers env from a container an annotation it writes itself names: one the policy leaves to pod-inject. */
const WEBHOOK_SET = `apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: by-webhook}
spec:
  selector: {matchLabels: {app: by-webhook}}
  patchPodMetadata:
    - annotations: {source: app}
  containers:
    - name: agent
      image: busybox:1.37.0
      transferEnv:
        - sourceContainerNameFrom: {fieldRef: {fieldPath: "metadata.annotations['source']"}}
          envName: LANG
`;
const LEASE_PATH = '/apis/coordination.k8s.io/v1/namespaces/kruise-system/leases/serverless-sidecarset-status-sync';

describeWithControlPlane('npm run doctor on the local stack', () => {
  let stack: LocalStack;
  let expected: ExpectedStack;
  const doctor = async (podLabels: Record<string, string> = { app: 'web' }): Promise<{ ok: boolean; lines: string[] }> => {
    const lines: string[] = [];
    const client = kubeConfigClient(kubeConfigOf(await readKubeconfig({ envVar: 'KUBECONFIG_CONTENT', env: { KUBECONFIG_CONTENT: stack.cp.kubeconfig('admin') } })));
    const ok = await runDoctor(client, { expected, namespace: 'default', podLabels, revisionNamespace: 'kruise-system' }, (line) => lines.push(line));
    return { ok, lines };
  };

  const policyInjectsWeb = async (): Promise<boolean> => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe', labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } };
    const res = await stack.cp.request('admin', 'POST', '/api/v1/namespaces/default/pods?dryRun=All', pod);
    const annotations = (JSON.parse(res.body) as { metadata?: { annotations?: Record<string, string> } }).metadata?.annotations ?? {};
    return res.status === 201 && ANNOTATION_POLICY_RECORD in annotations;
  };

  /** Each set's path, generation and status revision: what the policy reads. */
  const setsSummary = async (): Promise<string> => {
    const list = JSON.parse((await stack.cp.request('admin', 'GET', '/apis/apps.kruise.io/v1beta1/sidecarsets')).body) as { items: { metadata: { name: string; generation?: number; annotations?: Record<string, string> }; status?: { observedGeneration?: number; latestRevision?: string } }[] };
    return JSON.stringify(list.items.map((i) => [i.metadata.name, i.metadata.annotations?.['serverless-sidecarset/injection-path'], i.metadata.generation, i.status?.observedGeneration, i.status?.latestRevision]));
  };

  beforeAll(async () => {
    // The reconciler's loop, as npm start runs it: its Lease is valid for three intervals (9 s).
    stack = await startLocalStack({ statusSyncIntervalMs: INTERVAL_MS });
    await stack.cp.apply(await readFile('examples/sidecarset.yaml', 'utf8'));
    // The policy sees a new set once the API server's param cache has it: the dry-run check needs it seen.
    await untilInjected((method, path, body) => stack.cp.request('admin', method, path, body), 'default', parseSingleObject(await readFile('examples/pod.yaml', 'utf8'), 'examples/pod.yaml'));
    // Its first resync waits for the webhooks to be installed: wait for the Lease it renews at the end.
    for (const deadline = Date.now() + 60_000; (await stack.cp.request('admin', 'GET', LEASE_PATH)).status !== 200; ) {
      if (Date.now() > deadline) throw new Error('the reconciler wrote no Lease within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // The policy takes a set once the reconciler recorded its revision (the third test stops the reconciler).
    for (const deadline = Date.now() + 60_000; !(await setsSummary()).includes('"log-agent","policy",1,1,"log-agent-'); ) {
      if (Date.now() > deadline) throw new Error(`the reconciler wrote no status for log-agent within 60 s: ${await setsSummary()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expected = { urls: Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, `${stack.serverUrl}/${fn}/`])), secret: stack.secret };
  }, 5 * 60_000);
  afterAll(async () => {
    await stack.stop();
  });

  it('healthy: one OK line per check, the dry-run pod injected and timed', async () => {
    const { ok, lines } = await doctor();
    expect(lines.filter((l) => !l.startsWith('OK    '))).toEqual([]);
    expect(ok).toBe(true);
    expect(lines).toEqual(expect.arrayContaining([
      expect.stringMatching(/^OK {4}MutatingWebhookConfiguration serverless-sidecarset webhook pod-inject\.sidecarset\.kruise\.io: calls pod-inject with the current secret$/),
      expect.stringMatching(/^OK {4}pod injection in namespace default \(server-side dry run\): injected by log-agent in \d+ ms$/),
      'OK    SidecarSets read in v1alpha1: 1 set(s) read',
      'OK    SidecarSets read in v1beta1: 1 set(s) read',
      'OK    ValidatingAdmissionPolicy sidecarset-status-sync-pod-writes: bound by sidecarset-status-sync-pod-writes',
      expect.stringMatching(/^OK {4}status-sync reconciler: last resync \d+ s ago \(Lease kruise-system\/serverless-sidecarset-status-sync renewTime \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z by status-sync@.+, valid 9 s\)$/),
      'OK    OpenKruise: not installed (no SidecarSet controller of its own runs)',
      // The policy path, npm start's default: the example set is one the policy takes.
      'OK    MutatingAdmissionPolicy serverless-sidecarset-inject: bound by serverless-sidecarset-inject',
      'OK    SidecarSet log-agent: injected by the injection policy (alone on a pod; with other sets, by pod-inject)',
    ]));
    // Nothing was created: the pod was a dry run.
    const pods = JSON.parse((await stack.cp.request('admin', 'GET', '/api/v1/namespaces/default/pods')).body) as { items: unknown[] };
    expect(pods.items).toEqual([]);
  });

  it('a policy without its binding: named, with what to do', async () => {
    const path = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/sidecarset-status-sync-evictions';
    const saved = JSON.parse((await stack.cp.request('admin', 'GET', path)).body) as { metadata: Record<string, unknown> };
    expect((await stack.cp.request('admin', 'DELETE', path)).status).toBe(200);
    try {
      const { ok, lines } = await doctor();
      expect(ok).toBe(false);
      expect(lines.filter((l) => l.startsWith('FAIL'))).toEqual(['FAIL  ValidatingAdmissionPolicy sidecarset-status-sync-evictions: exists but no binding names it: it holds nothing; apply infra/k8s/rbac.yaml again (its binding is there)']);
    } finally {
      await stack.cp.request('admin', 'POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', { ...saved, metadata: { name: saved.metadata.name } });
    }
  });

  // The loop does not start again: the tests after this one run without it (its secret repair would undo theirs).
  it('a stopped reconciler: once its Lease runs out, named with what to do', async () => {
    await stack.statusLoop?.stop();
    const lease = JSON.parse((await stack.cp.request('admin', 'GET', LEASE_PATH)).body) as { spec: { renewTime: string; leaseDurationSeconds: number } };
    expect(lease.spec.leaseDurationSeconds).toBe(9);
    const wait = Date.parse(lease.spec.renewTime) + (lease.spec.leaseDurationSeconds + 1.5) * 1000 - Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));
    const { ok, lines } = await doctor();
    expect(ok).toBe(false);
    expect(lines.filter((l) => l.startsWith('FAIL'))).toEqual([
      expect.stringMatching(/^FAIL {2}status-sync reconciler: last resync 1\d s ago \(Lease kruise-system\/serverless-sidecarset-status-sync renewTime \S+ by status-sync@.+\), longer than its 9 s: the reconciler stopped; check its schedule .+ and its logs$/),
    ]);
  }, 60_000);

  it('a webhook called with a secret that is not the current one: named; a pod the policy injects alone is still injected, one it hands to pod-inject refused', async () => {
    // A set the policy marks pods for: pod-inject's.
    await stack.cp.apply(WEBHOOK_SET);
    await untilInjected((method, p, body) => stack.cp.request('admin', method, p, body), 'default', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe', labels: { app: 'by-webhook' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } });
    // The policy takes log-agent once the reconciler has recorded its revision: wait until it has.
    for (const deadline = Date.now() + 30_000; !(await policyInjectsWeb()); ) {
      if (Date.now() > deadline) throw new Error(`the policy did not inject an app=web pod within 30 s; the sets: ${await setsSummary()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const path = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${WEBHOOK_CONFIGURATION_NAME}`;
    const config = JSON.parse((await stack.cp.request('admin', 'GET', path)).body) as { webhooks: { name: string; clientConfig: { url: string } }[] };
    const index = config.webhooks.findIndex((w) => w.name.startsWith('pod-inject'));
    const url = config.webhooks[index]?.clientConfig.url ?? '';
    const patch = (to: string) => stack.cp.request('admin', 'PATCH', path, [{ op: 'replace', path: `/webhooks/${index}/clientConfig/url`, value: to }], 'application/json-patch+json');
    expect((await patch(`${stack.serverUrl}/pod-inject/${'x'.repeat(64)}`)).status).toBe(200);
    const secretLine = 'FAIL  MutatingWebhookConfiguration serverless-sidecarset webhook pod-inject.sidecarset.kruise.io: calls pod-inject with a secret that is not the current one; apply freshly rendered manifests (npm run -s manifests), or let the reconciler finish the rotation';
    try {
      const policyPod = await doctor();
      expect(policyPod.ok).toBe(false);
      // The reconciler's line is the previous test's stopped loop.
      expect(policyPod.lines.filter((l) => l.startsWith('FAIL') && !l.includes('status-sync reconciler'))).toEqual([secretLine]);
      expect(policyPod.lines).toContainEqual(expect.stringMatching(/^OK {4}pod injection in namespace default \(server-side dry run\): injected by log-agent in \d+ ms$/));
      const webhookPod = await doctor({ app: 'by-webhook' });
      expect(webhookPod.lines.filter((l) => l.startsWith('FAIL') && !l.includes('status-sync reconciler'))).toEqual([
        secretLine,
        expect.stringMatching(/^FAIL {2}pod injection in namespace default \(server-side dry run\): refused in \d+ ms: .*pod-inject/),
      ]);
    } finally {
      await patch(url);
    }
  });
});
