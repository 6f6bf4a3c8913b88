/**
 * The reconciler's evictions on a real kube-apiserver, under the eviction
 * policy as `npm run manifests -- --exclude-namespace tools` renders it
 * (issue 45, item 5): refused in every namespace the rendered webhook
 * configurations keep from pod-inject, the deployment's own included,
 * admitted elsewhere (with a uid precondition).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane, type ControlPlaneResponse } from '../../control-plane/harness.ts';
import { renderManifests } from '../../functions/render-manifests/main.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { FUNCTION_NAMES } from '../../lib/webhooks/registry.ts';
import { createNamespace, createPod, podPath } from '../../testkit/cluster-pods.ts';

const POLICY = 'sidecarset-status-sync-evictions';
const SECRET = randomBytes(32).toString('base64url');

describeWithControlPlane('the reconciler’s evictions under the rendered eviction policy', () => {
  let controlPlane: ControlPlane | undefined;
  const cp = (): ControlPlane => {
    if (controlPlane === undefined) throw new Error('the control plane did not start');
    return controlPlane;
  };
  let seq = 0;
  const plainPod = (namespace: string): Promise<Pod> => createPod(cp(), { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${seq++}`, namespace }, spec: { containers: [{ name: 'app', image: 'app:1' }] } });
  const evict = (pod: Pod): Promise<ControlPlaneResponse> => {
    const [namespace, name] = [pod.metadata?.namespace ?? '', pod.metadata?.name ?? ''];
    return cp().request('status-sync', 'POST', `${podPath(namespace, name)}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace }, deleteOptions: { preconditions: { uid: pod.metadata?.uid } } });
  };

  beforeAll(async () => {
    controlPlane = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    for (const ns of ['tools', 'shop']) await createNamespace(controlPlane, ns);
    const urls = FUNCTION_NAMES.flatMap((fn) => [`--url-${fn}`, `https://127.0.0.1:9/${fn}`]);
    const dir = await mkdtemp(join(tmpdir(), 'eviction-policy-'));
    await writeFile(join(dir, 'secret'), SECRET, { mode: 0o600 });
    const rendered = await renderManifests([...urls, '--secret-file', join(dir, 'secret'), '--exclude-namespace', 'tools'], {});
    await rm(dir, { recursive: true, force: true });
    // The policies alone: the webhook configurations would point the API server at nothing.
    const policies = parseAllDocuments(rendered).map((d) => d.toJS() as { kind?: string }).filter((o) => o.kind?.startsWith('ValidatingAdmissionPolicy') === true);
    await controlPlane.apply(policies.map((o) => JSON.stringify(o)).join('\n---\n'));
    // The rendered policy replaces the one the harness installed from rbac.yaml through a watch: wait until tools is refused.
    for (const deadline = Date.now() + 30_000; ; ) {
      const res = await evict(await plainPod('tools'));
      if (res.status === 422 && res.body.includes(POLICY)) break;
      if (Date.now() > deadline) throw new Error(`the rendered eviction policy is not in force after 30 s: ${res.status} ${res.body}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 30 * 60_000);

  afterAll(async () => {
    await controlPlane?.stop();
  });

  it.each(['tools', 'kube-system', 'kube-public', 'kube-node-lease'])('refuses an eviction in %s, which the rendered configuration keeps from pod-inject', async (namespace) => {
    const res = await evict(await plainPod(namespace));
    expect([res.status, (JSON.parse(res.body) as { message?: string }).message]).toEqual([422, expect.stringContaining('may not evict pods where the pod webhook is never called')]);
  });

  it('admits one in a namespace pod-inject serves', async () => {
    expect((await evict(await plainPod('shop'))).status).toBe(201);
  });
});
