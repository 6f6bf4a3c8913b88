import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { withCanarySplit } from '../../lib/status-view/canary-split.ts';
import { podScopes, scopeKey, viewRows } from '../../lib/status-view/rows.ts';
import { NO_NAMESPACES, rolloutPod, rolloutSet } from '../rollout/fixtures.ts';

const base = rolloutSet({ name: 'logs' });
const canaryOf = (name: string, baseName = 'logs'): SidecarSet => {
  const set = rolloutSet({ name, strategy: { type: 'NotUpdate' } });
  return { ...set, metadata: { ...set.metadata, annotations: { ...set.metadata?.annotations, 'apps.kruise.io/sidecarset-canary': 'true', 'apps.kruise.io/sidecarset-base': baseName } } };
};
const pod = (set: SidecarSet, name: string, phase?: string): Pod => {
  const made = rolloutPod(set, { name, updated: true });
  return phase === undefined ? made : { ...made, status: { ...made.status, phase } };
};

/** The rows the view shows over `pods` (every set's scope lists them all: the fixtures' sets share one selector). */
function whys(sets: SidecarSet[], pods: Pod[]): Record<string, string> {
  const podsByScope = new Map(podScopes(sets).map((scope) => [scopeKey(scope), pods]));
  const rows = withCanarySplit(viewRows(sets, podsByScope, NO_NAMESPACES), sets, podsByScope, NO_NAMESPACES);
  return Object.fromEntries(rows.map((row) => [row.name, row.why]));
}

const FINISHED = 'finished: every matched pod runs the current sidecars';

describe("the status view's split of a base's pods among its canaries", () => {
  it.each<[string, SidecarSet[], Pod[], Record<string, string>]>([
    ['no canary: nothing added', [base], [pod(base, 'a')], { logs: FINISHED }],
    ['a canary that took no pod: nothing added', [base, canaryOf('trial')], [pod(base, 'a')], { logs: FINISHED, trial: expect.any(String) as unknown as string }],
    [
      'two canaries: the base says how many run its own sidecars and what each canary took',
      [base, canaryOf('trial'), canaryOf('beta')],
      [pod(base, 'a'), pod(canaryOf('trial'), 'b'), pod(canaryOf('trial'), 'c'), pod(canaryOf('beta'), 'd')],
      { logs: `${FINISHED}; split: 1 pod(s) run its sidecars, canary beta took 1, canary trial took 2`, trial: expect.any(String) as unknown as string, beta: expect.any(String) as unknown as string },
    ],
    [
      'finished pods a canary injected are not counted',
      [base, canaryOf('trial')],
      [pod(base, 'a'), pod(canaryOf('trial'), 'b'), pod(canaryOf('trial'), 'c', 'Succeeded')],
      { logs: `${FINISHED}; split: 1 pod(s) run its sidecars, canary trial took 1`, trial: expect.any(String) as unknown as string },
    ],
    [
      "a canary of another base takes nothing from this one",
      [base, rolloutSet({ name: 'other' }), canaryOf('trial', 'other')],
      [pod(base, 'a'), pod(canaryOf('trial', 'other'), 'b')],
      { logs: FINISHED, other: expect.stringContaining('; split: 0 pod(s) run its sidecars, canary trial took 1') as unknown as string, trial: expect.any(String) as unknown as string },
    ],
  ])('%s', (_name, sets, pods, expected) => {
    expect(whys(sets, pods)).toEqual(expected);
  });
});
