/**
 * Whether a cluster serves MutatingAdmissionPolicy v1 (npm start --kubeconfig chooses its path by it), and whether
 * the injection policy is installed (npm run -s status's PATH column), against the real v1.36 API server.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { stringify } from 'yaml';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane, type ControlPlaneUser } from '../../control-plane/harness.ts';
import { mutatingAdmissionPolicyInstalled, servesMutatingAdmissionPolicy } from '../../lib/adapters/kube-admission-policy-support.ts';
import { kubeConfigClient, kubeConfigOf } from '../../lib/adapters/kubeconfig.ts';
import { readKubeconfig } from '../../lib/adapters/kubeconfig-reader.ts';
import type { KubeClient } from '../../lib/adapters/kube-request.ts';
import { INJECTION_POLICY_NAME, renderInjectionPolicy } from '../../lib/webhook-config/injection-policy.ts';
import { excludedNamespaces, injectableNamespaces } from '../../lib/webhook-config/webhook-configurations.ts';
import { crdPath, waitForCrd } from '../../functions/server/local-stack.ts';
import { readFile } from 'node:fs/promises';

describeWithControlPlane('the injection policy API on a real API server', () => {
  let cp: ControlPlane;
  const clientAs = async (user: ControlPlaneUser): Promise<KubeClient> =>
    kubeConfigClient(kubeConfigOf(await readKubeconfig({ envVar: 'KUBECONFIG_CONTENT', env: { KUBECONFIG_CONTENT: cp.kubeconfig(user) } })), { retryDelaysMs: [] });

  beforeAll(async () => {
    cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await cp.apply(await readFile(crdPath, 'utf8'));
    await waitForCrd(cp, 'sidecarsets.apps.kruise.io');
  }, 30 * 60_000);

  afterAll(async () => {
    await cp.stop();
  });

  it('finds MutatingAdmissionPolicy served in admissionregistration.k8s.io/v1 (Kubernetes 1.36), for any identity', async () => {
    expect(await servesMutatingAdmissionPolicy(await clientAs('admin'))).toBe(true);
    expect(await servesMutatingAdmissionPolicy(await clientAs('webhooks'))).toBe(true);
  });

  it('tells the injection policy absent, then installed; and unknown to an identity that may not read it', async () => {
    const admin = await clientAs('admin');
    expect(await mutatingAdmissionPolicyInstalled(admin, INJECTION_POLICY_NAME)).toBe(false);
    await cp.apply(renderInjectionPolicy(injectableNamespaces(excludedNamespaces())).map((m) => stringify(m)).join('---\n'));
    expect(await mutatingAdmissionPolicyInstalled(admin, INJECTION_POLICY_NAME)).toBe(true);
    expect(await mutatingAdmissionPolicyInstalled(await clientAs('webhooks'), INJECTION_POLICY_NAME)).toBeUndefined();
  });
});
