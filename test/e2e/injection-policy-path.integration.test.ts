/**
 * The policy path end to end (`npm start -- --injection policy`'s stack):
 * the injection policy and pod-inject's webhook (with its matchConditions)
 * both installed. A pod one eligible set selects is injected by the policy
 * alone; a pod several sets select, or one a webhook-path set selects, is
 * injected by pod-inject as if the policy were not there; a forged fence on
 * a pod no set selects still reaches pod-inject and is removed. Each pod is
 * compared with pod-inject's core answer for the same pod and sets. With
 * the webhook server stopped, a pod one eligible set selects is still
 * created, injected, started and counted by the reconciler.
 */
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD } from '../../lib/sidecarset/policy-record.ts';
import { ANNOTATION_FENCE_CONTAINERS } from '../../lib/sidecarset/rollout-fence.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { comparable, dryRunPod, storeSet } from '../webhook-config/injection-policy-differential.ts';

const NS = 'policy-path';

function set(name: string, extra: Record<string, unknown> = {}): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { [`use-${name}`]: 'yes' } },
      containers: [{ name: `${name}-agent`, image: `${name}:1`, volumeMounts: [{ name: `${name}-data`, mountPath: `/${name}` }], shareVolumePolicy: { type: 'enabled' } }],
      volumes: [{ name: `${name}-data`, emptyDir: {} }],
      ...extra,
    },
  };
}

function pod(name: string, uses: string[], annotations: Record<string, string> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: Object.fromEntries(uses.map((u) => [`use-${u}`, 'yes'])), annotations },
    spec: { volumes: [{ name: 'www', emptyDir: {} }], containers: [{ name: 'app', image: 'nginx:1', volumeMounts: [{ name: 'www', mountPath: '/www' }] }] },
  };
}

