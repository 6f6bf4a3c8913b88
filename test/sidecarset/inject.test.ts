import { describe, expect, it } from '@jest/globals';
import type { Container, Pod } from '../../lib/kube/types.ts';
import { currentRevisionName } from '../../lib/sidecarset/revisions.ts';
import { memoisedStoredSetFacts, storedSetFacts } from '../../lib/sidecarset/stored-set-facts.ts';
import { injectPod, PatchPodMetadataError, type InjectionInput } from '../../lib/sidecarset/inject.ts';
import { UnknownNamespaceError } from '../../lib/sidecarset/match.ts';
import { InvalidHashAnnotationError } from '../../lib/sidecarset/pod-annotations.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { NOW, pod, sidecar, sidecarSet } from '../../testkit/sidecarset-objects.ts';

function inject(p: Pod, sets: SidecarSet[], extra: Partial<InjectionInput> = {}) {
  return injectPod({ pod: p, namespace: 'default', sidecarSets: sets, namespaceLabels: new Map(), now: NOW, ...extra });
}
const names = (cs: Container[] | undefined) => (cs ?? []).map((c) => c.name);
const containers = (p: Pod) => p.spec!.containers;

describe('which SidecarSets apply', () => {
  it.each<[string, SidecarSet, Partial<InjectionInput>, boolean]>([
    ['a matching selector', sidecarSet('s'), {}, true],
    ['a selector that does not match', sidecarSet('s', { selector: { matchLabels: { app: 'db' } } }), {}, false],
    ['the same namespace', sidecarSet('s', { namespace: 'default' }), {}, true],
    ['another namespace', sidecarSet('s', { namespace: 'other' }), {}, false],
    ['the request namespace, not object.metadata', sidecarSet('s', { namespace: 'team' }), { namespace: 'team' }, true],
    ['a namespaceSelector matching the namespace labels', sidecarSet('s', { namespaceSelector: { matchLabels: { env: 'prod' } } }), { namespaceLabels: new Map([['default', { env: 'prod' }]]) }, true],
    ['a namespaceSelector not matching', sidecarSet('s', { namespaceSelector: { matchLabels: { env: 'prod' } } }), { namespaceLabels: new Map([['default', { env: 'dev' }]]) }, false],
    ['paused injection', sidecarSet('s', { injectionStrategy: { paused: true } }), {}, false],
  ])('%s', (_name, set, extra, applies) => {
    const result = inject(pod(), [set], extra);
    expect(result.applied).toEqual(applies ? ['s'] : []);
    expect(names(containers(result.pod)).includes('s-sidecar')).toBe(applies);
  });

  it('returns the pod untouched when nothing applies', () => {
    const p = pod({ labels: { app: 'other' } });
    expect(inject(p, [sidecarSet('s')]).pod).toBe(p);
  });

  it('cannot decide when a namespaceSelector needs an unknown namespace', () => {
    const set = sidecarSet('s', { namespaceSelector: { matchLabels: { env: 'prod' } } });
    expect(() => inject(pod(), [set])).toThrow(UnknownNamespaceError);
  });
});

