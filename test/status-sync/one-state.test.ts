/**
 * One rollout state everywhere (issue 38 item 2): for the same pods at the
 * same moment, a set's reconcile (its result and its Event), the metrics
 * (the ObservedStates the recorders read) and the rollout view (`npm run
 * status`, a row and `--pods`' summary) name the same state, because each
 * asks lib/status-sync/rollout-state.ts rolloutState with the same clock.
 */
import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import type { SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { observedStates } from '../../lib/status-sync/observed-states.ts';
import { rolloutStateEvents } from '../../lib/status-sync/rollout-state.ts';
import { reconcileSet } from '../../lib/status-sync/set-reconcile.ts';
import { podView } from '../../lib/status-view/pod-rows.ts';
import { viewRow } from '../../lib/status-view/rows.ts';
import { NO_NAMESPACES, rolloutPod, type PodOptions } from '../rollout/fixtures.ts';
import { NOW, storedRolloutSet, world } from './rollout-world.ts';

const STALL = { nowMs: NOW.getTime(), stallMs: 60_000 };

/** An updated pod whose sidecar image cannot be pulled, updated (by its annotation) `secondsAgo` before NOW. */
function pulling(pod: Pod, secondsAgo: number): Pod {
  const at = new Date(NOW.getTime() - secondsAgo * 1000).toISOString().replace('.000', '');
  const annotations = pod.metadata!.annotations!;
  annotations['kruise.io/sidecarset-hash'] = annotations['kruise.io/sidecarset-hash']!.replace('2025-01-01T00:00:00Z', at);
  pod.status!.containerStatuses![0] = { ...pod.status!.containerStatuses![0]!, ready: false, state: { waiting: { reason: 'ImagePullBackOff' } } };
  return pod;
}

describe('one rollout state for the reconcile, its Event, the metrics and the view', () => {
  it.each<[string, SidecarSetUpdateStrategy, PodOptions[], ((pod: Pod) => Pod) | undefined, string]>([
    ['old pods, room for one', { type: 'RollingUpdate', maxUnavailable: 1 }, [{ name: 'a' }, { name: 'b' }, { name: 'c' }], undefined, 'Progressing'],
    ['an updated pod pulling for 10 s holds the next', { type: 'RollingUpdate', maxUnavailable: 1 }, [{ name: 'a', updated: true, ready: false }, { name: 'b' }], (p) => (p.metadata?.name === 'a' ? pulling(p, 10) : p), 'Progressing'],
    ['an updated pod pulling for 90 s holds the next', { type: 'RollingUpdate', maxUnavailable: 1 }, [{ name: 'a', updated: true, ready: false }, { name: 'b' }], (p) => (p.metadata?.name === 'a' ? pulling(p, 90) : p), 'Stalled'],
    ['every pod updated, the last pulling for 90 s', { type: 'RollingUpdate', maxUnavailable: 2 }, [{ name: 'a', updated: true }, { name: 'b', updated: true, ready: false }], (p) => (p.metadata?.name === 'b' ? pulling(p, 90) : p), 'Stalled'],
    ['paused', { type: 'RollingUpdate', paused: true }, [{ name: 'a' }], undefined, 'Paused'],
    ['partition holds every pod', { type: 'RollingUpdate', partition: 2 }, [{ name: 'a' }, { name: 'b' }], undefined, 'Waiting'],
    ['every pod updated and ready', { type: 'RollingUpdate' }, [{ name: 'a', updated: true }], undefined, 'Finished'],
    ['NotUpdate', { type: 'NotUpdate' }, [{ name: 'a' }], undefined, 'NotUpdate'],
  ])('%s', async (_, strategy, options, shape, expected) => {
    const set = storedRolloutSet(strategy);
    const pods = options.map((o) => (shape ?? ((p: Pod) => p))(rolloutPod(set, o)));
    // The view's look before the reconcile.
    expect(viewRow(set, pods, NO_NAMESPACES, STALL).state).toBe(expected);
    const w = world(set, pods);
    const states = observedStates(rolloutStateEvents());
    w.deps.rollout.states = states;
    const result = await reconcileSet(set, w.deps);
    expect(result.state?.reason).toBe(`Rollout${expected}`);
    expect(states.current().get(set.metadata!.name!)).toBe(expected);
    // A resting state seen first is nothing new; any Event told says the state.
    for (const event of w.events.events.filter((e) => e.reason.startsWith('Rollout'))) expect(event.reason).toBe(`Rollout${expected}`);
    // The view's look after it (the pods as the reconcile left them), at the same moment: still the same state.
    const after = w.cluster.pods();
    expect(viewRow(set, after, NO_NAMESPACES, STALL).state).toBe(expected);
    expect(podView(set, after, NO_NAMESPACES, STALL).summary?.state).toBe(expected);
  });
});
