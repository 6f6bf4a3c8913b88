/**
 * HotUpgrade injection (rollout.md §3.1): a HotUpgrade sidecar `x` goes into
 * the pod as `x-1` (working, the set's image) and `x-2` (the empty image),
 * with their version envs and annotations, as Kruise 1.8.2 writes them.
 */
import { describe, expect, it } from '@jest/globals';
import type { Container, Pod } from '../../lib/kube/types.ts';
import { injectPod, InjectionTooLargeError } from '../../lib/sidecarset/inject.ts';
import type { SidecarContainer, SidecarSet } from '../../lib/sidecarset/types.ts';
import { NOW, pod, sidecar, sidecarSet } from '../../testkit/sidecarset-objects.ts';

const WORKING = 'kruise.io/sidecarset-working-hotupgrade-container';
const hot = (extra: Partial<SidecarContainer> = {}): Partial<SidecarContainer> => ({
  upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
  ...extra,
});

function inject(p: Pod, sets: SidecarSet[]) {
  return injectPod({ pod: p, namespace: 'default', sidecarSets: sets, namespaceLabels: new Map(), now: NOW });
}
const names = (cs: Container[] | undefined) => (cs ?? []).map((c) => c.name);
const versionEnv = (name: string) => [
  { name: 'SIDECARSET_VERSION', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['version.sidecarset.kruise.io/${name}']` } } },
  { name: 'SIDECARSET_VERSION_ALT', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['versionalt.sidecarset.kruise.io/${name}']` } } },
];