describe('containers', () => {
  it('adds IS_INJECTED=true after the sidecar own env', () => {
    const set = sidecarSet('s', { containers: [sidecar('s-sidecar', { env: [{ name: 'A', value: '1' }] })] });
    expect(containers(inject(pod(), [set]).pod)[0]!.env).toEqual([
      { name: 'A', value: '1' },
      { name: 'IS_INJECTED', value: 'true' },
    ]);
  });

  it('copies transferEnv values from the named app container after IS_INJECTED, own names winning', () => {
    const set = sidecarSet('s', {
      containers: [
        sidecar('s-sidecar', {
          env: [{ name: 'OWN', value: 'mine' }],
          transferEnv: [
            { sourceContainerName: 'app', envName: 'TZ' },
            { sourceContainerName: 'app', envNames: ['OWN', 'REGION'] },
            { sourceContainerName: 'missing', envName: 'TZ2' },
          ],
        }),
      ],
    });
    const p = pod({ containers: [{ name: 'app', image: 'a', env: [{ name: 'TZ', value: 'UTC' }, { name: 'OWN', value: 'app' }, { name: 'REGION', value: 'eu' }] }] });
    expect(containers(inject(p, [set]).pod)[0]!.env).toEqual([
      { name: 'OWN', value: 'mine' },
      { name: 'IS_INJECTED', value: 'true' },
      { name: 'TZ', value: 'UTC' },
      { name: 'REGION', value: 'eu' },
    ]);
  });

  it('resolves the transferEnv source container from a pod label', () => {
    const set = sidecarSet('s', {
      containers: [sidecar('s-sidecar', { transferEnv: [{ sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.labels['main']" } }, envName: 'TZ' }] })],
    });
    const p = pod({ labels: { app: 'web', main: 'app' }, containers: [{ name: 'app', image: 'a', env: [{ name: 'TZ', value: 'UTC' }] }] });
    expect(containers(inject(p, [set]).pod)[0]!.env).toContainEqual({ name: 'TZ', value: 'UTC' });
  });

  it('shares app volumeMounts when shareVolumePolicy is enabled, de-duplicated by mountPath, own mounts winning', () => {
    const set = sidecarSet('s', {
      volumes: [{ name: 'own' }],
      containers: [sidecar('s-sidecar', { shareVolumePolicy: { type: 'enabled' }, volumeMounts: [{ name: 'own', mountPath: '/data' }] })],
    });
    const p = pod({
      containers: [
        { name: 'app', image: 'a', volumeMounts: [{ name: 'data', mountPath: '/data' }, { name: 'logs', mountPath: '/logs' }] },
        { name: 'other-sidecar', image: 'b', env: [{ name: 'IS_INJECTED', value: 'true' }], volumeMounts: [{ name: 'x', mountPath: '/x' }] },
      ],
    });
    expect(containers(inject(p, [set]).pod)[0]!.volumeMounts).toEqual([
      { name: 'own', mountPath: '/data' },
      { name: 'logs', mountPath: '/logs' },
    ]);
  });

  it('does not share mounts when shareVolumePolicy is disabled', () => {
    const p = pod({ containers: [{ name: 'app', image: 'a', volumeMounts: [{ name: 'logs', mountPath: '/logs' }] }] });
    expect(containers(inject(p, [sidecarSet('s')]).pod)[0]!.volumeMounts).toBeUndefined();
  });

  it('copies the env a shared subPathExpr refers to', () => {
    const set = sidecarSet('s', { containers: [sidecar('s-sidecar', { shareVolumePolicy: { type: 'enabled' } })] });
    const p = pod({
      containers: [{ name: 'app', image: 'a', env: [{ name: 'POD', value: 'p1' }], volumeMounts: [{ name: 'logs', mountPath: '/logs', subPathExpr: 'x/$(POD)' }] }],
    });
    expect(containers(inject(p, [set]).pod)[0]!.env).toContainEqual({ name: 'POD', value: 'p1' });
  });

  it('puts BeforeAppContainer sidecars first and AfterAppContainer ones last', () => {
    const set = sidecarSet('s', { containers: [sidecar('after', { podInjectPolicy: 'AfterAppContainer' }), sidecar('before')] });
    expect(names(containers(inject(pod(), [set]).pod))).toEqual(['before', 'app', 'after']);
  });

  it('orders sidecars by SidecarSet name, then as the set lists them', () => {
    const zeta = sidecarSet('zeta', { containers: [sidecar('z1'), sidecar('z2')] });
    const alpha = sidecarSet('alpha', { containers: [sidecar('a1')] });
    expect(names(containers(inject(pod(), [zeta, alpha]).pod))).toEqual(['a1', 'z1', 'z2', 'app']);
  });

  it('sorts the sidecars of all sets by container name when asked (Kruise 1.9’s EnableSortSidecarContainerByName), each then before or after the apps by its policy', () => {
    const zeta = sidecarSet('zeta', {
      containers: [
        sidecar('z-proxy'),
        sidecar('b-hot', { upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } }),
        sidecar('mesh', { podInjectPolicy: 'AfterAppContainer' }),
      ],
    });
    const alpha = sidecarSet('alpha', { containers: [sidecar('x-log', { podInjectPolicy: 'AfterAppContainer' }), sidecar('y-dns')] });
    expect(names(containers(inject(pod(), [zeta, alpha], { sortSidecarsByName: true }).pod))).toEqual(['b-hot-1', 'b-hot-2', 'y-dns', 'z-proxy', 'app', 'mesh', 'x-log']);
    // Off (the default): the sets by name, each as written.
    expect(names(containers(inject(pod(), [zeta, alpha]).pod))).toEqual(['y-dns', 'z-proxy', 'b-hot-1', 'b-hot-2', 'app', 'x-log', 'mesh']);
  });

  it('replaces a pod container of the same name in place', () => {
    const p = pod({ containers: [{ name: 'app', image: 'a' }, { name: 's-sidecar', image: 'old' }] });
    const out = containers(inject(p, [sidecarSet('s')]).pod);
    expect(names(out)).toEqual(['app', 's-sidecar']);
    expect(out[1]!.image).toBe('s:1.0');
  });

  it('never puts SidecarContainer-only fields into the pod', () => {
    const set = sidecarSet('s', { containers: [sidecar('s-sidecar', { transferEnv: [{ sourceContainerName: 'app', envName: 'X' }] })] });
    const injected = containers(inject(pod(), [set]).pod)[0]!;
    for (const key of ['podInjectPolicy', 'upgradeStrategy', 'shareVolumePolicy', 'transferEnv']) expect(injected).not.toHaveProperty(key);
  });
});

describe('a sidecar\'s container, byte for byte', () => {
  // The text the answer's patch carries: the template's members in its order (sidecar-only fields left out),
  // then the members written for this pod; memoised (frozen templates) or not. Written by the code before
  // sidecars were made straight from their templates, and kept so.
  const set = sidecarSet('order', {
    containers: [
      { podInjectPolicy: 'BeforeAppContainer', name: 'first', shareVolumePolicy: { type: 'enabled' }, image: 'first:1', transferEnv: [{ sourceContainerName: 'app', envName: 'LOG' }], volumeMounts: [{ name: 'data', mountPath: '/data' }], upgradeStrategy: { upgradeType: 'ColdUpgrade' }, resources: { limits: { cpu: '1' } } },
      { env: [{ name: 'OWN', value: '1' }], name: 'second', image: 'second:1', shareVolumePolicy: { type: 'disabled' }, imagePullPolicy: 'Always' },
    ],
    volumes: [{ name: 'data', emptyDir: {} }],
  });
  const stored: SidecarSet = { ...set, metadata: { ...set.metadata, uid: 'u-order', resourceVersion: '7' } };
  const p = pod({ containers: [{ name: 'app', image: 'app:1', env: [{ name: 'LOG', value: 'json' }], volumeMounts: [{ name: 'cfg', mountPath: '/etc/app', subPathExpr: '$(LOG)' }] }] });
  const want =
    '[{"name":"first","image":"first:1","volumeMounts":[{"name":"data","mountPath":"/data"},{"name":"cfg","mountPath":"/etc/app","subPathExpr":"$(LOG)"}],"resources":{"limits":{"cpu":"1"}},"imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","env":[{"name":"IS_INJECTED","value":"true"},{"name":"LOG","value":"json"}]},' +
    '{"env":[{"name":"OWN","value":"1"},{"name":"IS_INJECTED","value":"true"}],"name":"second","image":"second:1","imagePullPolicy":"Always","terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"},' +
    '{"name":"app","image":"app:1","env":[{"name":"LOG","value":"json"}],"volumeMounts":[{"name":"cfg","mountPath":"/etc/app","subPathExpr":"$(LOG)"}]}]';

  it.each([
    ['from a memo of the stored set', () => memoisedStoredSetFacts().factsOf],
    ['worked out for this pod', () => storedSetFacts],
  ])('is the template\'s members in its order, then the pod\'s, %s', (_how, factsOf) => {
    const facts = factsOf();
    for (let i = 0; i < 2; i++) {
      const injected = inject(p, [stored], { factsOf: facts }).pod;
      expect(JSON.stringify(containers(injected))).toBe(want);
      // Nothing of the template shows on the container itself.
      const first = containers(injected)[0] as Container;
      expect(Object.keys(first)).toEqual(['name', 'image', 'volumeMounts', 'resources', 'imagePullPolicy', 'terminationMessagePath', 'terminationMessagePolicy', 'env']);
      expect(first).toEqual({ ...first });
      expect(JSON.parse(JSON.stringify(first))).toEqual(first);
    }
  });
});

describe('init containers', () => {
  it('sorts injected init containers by name and puts AfterAppContainer ones after the pod own', () => {
    const set = sidecarSet('s', { containers: [], initContainers: [sidecar('init-b'), sidecar('init-a')] });
    const p = pod({ initContainers: [{ name: 'own', image: 'o' }] });
    expect(names(inject(p, [set]).pod.spec!.initContainers)).toEqual(['own', 'init-a', 'init-b']);
  });

  it('puts BeforeAppContainer init containers before the pod own', () => {
    const set = sidecarSet('s', { containers: [], initContainers: [sidecar('first', { podInjectPolicy: 'BeforeAppContainer' })] });
    const p = pod({ initContainers: [{ name: 'own', image: 'o' }] });
    expect(names(inject(p, [set]).pod.spec!.initContainers)).toEqual(['first', 'own']);
  });
});

describe('volumes and pull secrets', () => {
  it('adds only the set volumes a sidecar mounts, the pod volume of the same name winning', () => {
    const set = sidecarSet('s', {
      volumes: [{ name: 'used', emptyDir: {} }, { name: 'unused', emptyDir: {} }, { name: 'shared', emptyDir: { medium: 'Memory' } }],
      containers: [sidecar('s-sidecar', { volumeMounts: [{ name: 'used', mountPath: '/u' }, { name: 'shared', mountPath: '/s' }] })],
    });
    const p = pod({ spec: { volumes: [{ name: 'shared', configMap: { name: 'cm' } }] } });
    expect(inject(p, [set]).pod.spec!.volumes).toEqual([
      { name: 'shared', configMap: { name: 'cm' } },
      { name: 'used', emptyDir: {} },
    ]);
  });

  it('appends imagePullSecrets de-duplicated by name, the pod first', () => {
    const set = sidecarSet('s', { imagePullSecrets: [{ name: 'shared' }, { name: 'extra' }] });
    const p = pod({ spec: { imagePullSecrets: [{ name: 'own' }, { name: 'shared' }] } });
    expect(inject(p, [set]).pod.spec!.imagePullSecrets).toEqual([{ name: 'own' }, { name: 'shared' }, { name: 'extra' }]);
  });
});

describe('patchPodMetadata', () => {
  const withPatch = (patchPolicy: string, annotations: Record<string, string>) =>
    sidecarSet('s', { patchPodMetadata: [{ patchPolicy, annotations }] });
  it.each<[string, string, Record<string, string>, Record<string, string> | undefined, string]>([
    ['Retain sets an absent key', 'Retain', { k: 'new' }, undefined, 'new'],
    ['Retain keeps an existing key', 'Retain', { k: 'new' }, { k: 'old' }, 'old'],
    ['Overwrite replaces an existing key', 'Overwrite', { k: 'new' }, { k: 'old' }, 'new'],
    ['MergePatchJson merges into existing JSON', 'MergePatchJson', { k: '{"b":2,"c":null}' }, { k: '{"a":1,"c":3}' }, '{"a":1,"b":2}'],
    ['MergePatchJson sets an absent key', 'MergePatchJson', { k: '{"b":2}' }, undefined, '{"b":2}'],
  ])('%s', (_name, policy, patch, existing, expected) => {
    const out = inject(pod(existing ? { annotations: existing } : {}), [withPatch(policy, patch)]);
    expect(out.pod.metadata!.annotations!.k).toBe(expected);
  });

  it.each(['Retain', 'Overwrite', 'MergePatchJson'])('%s writes a key named __proto__ as an annotation, not as the prototype', (policy) => {
    // A set stored before validation refused such keys; JSON.parse makes the key an own property, as the API server's JSON does.
    const annotations = JSON.parse('{"__proto__": "{\\"x\\":1}"}') as Record<string, string>;
    const out = inject(pod(), [withPatch(policy, annotations)]).pod.metadata!.annotations!;
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toBe('{"x":1}');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it('refuses to merge into an annotation that is not JSON', () => {
    expect(() => inject(pod({ annotations: { k: 'plain' } }), [withPatch('MergePatchJson', { k: '{"b":2}' })])).toThrow(PatchPodMetadataError);
  });
});

describe('annotations', () => {
  it('records the hash, sidecar list and injected list', () => {
    const set = sidecarSet('s', { containers: [sidecar('b'), sidecar('a')], status: undefined });
    const hash = set.metadata!.annotations!['kruise.io/sidecarset-hash']!;
    const annotations = inject(pod(), [set]).pod.metadata!.annotations!;
    expect(JSON.parse(annotations['kruise.io/sidecarset-hash']!)).toEqual({
      s: { updateTimestamp: '2026-11-30T12:00:00Z', hash, sidecarSetName: 's', sidecarList: ['a', 'b'], controllerRevision: currentRevisionName(set) },
    });
    expect(JSON.parse(annotations['kruise.io/sidecarset-hash-without-image']!).s.hash).toBe(
      set.metadata!.annotations!['kruise.io/sidecarset-hash-without-image'],
    );
    expect(annotations['kruise.io/sidecarset-injected-list']).toBe('s');
  });

  it('writes the fields in Kruise order, controllerRevision in the hash annotation only', () => {
    const set = { ...sidecarSet('s'), status: { latestRevision: currentRevisionName(sidecarSet('s')) } };
    const text = inject(pod(), [set]).pod.metadata!.annotations!['kruise.io/sidecarset-hash']!;
    expect(Object.keys(JSON.parse(text).s)).toEqual(['updateTimestamp', 'hash', 'sidecarSetName', 'sidecarList', 'controllerRevision']);
    const without = inject(pod(), [set]).pod.metadata!.annotations!['kruise.io/sidecarset-hash-without-image']!;
    expect(JSON.parse(without).s).not.toHaveProperty('controllerRevision');
  });

  it('records the revision name computed from the spec and collisionCount, not a lagging status.latestRevision', () => {
    const before = sidecarSet('s');
    const changed = sidecarSet('s', { containers: [sidecar('s-sidecar', { image: 'sidecar:2' })] });
    // The spec just changed: status still names the previous revision until the reconciler runs.
    const lagging = { ...changed, status: { latestRevision: currentRevisionName(before), collisionCount: 1 } };
    const recorded = (set: SidecarSet): unknown => (JSON.parse(inject(pod(), [set]).pod.metadata!.annotations!['kruise.io/sidecarset-hash']!) as Record<string, { controllerRevision?: string }>).s?.controllerRevision;
    expect(recorded(lagging)).toBe(currentRevisionName(changed, 1));
    expect(recorded(lagging)).not.toBe(currentRevisionName(before));
    expect(currentRevisionName(changed, 1)).not.toBe(currentRevisionName(changed, 0));
  });

  it('lists native-sidecar init containers in sidecarList, not plain ones', () => {
    const set = sidecarSet('s', { containers: [sidecar('c')], initContainers: [sidecar('native', { restartPolicy: 'Always' }), sidecar('plain')], updateStrategy: { type: 'NotUpdate' } });
    const text = inject(pod(), [set]).pod.metadata!.annotations!['kruise.io/sidecarset-hash']!;
    expect(JSON.parse(text).s.sidecarList).toEqual(['c', 'native']);
  });

  it('keeps other sets entries and converts the old string form', () => {
    const p = pod({ annotations: { 'kruise.io/sidecarset-hash': '{"other":"abc"}', 'kruise.io/sidecarset-injected-list': 'other' } });
    const annotations = inject(p, [sidecarSet('s')]).pod.metadata!.annotations!;
    expect(JSON.parse(annotations['kruise.io/sidecarset-hash']!).other).toEqual({ updateTimestamp: null, hash: 'abc', sidecarSetName: 'other', sidecarList: null });
    expect(annotations['kruise.io/sidecarset-injected-list']).toBe('other,s');
  });

  it('refuses a hash annotation that is not JSON', () => {
    expect(() => inject(pod({ annotations: { 'kruise.io/sidecarset-hash': 'garbage' } }), [sidecarSet('s')])).toThrow(InvalidHashAnnotationError);
  });
});

describe('idempotence', () => {
  it('changes nothing when the injected pod is injected again later', () => {
    const sets = [
      sidecarSet('alpha', { containers: [sidecar('a1', { shareVolumePolicy: { type: 'enabled' } })], initContainers: [sidecar('ai')], imagePullSecrets: [{ name: 'reg' }], volumes: [{ name: 'v' }], patchPodMetadata: [{ patchPolicy: 'MergePatchJson', annotations: { m: '{"x":1}' } }] }),
      sidecarSet('zeta', { containers: [sidecar('z1', { podInjectPolicy: 'AfterAppContainer', volumeMounts: [{ name: 'v', mountPath: '/v' }] })], volumes: [{ name: 'v' }] }),
    ];
    const p = pod({ containers: [{ name: 'app', image: 'a', volumeMounts: [{ name: 'd', mountPath: '/d' }] }] });
    const once = inject(p, sets).pod;
    const twice = inject(once, sets, { now: new Date('2026-12-01T00:00:00Z') }).pod;
    expect(twice).toEqual(once);
  });

  it('does not modify the pod it was given', () => {
    const p = pod();
    const copy = structuredClone(p);
    inject(p, [sidecarSet('s')]);
    expect(p).toEqual(copy);
  });
});
