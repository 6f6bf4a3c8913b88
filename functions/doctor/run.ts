/**
 * `npm run -s doctor`: checks a deployed stack, changing nothing (reads and
 * server-side dry runs only), one line per check (lib/doctor/checks.ts);
 * exit 0 only when every check holds.
 */
import type { KubeClient } from '../../lib/adapters/kube-request.ts';
import { readKruiseObjects } from '../../lib/adapters/kube-kruise-presence.ts';
import { readWebhookConfiguration } from '../../lib/adapters/kube-webhook-configurations.ts';
import { readStatusSyncLease } from '../../lib/adapters/kube-lease.ts';
import { answerFinding, findingLine, injectionFinding, leaseFinding, injectionPathFindings, missingWebhookFindings, policyFindings, webhookFindings, type ExpectedPolicy, type ExpectedStack, type Finding, type InstalledPaths } from '../../lib/doctor/checks.ts';
import { arrayOf, objectOf } from '../../lib/kube/json.ts';
import { kruiseControllerSigns } from '../../lib/status-sync/kruise-controller.ts';
import { INJECTION_POLICY_NAME } from '../../lib/webhook-config/injection-policy.ts';
import { POD_INJECT_MATCH_CONDITIONS } from '../../lib/webhook-config/pod-inject-conditions.ts';
import { WEBHOOK_CONFIGURATION_NAME, webhookNamesIn } from '../../lib/webhook-config/webhook-configurations.ts';

/** rbac.yaml's policies; the injection policy joins them where pod-inject is rendered for it ({@link expectedPolicies}). */
export const EXPECTED_POLICIES: readonly ExpectedPolicy[] = [
  { kind: 'ValidatingAdmissionPolicy', name: 'sidecarset-status-sync-pod-writes' },
  { kind: 'ValidatingAdmissionPolicy', name: 'sidecarset-status-sync-evictions' },
  { kind: 'ValidatingAdmissionPolicy', name: 'sidecarset-status-sync-admission-config' },
];

/** The injection policy, expected where pod-inject's webhook carries the policy path's matchConditions. */
const INJECTION_POLICY: ExpectedPolicy = { kind: 'MutatingAdmissionPolicy', name: INJECTION_POLICY_NAME, source: 'the manifests of npm run -s manifests -- --injection policy' };

function expectedPolicies(paths: InstalledPaths): readonly ExpectedPolicy[] {
  return paths.policy ? [...EXPECTED_POLICIES, INJECTION_POLICY] : EXPECTED_POLICIES;
}

const POLICY_PATHS: Readonly<Record<ExpectedPolicy['kind'], { policies: string; bindings: string }>> = {
  ValidatingAdmissionPolicy: { policies: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', bindings: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings' },
  MutatingAdmissionPolicy: { policies: '/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies', bindings: '/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings' },
};

export interface DoctorOptions {
  expected: ExpectedStack;
  namespace: string;
  podLabels: Readonly<Record<string, string>>;
  policies?: readonly ExpectedPolicy[];
  /** Where the reconciler's heartbeat Lease is: its revision namespace (SIDECARSET_REVISION_NAMESPACE, default kruise-system). */
  revisionNamespace: string;
  /** Now, for the Lease's age. Default Date.now. */
  nowMs?: () => number;
}

const items = (body: unknown): unknown[] => arrayOf(objectOf(body)?.items);

async function get(client: KubeClient, path: string, operation: string): Promise<{ status: number; body: unknown }> {
  return client.request({ method: 'GET', path, operation });
}

/** Pod-inject's webhook, when rendered for the injection policy, is called only on what its matchConditions name. */
const POLICY_CONDITIONS = new Set(POD_INJECT_MATCH_CONDITIONS.map((c) => c.name));

