import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import { planRollout } from '../../lib/rollout/plan.ts';
import { waitingMessage } from '../../lib/rollout/batch.ts';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { rolloutState } from '../../lib/status-sync/rollout-state.ts';
import { namespacesNeeded, podScopes, scopeKey, viewRow, viewRows } from '../../lib/status-view/rows.ts';
import { applyPatch } from '../../lib/admission/json-patch-apply.ts';
import { podUpdatePatch } from '../../lib/rollout/pod-patch.ts';
import { NO_NAMESPACES, rolloutPod, rolloutSet, type PodOptions } from '../rollout/fixtures.ts';
import { hotSet, injected, kubelet } from '../rollout/hot-fixtures.ts';

const setWith = (strategy: SidecarSetUpdateStrategy, name = 'logs'): SidecarSet => rolloutSet({ name, strategy: { type: 'RollingUpdate', ...strategy } });
const podsFor = (set: SidecarSet, pods: PodOptions[]): Pod[] => pods.map((o) => rolloutPod(set, o));
const three = (set: SidecarSet) => podsFor(set, [{ name: 'a' }, { name: 'b' }, { name: 'c' }]);

describe('a set’s row', () => {
  it.each<[string, SidecarSetUpdateStrategy, (set: SidecarSet) => Pod[], string, string, boolean]>([
    ['three old pods, maxUnavailable 1: one due, then the limit', {}, three, 'Progressing',
      '1 pod(s) due for update; maxUnavailable 1 reached: the next pods wait until updated ones are ready (0 updated and not ready before this reconcile)', true],
    ['an updated pod restarting holds the next batch', {}, (s) => podsFor(s, [{ name: 'a', updated: true, ready: false }, { name: 'b' }]), 'Progressing',
      'maxUnavailable 1 reached: the next pods wait until updated ones are ready (1 updated and not ready before this reconcile: Restarting: 1 pod(s) (default/a))', true],
    ['room for every pod: due, no limit reached', { maxUnavailable: 5 }, three, 'Progressing', '3 pod(s) due for update', true],
    ['every pod updated', {}, (s) => podsFor(s, [{ name: 'a', updated: true }]), 'Finished', 'finished: every matched pod runs the current sidecars', false],
    ['no pod matched', {}, () => [], 'Finished', 'finished: every matched pod runs the current sidecars', false],
    ['NotUpdate', { type: 'NotUpdate' }, three, 'NotUpdate', 'updateStrategy.type is NotUpdate: running pods keep their sidecars', false],
    ['paused', { paused: true }, three, 'Paused', 'paused (updateStrategy.paused)', true],
    ['partition holds the rest', { partition: 2, maxUnavailable: 5 }, three, 'Waiting', '1 pod(s) due for update; 2 pod(s) held back by partition', true],
    ['partition holds every pod', { partition: 3 }, three, 'Waiting', '3 pod(s) held back by partition', true],
    ['a pod outside updateStrategy.selector', { selector: { matchLabels: { canary: 'true' } } }, (s) => podsFor(s, [{ name: 'a' }]), 'Waiting',
      '1 pod(s) outside updateStrategy.selector', true],
    ['a pod whose other fields changed', {}, (s) => podsFor(s, [{ name: 'a', otherFields: true }]), 'Blocked',
      '1 pod(s) not upgradable because fields other than the image changed (command, imagePullPolicy, terminationMessagePath, terminationMessagePolicy, volumeMounts): recreate them', true],
    ['maxUnavailable that is no number', { maxUnavailable: 'lots' }, three, 'Blocked', expect.stringMatching(/^cannot roll: updateStrategy\.maxUnavailable/) as unknown as string, true],
  ])('%s: %s', (_d, strategy, pods, state, why, rolling) => {
    const row = viewRow(setWith(strategy), pods(setWith(strategy)), NO_NAMESPACES);
    expect(row).toMatchObject({ name: 'logs', state, why, rolling });
  });

  it('a HotUpgrade pod whose new container runs ready is due for its flip, and the set is still progressing', () => {
    const set = hotSet('mesh:v2');
    const upgraded = kubelet(applyPatch(injected('mesh:v1', 'a'), podUpdatePatch({ pod: injected('mesh:v1', 'a'), set, latestRevision: 'r', injectedList: 'hot-set', now: new Date() })) as Pod);
    expect(viewRow(set, [upgraded], NO_NAMESPACES)).toMatchObject({
      state: 'Progressing',
      why: expect.stringMatching(/^1 pod\(s\) due for a hot-upgrade flip; 1 pod\(s\) finishing a hot upgrade: their old sidecar containers go back to the empty image this reconcile/) as unknown as string,
      rolling: true,
    });
  });

  it('says what the set’s reconcile says: its state’s reason and its waiting message, for every case of the plan', () => {
    const cases: [SidecarSetUpdateStrategy, PodOptions[]][] = [
      [{}, [{ name: 'a' }, { name: 'b', updated: true, ready: false }]],
      [{ partition: 1 }, [{ name: 'a' }, { name: 'b', updated: true }]],
      [{ type: 'NotUpdate' }, [{ name: 'a', updated: true }]],
      [{ paused: true }, [{ name: 'a' }]],
      [{ maxUnavailable: '50%' }, [{ name: 'a' }, { name: 'b' }, { name: 'c' }, { name: 'd', otherFields: true }]],
      [{ partition: 'x' }, [{ name: 'a' }]],
    ];
    for (const [strategy, pods] of cases) {
      const set = setWith(strategy);
      const listed = podsFor(set, pods);
      const plan = planRollout(set, listed, NO_NAMESPACES);
      const row = viewRow(set, listed, NO_NAMESPACES);
      expect(`Rollout${row.state}`).toBe(rolloutState(plan.status, 0, plan.waiting).reason);
      if (plan.waiting !== undefined) expect(row.why.endsWith(waitingMessage(plan.waiting))).toBe(true);
      expect(row.counts).toEqual(plan.status);
    }
  });

  it('counts from the pods, and names each count the stored status does not show', () => {
    const set = setWith({});
    set.status = { matchedPods: 3, updatedPods: 0, readyPods: 2, updatedReadyPods: 0 };
    const row = viewRow(set, podsFor(set, [{ name: 'a', updated: true }, { name: 'b' }, { name: 'c' }]), NO_NAMESPACES);
    expect(row.counts).toEqual({ matchedPods: 3, updatedPods: 1, readyPods: 3, updatedReadyPods: 1 });
    expect(row.staleCounts).toEqual(['updatedPods', 'readyPods', 'updatedReadyPods']);
  });

  it('marks nothing when the stored status is the fresh one, and every non-zero count when there is no status yet', () => {
    const set = setWith({});
    const pods = podsFor(set, [{ name: 'a', updated: true }, { name: 'b', ready: false }]);
    set.status = { matchedPods: 2, updatedPods: 1, readyPods: 1, updatedReadyPods: 1 };
    expect(viewRow(set, pods, NO_NAMESPACES).staleCounts).toEqual([]);
    delete set.status;
    expect(viewRow(set, pods, NO_NAMESPACES).staleCounts).toEqual(['matchedPods', 'updatedPods', 'readyPods', 'updatedReadyPods']);
  });

  it('cannot decide a set whose namespaceSelector needs a namespace it has no labels for, and says so', () => {
    const set = rolloutSet({ name: 'logs' });
    set.spec = { ...set.spec, namespaceSelector: { matchLabels: { team: 'a' } } };
    const row = viewRow(set, podsFor(set, [{ name: 'a', namespace: 'gone' }]), NO_NAMESPACES);
    expect(row).toEqual({ name: 'logs', staleCounts: [], state: 'Unknown', why: expect.stringMatching(/^cannot decide: namespace "gone" is unknown/) as unknown, rolling: false, path: 'policy' });
  });

  it('names the path the rule gives the set: policy, or webhook for a set the policy does not take (a pinned revision here)', () => {
    const set = rolloutSet({ name: 'logs' });
    expect(viewRow(set, [], NO_NAMESPACES).path).toBe('policy');
    const pinning = { ...set, spec: { ...set.spec, injectionStrategy: { revision: { revisionName: 'logs-1' } } } };
    expect(viewRow(pinning, [], NO_NAMESPACES).path).toBe('webhook');
  });
});

