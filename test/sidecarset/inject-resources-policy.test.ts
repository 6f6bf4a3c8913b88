import { describe, expect, it } from '@jest/globals';
import type { Container, Pod } from '../../lib/kube/types.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { ResourcesPolicyError } from '../../lib/sidecarset/resources-policy.ts';
import type { ResourcesPolicy, SidecarContainer, SidecarSet } from '../../lib/sidecarset/types.ts';
import { NOW, pod, sidecar, sidecarSet } from '../../testkit/sidecarset-objects.ts';

function inject(p: Pod, sets: SidecarSet[]): Pod {
  return injectPod({ pod: p, namespace: 'default', sidecarSets: sets, namespaceLabels: new Map(), now: NOW }).pod;
}

type List = { cpu?: string; memory?: string };
function app(name: string, limits?: List, requests?: List, extra: Partial<Container> = {}): Container {
  const resources = { ...(limits ? { limits } : {}), ...(requests ? { requests } : {}) };
  return { name, image: 'nginx:1.14.2', resources, ...extra };
}

const policy = (mode: string, regex: string, limits?: List, requests?: List): ResourcesPolicy => ({
  targetContainersMode: mode,
  targetContainersNameRegex: regex,
  resourcesExpr: { ...(limits ? { limits } : {}), ...(requests ? { requests } : {}) },
});

function setWith(rp: ResourcesPolicy, extra: Partial<SidecarContainer> = {}): SidecarSet {
  return sidecarSet('agent', { containers: [sidecar('agent', { resourcesPolicy: rp, ...extra })] });
}

function resourcesOf(p: Pod, name: string): unknown {
  return [...(p.spec?.initContainers ?? []), ...p.spec!.containers].find((c) => c.name === name)?.resources;
}

const app1 = app('app1', { cpu: '200m', memory: '200Mi' }, { cpu: '50m', memory: '100Mi' });
const app2 = app('app2', { cpu: '400m', memory: '400Mi' }, { cpu: '100m', memory: '200Mi' });

