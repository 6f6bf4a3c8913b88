import { describe, expect, it } from '@jest/globals';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { sidecarSetHash, sidecarSetHashWithoutImage } from '../../lib/sidecarset/hash.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

function minimal(): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'test' },
    spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'sidecar', image: 'busybox:1.36' }] },
  };
}

/** Reads a dotted/indexed path such as `spec.containers[0].imagePullPolicy`. */
function at(obj: unknown, path: string): unknown {
  return path
    .split(/\.|\[(\d+)\]/)
    .filter((p): p is string => typeof p === 'string' && p !== '')
    .reduce<unknown>((o, key) => (o === undefined || o === null ? undefined : (o as Record<string, unknown>)[key]), obj);
}

type Case = [name: string, tweak: (s: SidecarSet) => void, path: string, expected: unknown];

describe('defaultSidecarSet', () => {
  it.each<Case>([
    ['sets updateStrategy.type to RollingUpdate', () => undefined, 'spec.updateStrategy.type', 'RollingUpdate'],
    ['keeps an explicit NotUpdate', (s) => (s.spec!.updateStrategy = { type: 'NotUpdate' }), 'spec.updateStrategy.type', 'NotUpdate'],
    ['sets maxUnavailable to the integer 1', () => undefined, 'spec.updateStrategy.maxUnavailable', 1],
    ['keeps maxUnavailable 0', (s) => (s.spec!.updateStrategy = { maxUnavailable: 0 }), 'spec.updateStrategy.maxUnavailable', 0],
    ['keeps a percentage maxUnavailable', (s) => (s.spec!.updateStrategy = { maxUnavailable: '20%' }), 'spec.updateStrategy.maxUnavailable', '20%'],
    ['sets partition to the integer 0', () => undefined, 'spec.updateStrategy.partition', 0],
    ['keeps partition 3', (s) => (s.spec!.updateStrategy = { partition: 3 }), 'spec.updateStrategy.partition', 3],
    ['gives containers BeforeAppContainer', () => undefined, 'spec.containers[0].podInjectPolicy', 'BeforeAppContainer'],
    ['keeps a container AfterAppContainer', (s) => (s.spec!.containers![0]!.podInjectPolicy = 'AfterAppContainer'), 'spec.containers[0].podInjectPolicy', 'AfterAppContainer'],
    ['gives init containers AfterAppContainer', (s) => (s.spec!.initContainers = [{ name: 'init', image: 'x:1' }]), 'spec.initContainers[0].podInjectPolicy', 'AfterAppContainer'],
    ['sets upgradeType ColdUpgrade', () => undefined, 'spec.containers[0].upgradeStrategy.upgradeType', 'ColdUpgrade'],
    ['keeps HotUpgrade', (s) => (s.spec!.containers![0]!.upgradeStrategy = { upgradeType: 'HotUpgrade' }), 'spec.containers[0].upgradeStrategy.upgradeType', 'HotUpgrade'],
    ['sets init container upgradeType ColdUpgrade', (s) => (s.spec!.initContainers = [{ name: 'init', image: 'x:1' }]), 'spec.initContainers[0].upgradeStrategy.upgradeType', 'ColdUpgrade'],
    ['sets shareVolumePolicy disabled', () => undefined, 'spec.containers[0].shareVolumePolicy.type', 'disabled'],
    ['keeps shareVolumePolicy enabled', (s) => (s.spec!.containers![0]!.shareVolumePolicy = { type: 'enabled' }), 'spec.containers[0].shareVolumePolicy.type', 'enabled'],
    ['pulls a tagged image IfNotPresent', () => undefined, 'spec.containers[0].imagePullPolicy', 'IfNotPresent'],
    ['pulls an untagged image Always', (s) => (s.spec!.containers![0]!.image = 'busybox'), 'spec.containers[0].imagePullPolicy', 'Always'],
    ['pulls a :latest image Always', (s) => (s.spec!.containers![0]!.image = 'registry:5000/team/busybox:latest'), 'spec.containers[0].imagePullPolicy', 'Always'],
    ['treats a registry port as no tag', (s) => (s.spec!.containers![0]!.image = 'registry:5000/busybox'), 'spec.containers[0].imagePullPolicy', 'Always'],
    ['counts a digest as a tag', (s) => (s.spec!.containers![0]!.image = `busybox@sha256:${'a'.repeat(64)}`), 'spec.containers[0].imagePullPolicy', 'IfNotPresent'],
    ['keeps an explicit pull policy', (s) => (s.spec!.containers![0]!.imagePullPolicy = 'Never'), 'spec.containers[0].imagePullPolicy', 'Never'],
    ['sets terminationMessagePath', () => undefined, 'spec.containers[0].terminationMessagePath', '/dev/termination-log'],
    ['sets terminationMessagePolicy File', () => undefined, 'spec.containers[0].terminationMessagePolicy', 'File'],
    ['sets port protocol TCP', (s) => (s.spec!.containers![0]!.ports = [{ containerPort: 80 }]), 'spec.containers[0].ports[0].protocol', 'TCP'],
    ['keeps port protocol UDP', (s) => (s.spec!.containers![0]!.ports = [{ containerPort: 53, protocol: 'UDP' }]), 'spec.containers[0].ports[0].protocol', 'UDP'],
    ['sets env fieldRef apiVersion v1', (s) => (s.spec!.containers![0]!.env = [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }]), 'spec.containers[0].env[0].valueFrom.fieldRef.apiVersion', 'v1'],
    ['sets transferEnv fieldRef apiVersion v1', (s) => (s.spec!.containers![0]!.transferEnv = [{ sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.labels['c']" } }, envName: 'E' }]), 'spec.containers[0].transferEnv[0].sourceContainerNameFrom.fieldRef.apiVersion', 'v1'],
    ...(['timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'] as const).flatMap((field, i): Case[] => {
      const expected = [1, 10, 1, 3][i];
      return [
        [`sets livenessProbe.${field}`, (s) => (s.spec!.containers![0]!.livenessProbe = { exec: { command: ['true'] } }), `spec.containers[0].livenessProbe.${field}`, expected],
        [`sets readinessProbe.${field}`, (s) => (s.spec!.containers![0]!.readinessProbe = { tcpSocket: { port: 80 } }), `spec.containers[0].readinessProbe.${field}`, expected],
      ];
    }),
    ['keeps an explicit periodSeconds', (s) => (s.spec!.containers![0]!.livenessProbe = { exec: { command: ['true'] }, periodSeconds: 5 }), 'spec.containers[0].livenessProbe.periodSeconds', 5],
    ['leaves startupProbe alone, as Kruise does', (s) => (s.spec!.containers![0]!.startupProbe = { exec: { command: ['true'] } }), 'spec.containers[0].startupProbe.periodSeconds', undefined],
    ['sets probe httpGet path /', (s) => (s.spec!.containers![0]!.readinessProbe = { httpGet: { port: 8080 } }), 'spec.containers[0].readinessProbe.httpGet.path', '/'],
    ['sets probe httpGet scheme HTTP', (s) => (s.spec!.containers![0]!.livenessProbe = { httpGet: { port: 8080 } }), 'spec.containers[0].livenessProbe.httpGet.scheme', 'HTTP'],
    ['sets preStop httpGet path /', (s) => (s.spec!.containers![0]!.lifecycle = { preStop: { httpGet: { port: 80 } } }), 'spec.containers[0].lifecycle.preStop.httpGet.path', '/'],
    ['sets postStart httpGet scheme HTTP', (s) => (s.spec!.containers![0]!.lifecycle = { postStart: { httpGet: { port: 80 } } }), 'spec.containers[0].lifecycle.postStart.httpGet.scheme', 'HTTP'],
    ['turns a volume without source into emptyDir', (s) => (s.spec!.volumes = [{ name: 'v' }]), 'spec.volumes[0].emptyDir', {}],
    ['leaves a volume with a source alone', (s) => (s.spec!.volumes = [{ name: 'v', nfs: { server: 's', path: '/' } }]), 'spec.volumes[0].emptyDir', undefined],
    ['sets secret defaultMode 420', (s) => (s.spec!.volumes = [{ name: 'v', secret: { secretName: 's' } }]), 'spec.volumes[0].secret.defaultMode', 420],
    ['sets configMap defaultMode 420', (s) => (s.spec!.volumes = [{ name: 'v', configMap: { name: 'c' } }]), 'spec.volumes[0].configMap.defaultMode', 420],
    ['sets downwardAPI defaultMode 420', (s) => (s.spec!.volumes = [{ name: 'v', downwardAPI: { items: [] } }]), 'spec.volumes[0].downwardAPI.defaultMode', 420],
    ['sets projected defaultMode 420', (s) => (s.spec!.volumes = [{ name: 'v', projected: { sources: [] } }]), 'spec.volumes[0].projected.defaultMode', 420],
    ['keeps an explicit defaultMode', (s) => (s.spec!.volumes = [{ name: 'v', secret: { secretName: 's', defaultMode: 256 } }]), 'spec.volumes[0].secret.defaultMode', 256],
    ['sets revisionHistoryLimit 10', () => undefined, 'spec.revisionHistoryLimit', 10],
    ['keeps revisionHistoryLimit 0', (s) => (s.spec!.revisionHistoryLimit = 0), 'spec.revisionHistoryLimit', 0],
    ['sets patchPodMetadata patchPolicy Retain', (s) => (s.spec!.patchPodMetadata = [{ annotations: { a: 'b' } }]), 'spec.patchPodMetadata[0].patchPolicy', 'Retain'],
    ['keeps patchPolicy Overwrite', (s) => (s.spec!.patchPodMetadata = [{ annotations: { a: 'b' }, patchPolicy: 'Overwrite' }]), 'spec.patchPodMetadata[0].patchPolicy', 'Overwrite'],
    ['sets revision policy Always when revision is set', (s) => (s.spec!.injectionStrategy = { revision: { revisionName: 'r1' } }), 'spec.injectionStrategy.revision.policy', 'Always'],
    ['adds no revision when none is set', () => undefined, 'spec.injectionStrategy', undefined],
    ['keeps an unknown field', (s) => (s.spec!.containers![0]!['x-unknown'] = { keep: true }), 'spec.containers[0].x-unknown', { keep: true }],
  ])('%s', (_name, tweak, path, expected) => {
    const input = minimal();
    tweak(input);
    expect(at(defaultSidecarSet(input), path)).toEqual(expected);
  });

  it('writes both hash annotations computed on the defaulted spec', () => {
    const out = defaultSidecarSet(minimal());
    expect(out.metadata?.annotations?.['kruise.io/sidecarset-hash']).toBe(sidecarSetHash(out));
    expect(out.metadata?.annotations?.['kruise.io/sidecarset-hash-without-image']).toBe(sidecarSetHashWithoutImage(out));
  });

  it('gives the known hash for the dns-f container (spec section 5, third vector)', () => {
    const input = minimal();
    input.spec!.containers = [{ name: 'dns-f', image: 'dns:1.0' }];
    expect(defaultSidecarSet(input).metadata?.annotations?.['kruise.io/sidecarset-hash']).toBe(
      '6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684',
    );
  });

  it('is idempotent', () => {
    const input = minimal();
    input.spec!.volumes = [{ name: 'v', secret: { secretName: 's' } }, { name: 'w' }];
    input.spec!.containers![0]!.livenessProbe = { httpGet: { port: 80 } };
    const once = defaultSidecarSet(input);
    expect(defaultSidecarSet(once)).toEqual(once);
  });

  it('does not modify its input', () => {
    const input = minimal();
    const copy = structuredClone(input);
    defaultSidecarSet(input);
    expect(input).toEqual(copy);
  });

  it('does not throw on values of the wrong type', () => {
    const weird = { metadata: { name: 'x' }, spec: { containers: 'nope', volumes: [1, null], updateStrategy: 7 } } as unknown as SidecarSet;
    expect(() => defaultSidecarSet(weird)).not.toThrow();
  });
});
