import { describe, expect, it } from '@jest/globals';
import type { Container, Pod } from '../../lib/kube/types.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import type { SidecarContainer, SidecarSet } from '../../lib/sidecarset/types.ts';
import { NOW, pod, sidecar, sidecarSet } from '../../testkit/sidecarset-objects.ts';

function inject(p: Pod, sets: SidecarSet[]): Pod {
  return injectPod({ pod: p, namespace: 'default', sidecarSets: sets, namespaceLabels: new Map(), now: NOW }).pod;
}
const named = (p: Pod, name: string): Container | undefined => p.spec!.containers.find((c) => c.name === name);

const apps: Container[] = [
  { name: 'db', image: 'db:1', volumeDevices: [{ name: 'disk', devicePath: '/dev/xvda' }, { name: 'scratch', devicePath: '/dev/xvdb' }], volumeMounts: [{ name: 'data', mountPath: '/data' }] },
  { name: 'web', image: 'web:1', volumeDevices: [{ name: 'disk2', devicePath: '/dev/xvda' }, { name: 'raw', devicePath: '/raw' }] },
];

function setWith(extra: Partial<SidecarContainer>, spec: Record<string, unknown> = {}): SidecarSet {
  return sidecarSet('dev', { containers: [sidecar('agent', extra)], ...spec });
}

describe('shareVolumeDevicePolicy (OpenKruise 1.9)', () => {
  it('gives the sidecar the app containers\' devices after its own, each device path once, none at a path it uses', () => {
    const set = setWith({
      shareVolumeDevicePolicy: { type: 'enabled' },
      shareVolumePolicy: { type: 'enabled' },
      volumeDevices: [{ name: 'own', devicePath: '/dev/own' }],
      volumeMounts: [{ name: 'cfg', mountPath: '/dev/xvdb' }],
    }, { volumes: [{ name: 'own', persistentVolumeClaim: { claimName: 'own' } }, { name: 'cfg', emptyDir: {} }] });
    // "/raw" is taken by a shared mount: Kruise merges the mounts first.
    const withRawMount = pod({ containers: [...apps, { name: 'logs', image: 'l:1', volumeMounts: [{ name: 'r', mountPath: '/raw' }] }] });
    const injected = inject(withRawMount, [set]);
    expect(named(injected, 'agent')?.volumeDevices).toEqual([
      { name: 'own', devicePath: '/dev/own' },
      { name: 'disk', devicePath: '/dev/xvda' },
    ]);
    // The sidecar's own device brings its volume, as 1.9 injects it.
    expect(injected.spec!.volumes?.map((v) => v.name)).toContain('own');
  });

  it('shares every app device path once', () => {
    const injected = inject(pod({ containers: apps }), [setWith({ shareVolumeDevicePolicy: { type: 'enabled' } })]);
    expect(named(injected, 'agent')?.volumeDevices).toEqual([
      { name: 'disk', devicePath: '/dev/xvda' },
      { name: 'scratch', devicePath: '/dev/xvdb' },
      { name: 'raw', devicePath: '/raw' },
    ]);
  });

  it.each<[string, Partial<SidecarContainer>]>([
    ['absent', {}],
    ['disabled', { shareVolumeDevicePolicy: { type: 'disabled' } }],
  ])('shares nothing when %s, and the pod never carries the policy', (_name, extra) => {
    const injected = inject(pod({ containers: apps }), [setWith(extra)]);
    expect(named(injected, 'agent')).not.toHaveProperty('volumeDevices');
    expect(named(injected, 'agent')).not.toHaveProperty('shareVolumeDevicePolicy');
  });

  it('does not share the devices of sidecars already injected, and a reinvocation changes nothing', () => {
    const sets = [setWith({ shareVolumeDevicePolicy: { type: 'enabled' } }), sidecarSet('other', { containers: [sidecar('other', { volumeDevices: [{ name: 'o', devicePath: '/dev/o' }] })] })];
    const once = inject(pod({ containers: apps }), sets);
    expect((named(once, 'agent')?.volumeDevices as { devicePath: string }[]).map((d) => d.devicePath)).toEqual(['/dev/xvda', '/dev/xvdb', '/raw']);
    expect(named(once, 'agent')).not.toHaveProperty('shareVolumeDevicePolicy');
    expect(inject(once, sets)).toEqual(once);
  });
});