/** The cases of Kruise 1.9's sidecarset_resources_test.go (TestApplyResourcesPolicy), with its expected values. */
describe("resourcesPolicy at pod creation: Kruise's own cases", () => {
  it.each<[string, Container[], Container[], ResourcesPolicy, unknown]>([
    [
      'sum mode with percentage (the example of the docs)',
      [],
      [app1, app2],
      policy('sum', '.*', { cpu: 'cpu*50%', memory: '200Mi' }, { cpu: 'cpu*50%', memory: '100Mi' }),
      { limits: { cpu: '300m', memory: '200Mi' }, requests: { cpu: '75m', memory: '100Mi' } },
    ],
    [
      'max mode with an expression',
      [],
      [{ ...app1, name: 'large.engine.v4' }, { ...app2, name: 'large.engine.v8' }],
      policy('max', '^large.engine.v.*$', { cpu: 'max(cpu*50%, 50m)', memory: '200Mi' }, { cpu: 'max(cpu*50%, 50m)', memory: '100Mi' }),
      { limits: { cpu: '200m', memory: '200Mi' }, requests: { cpu: '50m', memory: '100Mi' } },
    ],
    [
      'the regex picks one container',
      [],
      [{ ...app1, name: 'large.engine.v4' }, { ...app2, name: 'large.engine.v8' }],
      policy('sum', '^large.engine.v4$', { cpu: 'max(cpu*50%, 50m)', memory: '200Mi' }, { cpu: 'max(cpu*50%, 50m)', memory: '100Mi' }),
      { limits: { cpu: '100m', memory: '200Mi' }, requests: { cpu: '50m', memory: '100Mi' } },
    ],
    [
      'sum: one target without a CPU limit leaves the CPU limit unset',
      [],
      [app('app1', { cpu: '200m', memory: '200Mi' }, { cpu: '100m', memory: '100Mi' }), app('app2', { memory: '400Mi' }, { cpu: '50m', memory: '200Mi' })],
      policy('sum', '.*', { cpu: 'cpu*50%', memory: 'memory*30%' }, { cpu: 'cpu*30%', memory: 'memory*20%' }),
      { limits: { memory: '180Mi' }, requests: { cpu: '45m', memory: '60Mi' } },
    ],
    [
      'max: one target without a memory limit leaves the memory limit unset',
      [],
      [app('app1', { cpu: '200m', memory: '200Mi' }, { cpu: '100m', memory: '100Mi' }), app('app2', { cpu: '400m' }, { cpu: '200m' })],
      policy('max', '.*', { cpu: 'cpu*40%', memory: 'memory*30%' }, { cpu: 'cpu*25%', memory: 'memory*20%' }),
      { limits: { cpu: '160m' }, requests: { cpu: '50m', memory: '20Mi' } },
    ],
    [
      'sum: a target without requests counts as 0',
      [],
      [app('app1', { cpu: '200m', memory: '200Mi' }, { cpu: '100m', memory: '100Mi' }), app('app2', { cpu: '400m', memory: '400Mi' })],
      policy('sum', '.*', { cpu: 'cpu*50%', memory: 'memory*30%' }, { cpu: 'cpu*30%', memory: 'memory*20%' }),
      { limits: { cpu: '300m', memory: '180Mi' }, requests: { cpu: '30m', memory: '20Mi' } },
    ],
    [
      'a native sidecar is a target, a plain init container is not',
      [
        app('app1', { cpu: '400m', memory: '800Mi' }, { cpu: '200m', memory: '400Mi' }, { restartPolicy: 'Always' }),
        app('app-init', { cpu: '400m', memory: '800Mi' }, { cpu: '200m', memory: '400Mi' }),
      ],
      [app('app2', { cpu: '600m', memory: '1200Mi' }, { cpu: '300m', memory: '600Mi' })],
      policy('sum', '^app.*$', { cpu: 'max(cpu*30%, 50m)', memory: 'max(memory*25%, 100Mi)' }, { cpu: 'cpu*20%', memory: 'memory*15%' }),
      { limits: { cpu: '300m', memory: '500Mi' }, requests: { cpu: '100m', memory: '150Mi' } },
    ],
  ])('%s', (_name, initContainers, containers, rp, expected) => {
    const injected = inject(pod({ containers, initContainers }), [setWith(rp)]);
    expect(resourcesOf(injected, 'agent')).toEqual(expected);
  });
});

