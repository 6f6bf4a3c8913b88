/** The per-pod view (`--pods SET`): each matched pod's row, decided as the set's reconcile decides, and its table. */
import { describe, expect, it } from '@jest/globals';
import { applyPatch } from '../../lib/admission/json-patch-apply.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { podUpdatePatch } from '../../lib/rollout/pod-patch.ts';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { podView, sidecarWaitingReasons, type PodRow } from '../../lib/status-view/pod-rows.ts';
import { noPodsMatch, renderPodRows, renderPodView, setNotFound } from '../../lib/status-view/pod-table.ts';
import { viewRow } from '../../lib/status-view/rows.ts';
import { NO_NAMESPACES, rolloutPod, rolloutSet, type PodOptions } from '../rollout/fixtures.ts';
import { hotSet, injected, kubelet } from '../rollout/hot-fixtures.ts';

const setWith = (strategy: SidecarSetUpdateStrategy = {}): SidecarSet => rolloutSet({ name: 'logs', strategy: { type: 'RollingUpdate', ...strategy } });
const podsFor = (set: SidecarSet, pods: PodOptions[]): Pod[] => pods.map((o) => rolloutPod(set, o));
const stateOf = (rows: readonly PodRow[]) => rows.map((r) => [r.pod, r.updated, r.ready, r.state, r.why]);

/** The sidecar's status waiting in `reason`, as the kubelet writes it. */
function waitingIn(pod: Pod, reason: string): Pod {
  const out = structuredClone(pod);
  const status = out.status?.containerStatuses?.find((s) => s.name === 'sidecar1');
  if (status !== undefined) Object.assign(status, { ready: false, state: { waiting: { reason, message: 'Back-off pulling image' } } });
  const ready = out.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready !== undefined) ready.status = 'False';
  return out;
}