async function webhooksCheck(client: KubeClient, expected: ExpectedStack): Promise<{ findings: Finding[]; paths: InstalledPaths }> {
  const findings: Finding[] = [];
  const paths: InstalledPaths = { podWebhook: false, policy: false };
  for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'] as const) {
    const configuration = await readWebhookConfiguration(client, kind, WEBHOOK_CONFIGURATION_NAME, undefined);
    if (kind === 'MutatingWebhookConfiguration') {
      const podInject = arrayOf(objectOf(configuration)?.webhooks).find((w) => /pod-inject/.test(JSON.stringify(objectOf(w)?.clientConfig ?? '')));
      paths.podWebhook = podInject !== undefined;
      paths.policy = arrayOf(objectOf(podInject)?.matchConditions).some((c) => POLICY_CONDITIONS.has(String(objectOf(c)?.name)));
    }
    findings.push(...webhookFindings(kind, WEBHOOK_CONFIGURATION_NAME, configuration, expected));
    findings.push(...missingWebhookFindings(kind, WEBHOOK_CONFIGURATION_NAME, configuration, webhookNamesIn(kind)));
  }
  return { findings, paths };
}

async function policiesCheck(client: KubeClient, expected: readonly ExpectedPolicy[]): Promise<Finding[]> {
  const policies = new Map<string, unknown[]>();
  const bindings = new Map<string, unknown[]>();
  for (const kind of new Set(expected.map((p) => p.kind))) {
    policies.set(kind, items((await get(client, POLICY_PATHS[kind].policies, `list ${kind}s`)).body));
    bindings.set(kind, items((await get(client, POLICY_PATHS[kind].bindings, `list ${kind}Bindings`)).body));
  }
  return policyFindings(expected, policies, bindings);
}

async function injectionCheck(client: KubeClient, namespace: string, labels: Readonly<Record<string, string>>): Promise<Finding> {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'doctor-', namespace, labels }, spec: { containers: [{ name: 'doctor', image: 'registry.k8s.io/pause:3.10' }] } };
  const started = Date.now();
  const answer = await client.request({ method: 'POST', path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`, query: { dryRun: 'All' }, body: pod, operation: 'dry-run create a pod' });
  return injectionFinding(namespace, answer.status, answer.body, Date.now() - started);
}

async function conversionCheck(client: KubeClient): Promise<Finding[]> {
  const fix = 'the conversion webhook (sidecarset-convert) does not answer: check the CRD\'s spec.conversion URL (npm run -s manifests -- --only crd) and the function';
  const out: Finding[] = [];
  for (const version of ['v1alpha1', 'v1beta1']) {
    const answer = await get(client, `/apis/apps.kruise.io/${version}/sidecarsets`, `list SidecarSets in ${version}`);
    out.push(answerFinding(`SidecarSets read in ${version}`, answer.status, answer.body, fix, `${items(answer.body).length} set(s) read`));
  }
  return out;
}

async function kruiseFinding(client: KubeClient): Promise<Finding> {
  const objects = await readKruiseObjects(client);
  const signs = kruiseControllerSigns(objects.deployment, objects.webhooks);
  return { check: 'OpenKruise', ok: true, detail: signs.length === 0 ? 'not installed (no SidecarSet controller of its own runs)' : `installed: ${signs.join('; ')} (see docs/MIGRATION.md)` };
}

/** Every check, in order; the caller prints them and exits 0 only when all hold. */
export async function runDoctor(client: KubeClient, options: DoctorOptions, say: (line: string) => void): Promise<boolean> {
  const findings: Finding[] = [];
  const tell = (list: readonly Finding[]) => {
    for (const f of list) {
      findings.push(f);
      say(findingLine(f));
    }
  };
  const webhooks = await webhooksCheck(client, options.expected);
  tell(webhooks.findings);
  tell([await injectionCheck(client, options.namespace, options.podLabels)]);
  tell(await conversionCheck(client));
  tell(await policiesCheck(client, options.policies ?? expectedPolicies(webhooks.paths)));
  tell([leaseFinding(options.revisionNamespace, await readStatusSyncLease(client, options.revisionNamespace), (options.nowMs ?? Date.now)())]);
  tell([await kruiseFinding(client)]);
  tell(injectionPathFindings(items((await get(client, '/apis/apps.kruise.io/v1beta1/sidecarsets', 'list SidecarSets')).body), webhooks.paths));
  return findings.every((f) => f.ok);
}
