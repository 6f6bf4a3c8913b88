import { describe, expect, it } from '@jest/globals';
import { currentRevisionName } from '../../lib/sidecarset/revisions.ts';
import { sidecarSetHash, sidecarSetHashDocument, sidecarSetHashWithoutImage } from '../../lib/sidecarset/hash.ts';
import type { SidecarContainer, SidecarSet } from '../../lib/sidecarset/types.ts';

// Vectors from spec section 5; the others were printed by a Go program running
// Kruise v1.8's encodeSidecarSet over kruise-api v1.8.0 types.

function setOf(containers?: unknown, initContainers?: unknown): SidecarSet {
  const spec: Record<string, unknown> = {};
  if (containers !== undefined) spec.containers = containers;
  if (initContainers !== undefined) spec.initContainers = initContainers;
  return { spec };
}

const container1: SidecarContainer = { name: 'container1', image: 'test-image' };
/** `[{name: dns-f, image: dns:1.0}]` after Kubernetes container defaulting and Kruise's sidecar defaulting. */
const dnsDefaulted: SidecarContainer = {
  name: 'dns-f',
  image: 'dns:1.0',
  imagePullPolicy: 'IfNotPresent',
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  podInjectPolicy: 'BeforeAppContainer',
  upgradeStrategy: { upgradeType: 'ColdUpgrade' },
  shareVolumePolicy: { type: 'disabled' },
};

describe('sidecarSetHash and sidecarSetHashWithoutImage', () => {
  it.each<[string, SidecarSet, string, string]>([
    [
      'spec vector 1: one container, not defaulted',
      setOf([container1]),
      'w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78',
      '8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759',
    ],
    [
      'spec vector 2: plus a native sidecar init container',
      setOf([container1], [{ ...container1, restartPolicy: 'Always' }]),
      '4xwx4d4844vd4v9x79wb4xbxf4xb29475cc4446v8cz2c2f2f5c5bw448vd42z8w',
      '5725fw8bwbx249bw57v5892c847dzf48bww9zb7c86xb95264fdz26654847b2c8',
    ],
    [
      'spec vector 3: the defaulted dns-f container',
      setOf([dnsDefaulted]),
      '6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684',
      '82684vwf9d4cb4wz4vffx4ddfbb47ww4z4wwxdbwb8w2zbb7zvf4524cdd49bv94',
    ],
    [
      'init containers without restartPolicy Always do not count',
      setOf([container1], [{ name: 'plain', image: 'busybox' }]),
      'w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78',
      '8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759',
    ],
    [
      'a new image changes the hash but not the hash without image',
      setOf([{ ...container1, image: 'other-image' }]),
      'wdzw4c72dxbbx8585xf489bfx8x854w4dvzfx84b9zw4964f99c4484f9z4946f8',
      '8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759',
    ],
    [
      'unknown fields are ignored and strings are HTML-escaped',
      setOf([{ ...container1, 'x-unknown': 1, env: [{ name: 'A', value: '<&>', junk: true }] }]),
      'vdx6c6bvzv4zw622vxxb85844x948cf8c8d4vv4w47fd94z4426xf49vcdw87c4w',
      '9w2dcdd7c689848z25727x8bd7fv78vxz944b5b94zz424x2b8959cfdcdfzbw56',
    ],
    [
      'only native sidecar init containers: all init containers are hashed, images removed too',
      setOf(undefined, [
        { name: 'init', image: 'busybox', restartPolicy: 'Always' },
        { name: 'plain', image: 'busybox' },
      ]),
      '52f4244bdcvb8fx4xb92b4947z7bb2fw94c5zx4547czd649vw8dvx4vw7w8ww49',
      '26x4v25w86d77wc8fdd4xxcwf6x69d956d749529996vd8c7b7dxc47xx579fcw5',
    ],
    [
      'no containers at all hashes a nil slice',
      setOf(),
      'x5vwx9w6vv4dv72c9w4c2f6v74fbwx545b45bbfz6z2dvf8w887xw86fvcb4cf48',
      'x5vwx9w6vv4dv72c9w4c2f6v74fbwx545b45bbfz6z2dvf8w887xw86fvcb4cf48',
    ],
    [
      'an empty container list hashes an empty slice',
      setOf([]),
      '5662x672v59974vdzvf4bdfwc4v526wx5w7884vx5c7fc2f246v484v5988xb9z7',
      '5662x672v59974vdzvf4bdfwc4v526wx5w7884vx5c7fc2f246v484v5988xb9z7',
    ],
  ])('%s', (_name, set, hash, withoutImage) => {
    expect(sidecarSetHash(set)).toBe(hash);
    expect(sidecarSetHashWithoutImage(set)).toBe(withoutImage);
  });

  it('gives 64 characters from the SafeEncodeString alphabet', () => {
    expect(sidecarSetHash(setOf([dnsDefaulted]))).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{64}$/);
  });

  it.each<[string, SidecarSet]>([
    ['a set without spec', {}],
    ['a spec that is not an object', { spec: 'x' as never }],
    ['containers that are not an array', setOf({ name: 'c' })],
  ])('does not throw for %s', (_name, set) => {
    expect(sidecarSetHash(set)).toBe(sidecarSetHash(setOf()));
  });
});

describe('sidecarSetHashDocument', () => {
  it.each<[string, SidecarSet, boolean, string]>([
    [
      'spec vector 1, byte for byte',
      setOf([container1]),
      false,
      '{"containers":[{"name":"container1","image":"test-image","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
    ],
    [
      'spec vector 2: initContainers after containers, restartPolicy after resources',
      setOf([container1], [{ ...container1, restartPolicy: 'Always' }]),
      false,
      '{"containers":[{"name":"container1","image":"test-image","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}],' +
        '"initContainers":[{"name":"container1","image":"test-image","resources":{},"restartPolicy":"Always","upgradeStrategy":{},"shareVolumePolicy":{}}]}',
    ],
    [
      'without image, in containers and init containers alike',
      setOf([container1], [{ ...container1, restartPolicy: 'Always' }]),
      true,
      '{"containers":[{"name":"container1","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}],' +
        '"initContainers":[{"name":"container1","resources":{},"restartPolicy":"Always","upgradeStrategy":{},"shareVolumePolicy":{}}]}',
    ],
  ])('%s', (_name, set, withoutImage, expected) => {
    expect(sidecarSetHashDocument(set, { withoutImage })).toBe(expected);
  });

  it('leaves the SidecarSet it reads untouched', () => {
    const set = setOf([container1], [{ ...container1, restartPolicy: 'Always' }]);
    const before = JSON.stringify(set);
    sidecarSetHashWithoutImage(set);
    expect(JSON.stringify(set)).toBe(before);
  });
});

describe('what the defaulted revisionHistoryLimit changes', () => {
  it('changes neither hash nor the revision name, as in Kruise (the hashes cover the containers, the revision its five recorded fields)', () => {
    const base: SidecarSet = { metadata: { name: 's' }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } };
    const limited: SidecarSet = { ...base, spec: { ...base.spec, revisionHistoryLimit: 10 } };
    expect(sidecarSetHash(limited)).toBe(sidecarSetHash(base));
    expect(sidecarSetHashWithoutImage(limited)).toBe(sidecarSetHashWithoutImage(base));
    expect(currentRevisionName(limited)).toBe(currentRevisionName(base));
  });
});