describe('each matched pod’s row', () => {
  it.each<[string, SidecarSetUpdateStrategy, PodOptions[], [string, boolean, boolean, string, string | RegExp][]]>([
    ['maxUnavailable 1: the first pod due, the others waiting for it', {}, [{ name: 'a' }, { name: 'b' }], [
      ['default/a', false, true, 'Due', 'the next reconcile updates it'],
      ['default/b', false, true, 'Waiting', /^maxUnavailable 1 reached/],
    ]],
    ['an updated pod not restarted yet, an updated one not ready, one done', { maxUnavailable: 5 }, [{ name: 'a', updated: true, inconsistent: true }, { name: 'b', updated: true, ready: false }, { name: 'c', updated: true }], [
      ['default/a', true, false, 'Updating', 'its sidecars have not restarted on the new image yet'],
      ['default/b', true, false, 'NotReady', 'updated, not ready yet'],
      ['default/c', true, true, 'Updated', ''],
    ]],
    ['paused', { paused: true }, [{ name: 'a' }], [['default/a', false, true, 'Waiting', 'paused (updateStrategy.paused)']]],
    ['partition', { partition: 1 }, [{ name: 'a' }], [['default/a', false, true, 'Waiting', '1 pod(s) held back by partition']]],
    ['NotUpdate', { type: 'NotUpdate' }, [{ name: 'a' }], [['default/a', false, true, 'Waiting', /^updateStrategy.type is NotUpdate/]]],
    ['outside updateStrategy.selector', { selector: { matchLabels: { canary: 'true' } } }, [{ name: 'a' }], [['default/a', false, true, 'NotSelected', 'updateStrategy.selector leaves it out']]],
    ['fields other than the image changed', {}, [{ name: 'a', otherFields: true }], [['default/a', false, true, 'NotUpgradable', /^fields other than the image changed since its injection/]]],
  ])('%s', (_d, strategy, pods, expected) => {
    const set = setWith(strategy);
    const view = podView(set, podsFor(set, pods), NO_NAMESPACES);
    expect(stateOf(view.rows)).toEqual(expected.map(([pod, updated, ready, state, why]) => [pod, updated, ready, state, typeof why === 'string' ? why : expect.stringMatching(why)]));
  });

  it('counts as the set’s line counts: UPDATED and READY per pod add up to its counts', () => {
    const set = setWith({ maxUnavailable: 2 });
    const pods = podsFor(set, [{ name: 'a', updated: true }, { name: 'b', updated: true, inconsistent: true }, { name: 'c', ready: false }, { name: 'd' }, { name: 'e', otherFields: true }]);
    const view = podView(set, pods, NO_NAMESPACES);
    expect(view.summary).toEqual(viewRow(set, pods, NO_NAMESPACES));
    const counts = view.summary?.counts;
    expect(view.rows.length).toBe(counts?.matchedPods);
    expect(view.rows.filter((r) => r.updated).length).toBe(counts?.updatedPods);
    expect(view.rows.filter((r) => r.ready).length).toBe(counts?.readyPods);
    expect(view.rows.filter((r) => r.updated && r.ready).length).toBe(counts?.updatedReadyPods);
  });

  it('lists only the pods the set matches, in namespace/name order, whatever the list holds', () => {
    const set = setWith();
    const other = rolloutSet({ name: 'other' });
    const pods = [rolloutPod(set, { name: 'b', namespace: 'z' }), rolloutPod(other, { name: 'x' }), rolloutPod(set, { name: 'a', namespace: 'z' }), rolloutPod(set, { name: 'c', phase: 'Succeeded' })];
    expect(podView(set, pods, NO_NAMESPACES).rows.map((r) => r.pod)).toEqual(['z/a', 'z/b']);
  });

  it('says what the kubelet says of the sidecar containers that wait, and nothing of the others', () => {
    const set = setWith({ maxUnavailable: 5 });
    const pulling = waitingIn(rolloutPod(set, { name: 'a', updated: true }), 'ImagePullBackOff');
    const view = podView(set, [pulling, rolloutPod(set, { name: 'b', updated: true })], NO_NAMESPACES);
    expect(view.rows.map((r) => r.waiting)).toEqual([['sidecar1: ImagePullBackOff'], []]);
    expect(view.rows[0]).toMatchObject({ updated: true, ready: false });
  });

  it('shows a waiting reason only when it is one word, as the kubelet writes them', () => {
    const set = setWith();
    const names = new Set(['sidecar1']);
    expect(sidecarWaitingReasons(waitingIn(rolloutPod(set, { name: 'a' }), 'CrashLoopBackOff'), names)).toEqual(['sidecar1: CrashLoopBackOff']);
    expect(sidecarWaitingReasons(waitingIn(rolloutPod(set, { name: 'a' }), 'evil\u001b[2Jtext'), names)).toEqual([]);
    expect(sidecarWaitingReasons(waitingIn(rolloutPod(set, { name: 'a' }), 'ErrImagePull'), new Set(['app']))).toEqual([]);
  });

  it('names the working HotUpgrade container, and a pod mid-swap whose new container serves as due for its flip', () => {
    const set = hotSet('mesh:v2');
    const before = injected('mesh:v1', 'a');
    const upgraded = kubelet(applyPatch(before, podUpdatePatch({ pod: before, set, latestRevision: 'r', injectedList: 'hot-set', now: new Date() })) as Pod);
    const view = podView(set, [upgraded, injected('mesh:v1', 'b')], NO_NAMESPACES);
    expect(view.hot).toBe(true);
    expect(view.rows.map((r) => [r.pod, r.state, r.working])).toEqual([
      ['default/a', 'FlipDue', ['mesh: mesh-2']],
      ['default/b', 'Waiting', ['mesh: mesh-1']],
    ]);
  });

  it('a HotUpgrade pod whose new container does not start is swapping, with the kubelet’s reason (the update made it the working one)', () => {
    const set = hotSet('mesh:v2');
    const before = injected('mesh:v1', 'a');
    const patched = applyPatch(before, podUpdatePatch({ pod: before, set, latestRevision: 'r', injectedList: 'hot-set', now: new Date() })) as Pod;
    const failing = kubelet(patched, ['mesh:v2']);
    const status = failing.status?.containerStatuses?.find((s) => s.name === 'mesh-2');
    if (status !== undefined) status.state = { waiting: { reason: 'ErrImagePull' } };
    expect(podView(set, [failing], NO_NAMESPACES).rows.map((r) => [r.state, r.waiting, r.working])).toEqual([['Swapping', ['mesh-2: ErrImagePull'], ['mesh: mesh-2']]]);
  });

  it('cannot decide a set whose namespaceSelector needs a namespace it was not given: no rows, the summary says why', () => {
    const set = setWith();
    set.spec = { ...set.spec, namespaceSelector: { matchLabels: { team: 'a' } } };
    const view = podView(set, podsFor(set, [{ name: 'a' }]), NO_NAMESPACES);
    expect(view.rows).toEqual([]);
    expect(view.problem).toMatch(/^cannot decide: /);
    expect(view.summary?.state).toBe('Unknown');
  });
});