describe('resourcesPolicy: targets and results', () => {
  it("leaves a sum's memory limit unset when one target has none, whatever floor max() gives, as Kruise's aggregate is unlimited (sidecarset_resources.go)", () => {
    const containers = [app('app1', { cpu: '200m', memory: '200Mi' }, { cpu: '100m', memory: '100Mi' }), app('app2', { cpu: '400m' }, { cpu: '200m', memory: '200Mi' })];
    const rp = policy('sum', '.*', { cpu: 'cpu*50%', memory: 'max(memory*25%, 64Mi)' }, { cpu: 'cpu*30%', memory: 'max(memory*25%, 64Mi)' });
    expect(resourcesOf(inject(pod({ containers }), [setWith(rp)]), 'agent')).toEqual({ limits: { cpu: '300m' }, requests: { cpu: '90m', memory: '75Mi' } });
  });

  it('gives a native init sidecar its resources too, and the pod never sees the policy', () => {
    const set = sidecarSet('agent', {
      initContainers: [sidecar('init-agent', { restartPolicy: 'Always', resourcesPolicy: policy('sum', '.*', { cpu: 'cpu' }) })],
      updateStrategy: { type: 'NotUpdate' },
    });
    const injected = inject(pod({ containers: [app1, app2] }), [set]);
    const init = injected.spec!.initContainers!.find((c) => c.name === 'init-agent')!;
    expect(init.resources).toEqual({ limits: { cpu: '600m' } });
    expect(init).not.toHaveProperty('resourcesPolicy');
  });

  it("never targets another set's sidecars, even one already in the pod", () => {
    const other = sidecarSet('logs', { containers: [sidecar('log-agent')] });
    const injected = inject(pod({ containers: [app1, app('log-agent', { cpu: '4' })] }), [setWith(policy('sum', '.*', { cpu: 'cpu' })), other]);
    expect(resourcesOf(injected, 'agent')).toEqual({ limits: { cpu: '200m' } });
  });

  it('a reinvocation computes the same resources', () => {
    const sets = [setWith(policy('max', '.*', { cpu: 'cpu*50%' }, { memory: 'max(memory, 64Mi)' }), { upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } })];
    const once = inject(pod({ containers: [app1, app2] }), sets);
    const twice = inject(once, sets);
    expect(twice).toEqual(once);
    expect(resourcesOf(once, 'agent-1')).toEqual({ limits: { cpu: '200m' }, requests: { memory: '200Mi' } });
    expect(resourcesOf(once, 'agent-2')).toEqual({ limits: { cpu: '200m' }, requests: { memory: '200Mi' } });
  });

  it('replaces the whole resources field, as Kruise does', () => {
    const set = setWith(policy('sum', '.*', undefined, { cpu: '100m' }), { resources: { claims: [{ name: 'gpu' }] } });
    expect(resourcesOf(inject(pod({ containers: [app1] }), [set]), 'agent')).toEqual({ requests: { cpu: '100m' } });
  });

  it('a plain number is cores for cpu and bytes for memory', () => {
    const set = setWith(policy('sum', '.*', { cpu: '0.25 + 0', memory: '1.9' }));
    expect(resourcesOf(inject(pod({ containers: [app1] }), [set]), 'agent')).toEqual({ limits: { cpu: '250m', memory: '1900m' } });
    // Kruise picks the variable by the word "memory" in the text ("0.memory" lexes as the number 0): whole bytes then.
    const namesMemory = setWith(policy('sum', '.*', { memory: '1.9 + 0.memory' }));
    expect(resourcesOf(inject(pod({ containers: [app1] }), [namesMemory]), 'agent')).toEqual({ limits: { memory: '1' } });
  });

  it('keeps the text of a quantity max mode passes through', () => {
    const set = setWith(policy('max', '.*', { cpu: 'cpu' }));
    expect(resourcesOf(inject(pod({ containers: [app('a', { cpu: '1.500' })] }), [set]), 'agent')).toEqual({ limits: { cpu: '1.500' } });
  });
});

describe('resourcesPolicy: the pod is refused with a clear message', () => {
  it.each<[string, Container[], ResourcesPolicy, string]>([
    ['no container matches', [app1], policy('sum', '^db$', { cpu: 'cpu' }), 'SidecarSet agent, sidecar agent: no containers match the regex pattern "^db$"'],
    [
      'the pattern is not RE2',
      [app1],
      policy('sum', 'app(', { cpu: 'cpu' }),
      'SidecarSet agent, sidecar agent: failed to get target containers: invalid regex pattern "app(": error parsing regexp: missing closing ): `app(`',
    ],
    [
      'an expression fails on the pod',
      [app1],
      policy('sum', '.*', { cpu: 'cpu * cpu' }),
      'SidecarSet agent, sidecar agent: failed to evaluate CPU limits expression: failed to parse expression "cpu * cpu": multiplication of two quantities',
    ],
    [
      'a request expression goes negative',
      [app1],
      policy('sum', '.*', undefined, { memory: 'memory - 1Gi' }),
      'SidecarSet agent, sidecar agent: failed to evaluate memory requests expression: failed to parse expression "memory - 1Gi": calculation result is negative: -924Mi',
    ],
  ])('%s', (_name, containers, rp, message) => {
    const run = () => inject(pod({ containers }), [setWith(rp)]);
    expect(run).toThrow(ResourcesPolicyError);
    expect(run).toThrow(message);
  });

  it('a catastrophic pattern costs linear time on a long hand-made name', () => {
    const set = setWith(policy('sum', '^(a+)+$', { cpu: 'cpu' }));
    const started = performance.now();
    expect(() => inject(pod({ containers: [app(`${'a'.repeat(5_000)}!`, { cpu: '1' })] }), [set])).toThrow('no containers match');
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
