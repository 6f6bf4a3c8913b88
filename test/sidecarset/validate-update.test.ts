import { describe, expect, it } from '@jest/globals';
import { context, errorsFor, startingWith, tweak, validSidecarSet } from './validate-fixture.ts';

const HOT = { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' };

const update = (oldChanges: Record<string, unknown> = {}) =>
  context({ operation: 'UPDATE', oldObject: tweak(validSidecarSet(), oldChanges), others: [validSidecarSet()] });

describe('rule 12: what an UPDATE may not change', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>, string[]]>([
    ['allows a change of image only', {}, { 'spec.containers.0.image': 'fluent/fluent-bit:3.0' }, []],
    ['allows removing a container', {}, { 'spec.containers.1': undefined }, []],
    ['allows adding an init container (injected at pod creation only)', {}, { 'spec.initContainers.1': { ...validSidecarSet().spec?.initContainers?.[0], name: 'late-init' } }, []],
    ['allows an upgradeType when the old object had none', { 'spec.containers.1.upgradeStrategy': {} }, { 'spec.containers.1.upgradeStrategy': HOT }, []],
    [
      'rejects a changed upgradeType',
      {},
      { 'spec.containers.1.upgradeStrategy': HOT },
      ['spec.containers[1].upgradeStrategy.upgradeType: Invalid value: "HotUpgrade": container logging-metrics upgradeType is immutable'],
    ],
    [
      'rejects HotUpgrade turned back into ColdUpgrade (the pods hold two containers)',
      { 'spec.containers.1.upgradeStrategy': HOT },
      {},
      ['spec.containers[1].upgradeStrategy.upgradeType: Invalid value: "ColdUpgrade": container logging-metrics upgradeType is immutable'],
    ],
    ['allows a changed hotUpgradeEmptyImage', { 'spec.containers.1.upgradeStrategy': HOT }, { 'spec.containers.1.upgradeStrategy': { ...HOT, hotUpgradeEmptyImage: 'empty:2' } }, []],
    [
      'rejects an added container',
      { 'spec.containers.1': undefined },
      {},
      ['spec.containers[1].name: Forbidden: container logging-metrics is not found in the existing SidecarSet; containers may not be added by an update'],
    ],
  ])('%s', (_name, oldChanges, newChanges, expected) => {
    expect(errorsFor(newChanges, update(oldChanges))).toEqual(startingWith(expected));
  });

  it('applies only to UPDATE', () => {
    const ctx = { ...update({ 'spec.containers.1': undefined }), operation: 'CREATE' as const };
    expect(errorsFor({}, ctx)).toEqual([]);
  });

  it('does not let a set conflict with its own stored version', () => {
    expect(errorsFor({ 'spec.containers.0.image': 'fluent/fluent-bit:3.0' }, update())).toEqual([]);
  });
});
