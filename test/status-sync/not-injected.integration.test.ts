/**
 * Pods a SidecarSet applies to but never injected, in two namespaces, told
 * on a real kube-apiserver by a reconcile composed as on AWS, as the
 * reconciler's own identity (so its RBAC must allow each Event where it is
 * written): the SidecarSet's Event (in `default`) names no pod, each
 * namespace gets one Event on one of its own pods naming its pods only, and
 * no Event in one namespace names a pod of another.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { composeStatusSync } from '../../functions/status-sync/compose.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { forCreate, SIDECARSETS_PATH } from '../../testkit/bench/cluster.ts';
import { createNamespace, createPod } from '../../testkit/cluster-pods.ts';
import { startRolloutCluster, type RolloutCluster } from '../../testkit/faults/rollout-fixture.ts';
import { capturingLogger } from '../../testkit/reviews.ts';

const PODS: Record<string, string[]> = { 'team-a': ['alpha-1', 'alpha-2'], 'team-b': ['bravo-1'] };

interface Event {
  metadata: { namespace: string };
  type: string;
  reason: string;
  message: string;
  involvedObject: { kind: string; namespace?: string; name: string; uid?: string };
}

describeWithControlPlane('uninjected pods told per namespace on a real API server', () => {
  let cluster: RolloutCluster;
  const uids = new Map<string, string>();

  beforeAll(async () => {
    cluster = await startRolloutCluster({ readyDelayMs: 300 });
    const set = defaultSidecarSet({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'agent' },
      spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'agent', image: 'agent:1.0' }] },
    });
    const created = await cluster.cp.request('admin', 'POST', SIDECARSETS_PATH, forCreate(set));
    expect(created.status).toBe(201);
    // Pods created in the set's second count as older than it, which it records no Event about.
    await new Promise((r) => setTimeout(r, 1_100));
    for (const [namespace, names] of Object.entries(PODS)) {
      await createNamespace(cluster.cp, namespace);
      // No pod-inject webhook runs here: the pods are created without the sidecar, as when it was unreachable.
      for (const name of names) {
        const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
        uids.set(name, (await createPod(cluster.cp, pod)).metadata?.uid ?? '');
      }
    }
  }, 30 * 60_000);

  afterAll(async () => {
    await cluster.stop();
  });

  it('writes the set’s Event with counts only, and one Event per namespace on its own pod, naming only its pods', async () => {
    // As the reconciler's own identity (infra/k8s/rbac.yaml's sidecarset-status-sync group, nothing more): its
    // ClusterRole's `create` on events must let it write in `default` and in each namespace holding such pods.
    const statusSync = await composeStatusSync({ KUBECONFIG_CONTENT: cluster.cp.kubeconfig('status-sync') }, { logger: capturingLogger().logger });
    const result = await statusSync.resync();
    expect(result.errors).toEqual([]);
    expect(result.notInjected).toEqual({ agent: 3 });

    const listed = await cluster.cp.request('admin', 'GET', '/api/v1/events');
    expect(listed.status).toBe(200);
    const events = (JSON.parse(listed.body) as { items: Event[] }).items.filter((e) => e.reason === 'PodsNotInjected' || e.reason === 'PodNotInjected');
    const onSet = events.filter((e) => e.involvedObject.kind === 'SidecarSet');
    expect(onSet).toEqual([expect.objectContaining({ metadata: expect.objectContaining({ namespace: 'default' }), type: 'Warning', reason: 'PodsNotInjected' })]);
    expect(onSet[0]?.message).toMatch(/^3 pods match this SidecarSet but were created without its sidecars .*, in 2 namespaces; recreate them to inject\. /);

    const onPods = events.filter((e) => e.involvedObject.kind === 'Pod').sort((a, b) => (a.metadata.namespace < b.metadata.namespace ? -1 : 1));
    expect(onPods.map((e) => [e.metadata.namespace, e.involvedObject.namespace, e.involvedObject.name, e.involvedObject.uid, e.type, e.reason])).toEqual([
      ['team-a', 'team-a', 'alpha-1', uids.get('alpha-1'), 'Warning', 'PodNotInjected'],
      ['team-b', 'team-b', 'bravo-1', uids.get('bravo-1'), 'Warning', 'PodNotInjected'],
    ]);
    expect(onPods[0]?.message).toMatch(/^2 pods in this namespace match SidecarSet agent .*: alpha-1, alpha-2$/);
    expect(onPods[1]?.message).toMatch(/^1 pod in this namespace matches SidecarSet agent .*: bravo-1$/);

    // The property itself: no Event, wherever it is, names a pod of another namespace.
    for (const event of events) {
      for (const [namespace, names] of Object.entries(PODS)) {
        if (namespace === event.metadata.namespace) continue;
        for (const name of names) expect(`${event.metadata.namespace}: ${event.message}`).not.toContain(name);
      }
    }
  });
});