describe('the per-pod table', () => {
  const set = setWith();
  const view = podView(set, [waitingIn(rolloutPod(set, { name: 'a', updated: true }), 'ImagePullBackOff'), rolloutPod(set, { name: 'b' })], NO_NAMESPACES);

  it('shows the set’s line, a blank line, then a line per pod', () => {
    expect(renderPodView(view)).toEqual([
      expect.stringMatching(/^NAME +MATCHED +UPDATED +READY +UPDATED-READY +STATE +PATH +PROGRESS +WHY$/),
      expect.stringMatching(/^logs +2\* +1\* +1\* +0 +Progressing +policy /),
      expect.stringMatching(/^\* not yet in the stored status/),
      '',
      'POD         UPDATED   READY   STATE      KUBELET                      WHY',
      'default/a   yes       no      NotReady   sidecar1: ImagePullBackOff   updated, not ready yet',
      expect.stringMatching(/^default\/b {3}no {8}yes {5}Waiting {4}- {28}maxUnavailable 1 reached/),
    ]);
  });

  it('fits a narrow terminal: what the kubelet says and WHY move under their pod, and no line is wider than the width', () => {
    const lines = renderPodRows(view.rows, view.hot, 60);
    expect(lines).toEqual([
      'POD         UPDATED   READY   STATE',
      'default/a   yes       no      NotReady',
      '  sidecar1: ImagePullBackOff   updated, not ready yet',
      'default/b   no        yes     Waiting',
      expect.stringMatching(/^ {2}maxUnavailable 1 reached: .*…$/),
    ]);
    for (const line of renderPodView(view, { width: 60 })) expect(Array.from(line).length).toBeLessThanOrEqual(60);
    for (const line of renderPodView(view, { width: 12 })) expect(Array.from(line).length).toBeLessThanOrEqual(12);
  });

  it('says when the set is not there, or matches no pod', () => {
    expect(renderPodView({ set: 'gone', rows: [], hot: false })).toEqual([setNotFound('gone')]);
    expect(setNotFound('gone')).toBe('SidecarSet "gone" not found.');
    const empty = podView(set, [], NO_NAMESPACES);
    expect(renderPodView(empty).at(-1)).toBe(noPodsMatch('logs'));
  });

  it('prints control characters of a pod name as ?', () => {
    const row: PodRow = { pod: 'ns/a\u001b[2J', updated: true, ready: true, state: 'Updated', waiting: [], working: [], why: '' };
    expect(renderPodRows([row], false, undefined)[1]).toBe('ns/a?[2J   yes       yes     Updated   -');
  });
});

describe('an updated pod no kubelet has reported', () => {
  /** The pod as created with no kubelet: no container status at all. */
  const unstarted = (pod: Pod, nodeName?: string): Pod => {
    const spec = structuredClone(pod.spec ?? { containers: [] });
    delete spec.nodeName;
    return { ...pod, spec: { ...spec, ...(nodeName === undefined ? {} : { nodeName }) }, status: { phase: 'Pending' } };
  };

  it('is Pending, not scheduled to a node, rather than restarting on a new image', () => {
    const set = setWith({ maxUnavailable: 5 });
    const view = podView(set, [unstarted(rolloutPod(set, { name: 'a', updated: true }))], NO_NAMESPACES);
    expect(stateOf(view.rows)).toEqual([['default/a', true, false, 'Pending', expect.stringMatching(/^Pending: not scheduled to a node, so no kubelet runs it/)]]);
  });

  it('is Pending on its node until that kubelet reports its containers', () => {
    const set = setWith({ maxUnavailable: 5 });
    const view = podView(set, [unstarted(rolloutPod(set, { name: 'a', updated: true }), 'node-1')], NO_NAMESPACES);
    expect(view.rows[0]?.why).toBe('Pending: the kubelet of node node-1 has not reported its containers yet');
  });

  it('holds the set\'s rollout as Pending, not Restarting, in the set\'s line', () => {
    const set = setWith({ maxUnavailable: 5 });
    const row = viewRow(set, [unstarted(rolloutPod(set, { name: 'a', updated: true }))], NO_NAMESPACES);
    expect(row.why).toContain('Pending');
    expect(row.why).not.toContain('Restarting');
  });
});
