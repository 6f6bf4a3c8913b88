/**
 * The local stack on the injection policy path is ready only once the API
 * server has the policy in force: a SidecarSet stored right after the start
 * injects the pods created after it. Before the stack waited, the API server
 * admitted pods without the new policy for about 1.5 s after the start.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { applyInjectionPolicy, POLICY_PROBE_SET } from '../../functions/server/injection-policy-in-force.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import type { Pod } from '../../lib/kube/types.ts';

const startTimeoutMs = 5 * 60_000;
const SETS = '/apis/apps.kruise.io/v1beta1/sidecarsets';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describeWithControlPlane('the local stack with the injection policy', () => {
  let stack: LocalStack | undefined;

  beforeAll(async () => {
    stack = await startLocalStack({ injection: 'policy', statusSyncIntervalMs: 60_000 });
  }, startTimeoutMs);

  afterAll(async () => {
    await stack?.stop();
  }, startTimeoutMs);

  it('injects a pod created half a second after a set stored as soon as the stack is ready', async () => {
    const cp = stack!.cp;
    const set = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet', metadata: { name: 'first' }, spec: { selector: { matchLabels: { app: 'first' } }, containers: [{ name: 'agent', image: 'agent:1' }] } };
    expect((await cp.request('admin', 'POST', SETS, set)).status).toBe(201);
    // Longer than the API server's watch takes to deliver a set, shorter than the policy took to come in force.
    await sleep(500);
    const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'first', namespace: 'default', labels: { app: 'first' } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
    const res = await cp.request('admin', 'POST', '/api/v1/namespaces/default/pods', pod);
    expect(res.status).toBe(201);
    expect((JSON.parse(res.body) as Pod).spec?.containers.map((c) => c.name)).toEqual(['agent', 'app']);
  });

  it('leaves no trace of its probe SidecarSet: no set, no revision, no Event', async () => {
    const cp = stack!.cp;
    const sets = JSON.parse((await cp.request('admin', 'GET', SETS)).body) as { items: { metadata: { name: string } }[] };
    expect(sets.items.map((s) => s.metadata.name)).not.toContain(POLICY_PROBE_SET);
    const revisions = JSON.parse((await cp.request('admin', 'GET', '/apis/apps/v1/controllerrevisions')).body) as { items: { metadata: { name: string; labels?: Record<string, string> } }[] };
    expect(JSON.stringify(revisions.items)).not.toContain(POLICY_PROBE_SET);
    const events = JSON.parse((await cp.request('admin', 'GET', '/api/v1/events')).body) as { items: unknown[] };
    expect(JSON.stringify(events.items)).not.toContain(POLICY_PROBE_SET);
  });

  it('names the wait that ran out, and deletes its probe SidecarSet even then', async () => {
    const cp = stack!.cp;
    await expect(applyInjectionPolicy(cp, 0)).rejects.toThrow(/the injection policy was not in force 0 ms after it was stored/);
    expect((await cp.request('admin', 'GET', `${SETS}/${POLICY_PROBE_SET}`)).status).toBe(404);
  });
});