describe('a HotUpgrade sidecar', () => {
  it('becomes x-1 with the set image and x-2 with the empty image, in its place, with no warning', () => {
    const set = sidecarSet('s', { containers: [sidecar('mesh', hot({ podInjectPolicy: 'AfterAppContainer' }))] });
    const result = inject(pod(), [set]);
    const cs = result.pod.spec!.containers;
    expect(names(cs)).toEqual(['app', 'mesh-1', 'mesh-2']);
    expect(cs[1]!.image).toBe('mesh:1.0');
    expect(cs[2]!.image).toBe('empty:1');
    expect(result.warnings).toEqual([]);
  });

  it('gives both containers the built env, then their own SIDECARSET_VERSION and SIDECARSET_VERSION_ALT', () => {
    const set = sidecarSet('s', {
      containers: [sidecar('mesh', hot({ env: [{ name: 'A', value: '1' }], transferEnv: [{ sourceContainerName: 'app', envName: 'TZ' }] }))],
    });
    const p = pod({ containers: [{ name: 'app', image: 'app:1', env: [{ name: 'TZ', value: 'UTC' }] }] });
    const cs = inject(p, [set]).pod.spec!.containers;
    const built = [{ name: 'A', value: '1' }, { name: 'IS_INJECTED', value: 'true' }, { name: 'TZ', value: 'UTC' }];
    expect(cs.find((c) => c.name === 'mesh-1')!.env).toEqual([...built, ...versionEnv('mesh-1')]);
    expect(cs.find((c) => c.name === 'mesh-2')!.env).toEqual([...built, ...versionEnv('mesh-2')]);
  });

  it('appends the version envs even when the sidecar declares one itself, as Kruise does', () => {
    const set = sidecarSet('s', { containers: [sidecar('mesh', hot({ env: [{ name: 'SIDECARSET_VERSION', value: 'mine' }] }))] });
    const env = inject(pod(), [set]).pod.spec!.containers.find((c) => c.name === 'mesh-1')!.env!;
    expect(env.map((e) => e.name)).toEqual(['SIDECARSET_VERSION', 'IS_INJECTED', 'SIDECARSET_VERSION', 'SIDECARSET_VERSION_ALT']);
  });

  it('shares the app mounts into both containers, never as one object in two places', () => {
    const set = sidecarSet('s', { containers: [sidecar('mesh', hot({ shareVolumePolicy: { type: 'enabled' } }))] });
    const p = pod({ containers: [{ name: 'app', image: 'app:1', volumeMounts: [{ name: 'd', mountPath: '/d' }] }] });
    const cs = inject(p, [set]).pod.spec!.containers;
    const [one, two] = [cs.find((c) => c.name === 'mesh-1')!, cs.find((c) => c.name === 'mesh-2')!];
    expect(one.volumeMounts).toEqual([{ name: 'd', mountPath: '/d' }]);
    expect(two.volumeMounts).toEqual(one.volumeMounts);
    expect(two.volumeMounts).not.toBe(one.volumeMounts);
    expect(two.env![0]).not.toBe(one.env![0]);
  });

  it('writes the initial versions and the working container, and lists the sidecar by its own name', () => {
    const set = sidecarSet('s', { containers: [sidecar('mesh', hot()), sidecar('log')] });
    const annotations = inject(pod(), [set]).pod.metadata!.annotations!;
    expect(annotations).toMatchObject({
      'version.sidecarset.kruise.io/mesh-1': '1',
      'versionalt.sidecarset.kruise.io/mesh-1': '0',
      'version.sidecarset.kruise.io/mesh-2': '0',
      'versionalt.sidecarset.kruise.io/mesh-2': '1',
      [WORKING]: '{"mesh":"mesh-1"}',
    });
    expect(JSON.parse(annotations['kruise.io/sidecarset-hash']!).s.sidecarList).toEqual(['log', 'mesh']);
    expect(JSON.parse(annotations['kruise.io/sidecarset-hash-without-image']!).s.sidecarList).toEqual(['log', 'mesh']);
    expect(Object.keys(annotations).filter((k) => k.includes('version')).length).toBe(4);
  });

  it('merges the working map with the pod own entries, keys in byte order, a non-string entry kept as "" as Go decodes it', () => {
    const sets = [sidecarSet('a', { containers: [sidecar('zed', hot())] }), sidecarSet('b', { containers: [sidecar('mesh', hot())] })];
    const p = pod({ annotations: { [WORKING]: '{"other":"other-2","num":1}' } });
    expect(inject(p, sets).pod.metadata!.annotations![WORKING]).toBe('{"mesh":"mesh-1","num":"","other":"other-2","zed":"zed-1"}');
  });

  it('replaces a working map that is not a JSON object, as Kruise reads it as empty', () => {
    const set = sidecarSet('s', { containers: [sidecar('mesh', hot())] });
    for (const text of ['garbage', '[1]', 'null', '']) {
      expect(inject(pod({ annotations: { [WORKING]: text } }), [set]).pod.metadata!.annotations![WORKING]).toBe('{"mesh":"mesh-1"}');
    }
  });

  it('writes no hot-upgrade annotation for a set without HotUpgrade sidecars', () => {
    const annotations = inject(pod(), [sidecarSet('s')]).pod.metadata!.annotations!;
    expect(Object.keys(annotations).filter((k) => k.includes('version') || k === WORKING)).toEqual([]);
  });

  it('overwrites version annotations patchPodMetadata wrote, as Kruise applies its own last', () => {
    const set = sidecarSet('s', {
      containers: [sidecar('mesh', hot())],
      patchPodMetadata: [{ patchPolicy: 'Overwrite', annotations: { 'version.sidecarset.kruise.io/mesh-1': '7' } }],
    });
    expect(inject(pod(), [set]).pod.metadata!.annotations!['version.sidecarset.kruise.io/mesh-1']).toBe('1');
  });

  it('splits a native-sidecar init container, not a plain one', () => {
    const set = sidecarSet('s', {
      containers: [sidecar('c')],
      initContainers: [sidecar('native', hot({ restartPolicy: 'Always' })), sidecar('plain', hot())],
      updateStrategy: { type: 'NotUpdate' },
    });
    const result = inject(pod(), [set]).pod;
    const inits = result.spec!.initContainers!;
    expect(names(inits)).toEqual(['native-1', 'native-2', 'plain']);
    expect(inits[1]!.image).toBe('empty:1');
    expect(inits[2]!.env).toEqual([{ name: 'IS_INJECTED', value: 'true' }]);
    expect(JSON.parse(result.metadata!.annotations![WORKING]!)).toEqual({ native: 'native-1' });
    expect(JSON.parse(result.metadata!.annotations!['kruise.io/sidecarset-hash']!).s.sidecarList).toEqual(['c', 'native']);
  });

  it('leaves the empty image out when the set has none (a set stored before validation required it), as Go omits it', () => {
    const set = sidecarSet('s', { containers: [sidecar('mesh', { upgradeStrategy: { upgradeType: 'HotUpgrade' } })] });
    expect(inject(pod(), [set]).pod.spec!.containers.find((c) => c.name === 'mesh-2')).not.toHaveProperty('image');
  });

  it('changes nothing when the injected pod is injected again', () => {
    const set = sidecarSet('s', { containers: [sidecar('mesh', hot({ shareVolumePolicy: { type: 'enabled' } }))] });
    const p = pod({ containers: [{ name: 'app', image: 'app:1', volumeMounts: [{ name: 'd', mountPath: '/d' }] }] });
    const once = inject(p, [set]).pod;
    expect(injectPod({ pod: once, namespace: 'default', sidecarSets: [set], namespaceLabels: new Map(), now: new Date('2027-01-01T00:00:00Z') }).pod).toEqual(once);
  });

  it('counts the shared mounts twice in the answer-size bound', () => {
    const mounts = Array.from({ length: 20 }, (_, i) => ({ name: 'd', mountPath: `/data/path-number-${i}` }));
    const p = pod({ containers: [{ name: 'app', image: 'app:1', volumeMounts: mounts }] });
    const cold = sidecarSet('s', { containers: [sidecar('mesh', { shareVolumePolicy: { type: 'enabled' } })] });
    const hotSet = sidecarSet('s', { containers: [sidecar('mesh', hot({ shareVolumePolicy: { type: 'enabled' } }))] });
    const oneCopy = 20 * (JSON.stringify(mounts[10]).length + 1);
    // The bound is the copies less the whole pod (which holds one copy already): below two copies'
    // bound the hot sidecar is refused, while one copy's bound is not even positive.
    const limit = 2 * oneCopy - JSON.stringify(p).length - 100;
    expect(limit).toBeGreaterThan(0);
    expect(oneCopy - JSON.stringify(p).length).toBeLessThan(0);
    const input = { pod: p, namespace: 'default', namespaceLabels: new Map(), now: NOW, maxGrowthBytes: limit };
    expect(() => injectPod({ ...input, sidecarSets: [cold] })).not.toThrow();
    expect(() => injectPod({ ...input, sidecarSets: [hotSet] })).toThrow(InjectionTooLargeError);
  });
});
