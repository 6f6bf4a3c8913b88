import { describe, expect, it } from '@jest/globals';
import { planRollout } from '../../lib/rollout/plan.ts';
import { rolloutStatusFields, batchWrites, statusNeedsWrite, waitingMessage } from '../../lib/rollout/batch.ts';
import { NO_NAMESPACES, rolloutPod, rolloutSet } from './fixtures.ts';

const NOW = new Date('2026-12-01T01:32:23Z');

describe('a round’s writes (rollout.md §1.5-§1.7)', () => {
  it('not-upgradable conditions first, one Event, then each pod’s guarded patch with its condition', () => {
    const set = rolloutSet({ strategy: { type: 'RollingUpdate', maxUnavailable: 5 } });
    const pods = [rolloutPod(set, { name: 'a' }), rolloutPod(set, { name: 'b', otherFields: true }), rolloutPod(set, { name: 'c', otherFields: true })];
    const writes = batchWrites(set, planRollout(set, pods, NO_NAMESPACES), 'test-sidecarset-78bb8d68cc', () => 'test-sidecarset', NOW);
    expect(writes.notUpgradable.map((w) => [w.pod.metadata!.name, w.condition.status.conditions[0].status])).toEqual([
      ['b', 'False'],
      ['c', 'False'],
    ]);
    expect(writes.event).toEqual({ reason: 'NotUpgradablePods', message: 'SidecarSet in-place update detected 2 not upgradable pod(s) in this round, will skip them.' });
    expect(writes.updates).toHaveLength(1);
    expect(writes.updates[0]!.patch[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: '100' });
    expect(writes.updates[0]!.condition!.status.conditions[0].status).toBe('True');
  });

  it('no not-upgradable pods: no Event', () => {
    const set = rolloutSet();
    expect(batchWrites(set, planRollout(set, [rolloutPod(set, { name: 'a' })], NO_NAMESPACES), 'r', () => '', NOW).event).toBeUndefined();
  });
});

describe('status writes (rollout.md §0 step 4, §1.9)', () => {
  const counts = { matchedPods: 2, updatedPods: 0, readyPods: 2, updatedReadyPods: 0 };
  it('the §2.2 example status', () => {
    expect(rolloutStatusFields(rolloutSet(), counts, { latestRevision: 'test-sidecarset-78bb8d68cc', collisionCount: 0 })).toEqual({
      observedGeneration: 2,
      matchedPods: 2,
      updatedPods: 0,
      readyPods: 2,
      updatedReadyPods: 0,
      latestRevision: 'test-sidecarset-78bb8d68cc',
      collisionCount: 0,
    });
  });
  it('written only when something differs; an unset collisionCount differs from 0', () => {
    const next = rolloutStatusFields(rolloutSet(), counts, { latestRevision: 'r', collisionCount: 0 });
    expect(statusNeedsWrite(next, next)).toBe(false);
    expect(statusNeedsWrite({ ...next, collisionCount: undefined }, next)).toBe(true);
    expect(statusNeedsWrite({ ...next, observedGeneration: 3 }, next)).toBe(false);
    expect(statusNeedsWrite({ ...next, readyPods: 1 }, next)).toBe(true);
    expect(statusNeedsWrite(undefined, next)).toBe(true);
  });
});

describe('why is it waiting (sidecarset.md §7)', () => {
  it.each<[Parameters<typeof waitingMessage>[0], string]>([
    [{ kind: 'max-unavailable', unavailable: 3, maxUnavailable: 3 }, 'maxUnavailable 3 reached: the next pods wait until updated ones are ready (3 updated and not ready before this reconcile)'],
    [{ kind: 'partition', held: 4 }, '4 pod(s) held back by partition'],
    [{ kind: 'paused' }, 'paused (updateStrategy.paused)'],
    [{ kind: 'nothing-waiting', notUpgradable: 2, notSelected: 0, inFlight: 1 }, '2 pod(s) not upgradable because fields other than the image changed: recreate them; 1 pod(s) still restarting from an earlier update'],
    [{ kind: 'nothing-waiting', notUpgradable: 2, notSelected: 0, inFlight: 0, changed: ['env', 'volumeMounts'] }, '2 pod(s) not upgradable because fields other than the image changed (env, volumeMounts): recreate them'],
    [
      { kind: 'max-unavailable', unavailable: 2, maxUnavailable: 2, stuck: { count: 2, reasons: [{ reason: 'ImagePullBackOff', count: 2, pods: ['default/a', 'default/b'] }], lastUpdateMs: 0 } },
      'maxUnavailable 2 reached: the next pods wait until updated ones are ready (2 updated and not ready before this reconcile: ImagePullBackOff: 2 pod(s) (default/a, default/b))',
    ],
    [
      { kind: 'updated-not-ready', stuck: { count: 5, reasons: [{ reason: 'CrashLoopBackOff', count: 4, pods: ['ns/a', 'ns/b', 'ns/c'] }, { reason: 'Restarting', count: 1, pods: ['ns/d'] }], lastUpdateMs: 0 } },
      'every pod is updated; 5 not ready yet: CrashLoopBackOff: 4 pod(s) (ns/a, ns/b, ns/c, …); Restarting: 1 pod(s) (ns/d)',
    ],
    [{ kind: 'finished' }, 'finished: every matched pod runs the current sidecars'],
  ])('%j', (reason, text) => {
    expect(waitingMessage(reason)).toBe(text);
  });
});
