/**
 * The local stack's injection policy, applied and waited for until it is in
 * force. The API server admits pods without a new policy until its policy
 * source's next refresh (every second) has started the informer of the
 * policy's params, and then without a new set until that informer's watch
 * delivers it: about 1.5 s after the policy is stored, and nothing in the API
 * shows either. A probe SidecarSet shows both: once a dry-run pod it selects
 * comes back marked by the policy, a set stored later is seen too.
 *
 * It runs before the webhooks and the reconciler see SidecarSets, so the
 * probe leaves nothing behind (no status, no revision, no Event).
 */
import { stringify } from 'yaml';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD } from '../../lib/sidecarset/policy-record.ts';
import { excludedNamespaces, injectableNamespaces } from '../../lib/webhook-config/webhook-configurations.ts';
import { renderInjectionPolicy } from '../../lib/webhook-config/injection-policy.ts';

export const POLICY_PROBE_SET = 'serverless-sidecarset-policy-probe';
const PROBE_LABEL = 'serverless-sidecarset/policy-probe';
const SETS = '/apis/apps.kruise.io/v1beta1/sidecarsets';
/** A namespace every cluster has and the policy's binding does not exclude. */
const PROBE_NAMESPACE = 'default';
const DEFAULT_TIMEOUT_MS = 30_000;
const RETRY_MS = 25;

export async function applyInjectionPolicy(cp: ControlPlane, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<void> {
  await cp.apply(renderInjectionPolicy(injectableNamespaces(excludedNamespaces())).map((m) => stringify(m)).join('---\n'));
  const created = await cp.request('admin', 'POST', SETS, probeSet());
  if (created.status !== 201) throw new Error(`cannot create the injection policy's probe SidecarSet ${POLICY_PROBE_SET}: ${created.status} ${created.body.slice(0, 300)}`);
  const acted = untilPolicyActs(cp, timeoutMs);
  await acted.catch(() => undefined);
  // The probe goes either way; a failed wait is reported before a failed delete.
  const deleted = await cp.request('admin', 'DELETE', `${SETS}/${POLICY_PROBE_SET}`);
  await acted;
  if (deleted.status !== 200 && deleted.status !== 404) throw new Error(`cannot delete the injection policy's probe SidecarSet ${POLICY_PROBE_SET}: ${deleted.status} ${deleted.body.slice(0, 300)}`);
}

/** Dry-run pods the probe set selects, until one comes back marked (or injected) by the policy. */
async function untilPolicyActs(cp: ControlPlane, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = '';
  for (let i = 0; performance.now() < deadline; i++) {
    const res = await cp.request('admin', 'POST', `/api/v1/namespaces/${PROBE_NAMESPACE}/pods?dryRun=All`, probePod(i));
    if (res.status === 201) {
      const annotations = (JSON.parse(res.body) as { metadata?: { annotations?: Record<string, string> } }).metadata?.annotations ?? {};
      if (ANNOTATION_INJECT_MARK in annotations || ANNOTATION_POLICY_RECORD in annotations) return;
      last = 'admitted without the policy';
    } else last = `${res.status} ${res.body.slice(0, 300)}`;
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
  throw new Error(`the injection policy was not in force ${timeoutMs} ms after it was stored (a dry-run pod its probe SidecarSet selects, last: ${last})`);
}

function probeSet(): Record<string, unknown> {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name: POLICY_PROBE_SET, labels: { 'app.kubernetes.io/part-of': 'serverless-sidecarset' } },
    spec: { selector: { matchLabels: { [PROBE_LABEL]: 'true' } }, containers: [{ name: 'probe', image: 'probe:1' }] },
  };
}

function probePod(i: number): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${POLICY_PROBE_SET}-${i}`, namespace: PROBE_NAMESPACE, labels: { [PROBE_LABEL]: 'true' } },
    spec: { containers: [{ name: 'app', image: 'app:1' }] },
  };
}