describe('every set’s row from the lists of their scopes', () => {
  it('lists each distinct scope once, and gives each set the pods of its scope', () => {
    const bSet = rolloutSet({ name: 'b-set' });
    const aSet = rolloutSet({ name: 'a-set' });
    const other = rolloutSet({ name: 'c-set' });
    other.spec = { ...other.spec, selector: { matchLabels: { app: 'db' } }, namespace: 'data' };
    const scopes = podScopes([bSet, aSet, other]);
    expect(scopes).toEqual([{ labelSelector: 'app=web' }, { namespace: 'data', labelSelector: 'app=db' }]);
    // Both sets select app=web; each matches the pods it injected (the fixture injects one set per pod).
    const webPods = [...podsFor(bSet, [{ name: 'w1' }, { name: 'w2', updated: true }]), ...podsFor(aSet, [{ name: 'w3' }])];
    const byScope = new Map([[scopeKey({ labelSelector: 'app=web' }), webPods]]);
    const rows = viewRows([bSet, aSet, other], byScope, NO_NAMESPACES);
    expect(rows.map((r) => [r.name, r.counts?.matchedPods])).toEqual([['a-set', 1], ['b-set', 2], ['c-set', 0]]);
  });

  it('decides a set with no usable selector over no pods, as the resync does', () => {
    const set = rolloutSet({ name: 'odd' });
    set.spec = { ...set.spec, selector: { matchExpressions: [{ key: 'app', operator: 'Sideways' }] } };
    expect(podScopes([set])).toEqual([]);
    expect(viewRows([set], new Map(), NO_NAMESPACES)).toEqual([expect.objectContaining({ name: 'odd', state: 'Finished', counts: { matchedPods: 0, updatedPods: 0, readyPods: 0, updatedReadyPods: 0 } })]);
  });

  it('needs namespace labels only for the pods of sets with a namespaceSelector', () => {
    const plain = rolloutSet({ name: 'plain' });
    const selective = rolloutSet({ name: 'selective' });
    selective.spec = { ...selective.spec, selector: { matchLabels: { app: 'db' } }, namespaceSelector: { matchLabels: { team: 'a' } } };
    const byScope = new Map([
      [scopeKey({ labelSelector: 'app=web' }), podsFor(plain, [{ name: 'w', namespace: 'web-ns' }])],
      [scopeKey({ labelSelector: 'app=db' }), podsFor(selective, [{ name: 'd1', namespace: 'team-a', labels: { app: 'db' } }, { name: 'd2', namespace: 'team-b', labels: { app: 'db' } }, { name: 'd3', namespace: 'team-a', labels: { app: 'db' } }])],
    ]);
    expect(namespacesNeeded([plain], byScope)).toEqual([]);
    expect(namespacesNeeded([plain, selective], byScope).sort()).toEqual(['team-a', 'team-b']);
    const rows = viewRows([plain, selective], byScope, new Map([['team-a', { team: 'a' }], ['team-b', { team: 'b' }]]));
    expect(rows.map((r) => [r.name, r.counts?.matchedPods])).toEqual([['plain', 1], ['selective', 2]]);
  });
});