describeWithControlPlane('the policy path, policy and pod-inject together', () => {
  let stack: LocalStack;
  const stored = new Map<string, SidecarSet>();

  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    // The policy path is the default; named here because this suite is about it. The reconciler and a test kubelet run, to count pods.
    stack = await startLocalStack({ injection: 'policy', statusSyncIntervalMs: 1000, testKubelet: { namespaces: [NS], readyDelayMs: 100 } });
    expect((await stack.cp.request('admin', 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status).toBe(201);
    const hotUpgrade = { upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } };
    const hot = set('hot', { patchPodMetadata: [{ patchPolicy: 'Overwrite', annotations: { 'example.com/hot': 'on' } }] });
    (hot.spec as { containers: Record<string, unknown>[] }).containers[0] = { ...(hot.spec as { containers: Record<string, unknown>[] }).containers[0], ...hotUpgrade };
    // transferEnv from a container named by an annotation: the policy's, unless the set writes that annotation itself.
    const fromAnnotation = (name: string, extra: Record<string, unknown> = {}): SidecarSet => {
      const made = set(name, extra);
      const containers = (made.spec as { containers: Record<string, unknown>[] }).containers;
      containers[0] = { ...containers[0], transferEnv: [{ sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.annotations['example.com/source']" } }, envName: 'LANG' }] };
      return made;
    };
    const writesSource = { patchPodMetadata: [{ annotations: { 'example.com/source': 'app' } }] };
    const sets = [set('alpha'), set('beta', { patchPodMetadata: [{ annotations: { 'example.com/beta': 'on' } }] }), hot, fromAnnotation('anno', writesSource), fromAnnotation('reader'), set('writer', writesSource)];
    for (const s of sets) {
      stored.set(s.metadata?.name ?? '', await storeSet(stack.cp, s));
    }
    await new Promise((resolve) => setTimeout(resolve, 3000));
  }, 300_000);

  afterAll(async () => {
    await stack.stop();
  });

  /** The pod created (dryRun) through the stack, and pod-inject's core answer for it through the same API server. */
  async function both(p: Pod, sets: string[]): Promise<{ created: Pod; expected: Pod }> {
    const created = await dryRunPod(stack.cp, p);
    const answer = injectPod({ pod: p, namespace: NS, sidecarSets: sets.map((s) => stored.get(s) as SidecarSet), namespaceLabels: new Map(), now: new Date() }).pod;
    const expected = await dryRunPod(stack.cp, answer);
    if (created.pod === undefined || expected.pod === undefined) throw new Error(`refused: ${created.message ?? expected.message ?? ''}`);
    return { created: created.pod, expected: expected.pod };
  }

  it('records the paths the defaulting webhook decided', () => {
    expect(stored.get('alpha')?.metadata?.annotations?.['serverless-sidecarset/injection-path']).toBe('policy');
    expect(stored.get('hot')?.metadata?.annotations?.['serverless-sidecarset/injection-path']).toBe('policy');
    expect(stored.get('anno')?.metadata?.annotations?.['serverless-sidecarset/injection-path']).toBe('webhook');
    expect(stored.get('reader')?.metadata?.annotations?.['serverless-sidecarset/injection-path']).toBe('policy');
  });

  it('injects a pod one eligible set selects by the policy alone', async () => {
    const { created, expected } = await both(pod('one', ['alpha']), ['alpha']);
    expect(created.metadata?.annotations?.[ANNOTATION_POLICY_RECORD]).toBe('set=alpha;base=;before=alpha-agent;after=;initBefore=;initAfter=;volumes=alpha-data;imagePullSecrets=;annotations=;reads=');
    expect(comparable(created)).toEqual(comparable(expected));
  });

  it('injects a pod two eligible sets select by the policy alone, as pod-inject does', async () => {
    const { created, expected } = await both(pod('two', ['alpha', 'beta']), ['alpha', 'beta']);
    expect(created.metadata?.annotations?.[ANNOTATION_POLICY_RECORD]).toBe(
      'set=alpha;base=;before=alpha-agent;after=;initBefore=;initAfter=;volumes=alpha-data;imagePullSecrets=;annotations=;reads=|set=beta;base=;before=beta-agent;after=;initBefore=;initAfter=;volumes=beta-data;imagePullSecrets=;annotations=example.com/beta;reads=',
    );
    expect(comparable(created)).toEqual(comparable(expected));
  });

  it.each([
    ['a HotUpgrade set alone', ['hot']],
    ['a HotUpgrade set beside two others', ['alpha', 'beta', 'hot']],
  ])('injects a pod %s selects by the policy alone: the pair, its version env and annotations, as pod-inject does', async (_what, sets) => {
    const { created, expected } = await both(pod(`hot-${sets.join('-')}`, sets), sets);
    const annotations = created.metadata?.annotations ?? {};
    expect(annotations[ANNOTATION_INJECT_MARK]).toBeUndefined();
    expect(annotations[ANNOTATION_POLICY_RECORD]).toContain('set=hot;base=;before=hot-agent-1,hot-agent-2;');
    expect(annotations['kruise.io/sidecarset-working-hotupgrade-container']).toBe('{"hot-agent":"hot-agent-1"}');
    expect(created.spec?.containers.map((c) => c.name)).toContain('hot-agent-2');
    expect(comparable(created)).toEqual(comparable(expected));
  });

  it.each([
    ['an eligible set and a webhook-path set', ['alpha', 'anno']],
    ['a webhook-path set alone', ['anno']],
    ['four sets', ['alpha', 'beta', 'hot', 'anno']],
  ])('injects a pod %s select as pod-inject alone does', async (_what, sets) => {
    const { created, expected } = await both(pod(`many-${sets.join('-')}`, sets), sets);
    const annotations = created.metadata?.annotations ?? {};
    expect(annotations[ANNOTATION_INJECT_MARK]).toBeUndefined();
    expect(annotations[ANNOTATION_POLICY_RECORD]).toBeUndefined();
    expect(isDeepStrictEqual(comparable(created), comparable(expected))).toBe(true);
  });

  it.each([
    ['a set whose transferEnv reads the pod\'s annotation', ['reader'], { 'example.com/source': 'app' }],
    ['a reader and a set writing what it reads (order-free: the writer first, or the reader first and the pod marked)', ['reader', 'writer'], {}],
  ])('injects a pod %s selects as pod-inject does', async (_what, sets, annotations: Record<string, string>) => {
    const p = pod(`reads-${sets.join('-')}`, sets, annotations);
    p.spec = { ...p.spec, containers: (p.spec?.containers ?? []).map((c) => ({ ...c, env: [{ name: 'LANG', value: 'C.UTF-8' }] })) };
    const { created, expected } = await both(p, sets);
    expect(created.metadata?.annotations?.[ANNOTATION_INJECT_MARK]).toBeUndefined();
    expect(created.spec?.containers.find((c) => c.name === 'reader-agent')?.env).toContainEqual({ name: 'LANG', value: 'C.UTF-8' });
    expect(comparable(created)).toEqual(comparable(expected));
  });

  it('records the annotations a set read, so that a set evaluated later and writing one marks the pod', async () => {
    const p = pod('reads-alone', ['reader'], { 'example.com/source': 'app' });
    const { created } = await both(p, ['reader']);
    expect(created.metadata?.annotations?.[ANNOTATION_POLICY_RECORD]).toContain(';reads=example.com/source');
  });

  it('still removes a forged fence from a pod no set selects', async () => {
    const created = await dryRunPod(stack.cp, pod('forged', [], { [ANNOTATION_FENCE_CONTAINERS]: 'app' }));
    expect(created.pod?.metadata?.annotations?.[ANNOTATION_FENCE_CONTAINERS]).toBeUndefined();
  });

  // Last: the webhook server is stopped, as when the functions are unreachable (the reconciler and the kubelet run on).
  it('creates, injects and counts pods eligible sets select with the webhook server stopped, and refuses one that needs pod-inject (failurePolicy Fail)', async () => {
    await stack.stopServer();
    const created = await stack.cp.request('admin', 'POST', `/api/v1/namespaces/${NS}/pods`, pod('down-one', ['alpha']));
    expect(created.status).toBe(201);
    const stored = JSON.parse(created.body) as Pod;
    expect(stored.spec?.containers.map((c) => c.name)).toEqual(['alpha-agent', 'app']);
    expect(stored.metadata?.annotations?.[ANNOTATION_POLICY_RECORD]).toBeDefined();
    const two = await dryRunPod(stack.cp, pod('down-two', ['alpha', 'beta']));
    expect(two.pod?.spec?.containers.map((c) => c.name)).toEqual(['alpha-agent', 'beta-agent', 'app']);
    const needs = await stack.cp.request('admin', 'POST', `/api/v1/namespaces/${NS}/pods`, pod('down-anno', ['alpha', 'anno']));
    expect(needs.status).toBeGreaterThanOrEqual(500);
    expect(needs.body).toContain('pod-inject.sidecarset.kruise.io');
    // Read in the stored version: v1alpha1 would need the (stopped) conversion webhook.
    expect(await countsOf('alpha')).toEqual({ matchedPods: 1, updatedPods: 1, readyPods: 1, updatedReadyPods: 1 });
  }, 60_000);

  /** The set's counts once the reconciler has counted one pod ready, else after 30 s as they are. */
  async function countsOf(name: string): Promise<Record<string, unknown>> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await stack.cp.request('admin', 'GET', `/apis/apps.kruise.io/v1beta1/sidecarsets/${name}`);
      const status = (JSON.parse(res.body) as SidecarSet).status ?? {};
      const counts = { matchedPods: status.matchedPods, updatedPods: status.updatedPods, readyPods: status.readyPods, updatedReadyPods: status.updatedReadyPods };
      if (status.readyPods === 1 || Date.now() > deadline) return counts;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
});
