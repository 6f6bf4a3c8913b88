import { describe, expect, it } from '@jest/globals';
import { errorsFor, startingWith } from './validate-fixture.ts';

type Row = [string, Record<string, unknown>, string[]];

function check(_name: string, changes: Record<string, unknown>, expected: string[]): void {
  expect(errorsFor(changes)).toEqual(startingWith(expected));
}

const us = 'spec.updateStrategy';
const byZone = { matchLabels: { zone: 'a' } };

describe('rule 8: RollingUpdate strategy', () => {
  it.each<Row>([
    ['accepts NotUpdate', { [`${us}.type`]: 'NotUpdate' }, []],
    ['rejects an unknown type', { [`${us}.type`]: 'Recreate' }, ['spec.updateStrategy.type: Unsupported value: "Recreate": supported values: "NotUpdate", "RollingUpdate"']],
    ['rejects an unset type (the defaulting webhook sets one)', { [`${us}.type`]: undefined }, ['spec.updateStrategy.type: Unsupported value: ""']],
    ['ignores the other fields under NotUpdate, as Kruise does', { [`${us}.type`]: 'NotUpdate', [`${us}.maxUnavailable`]: 'half' }, []],
    ['accepts a selector with partition 0', { [`${us}.selector`]: byZone }, []],
    [
      'rejects a selector with a non-zero partition',
      { [`${us}.selector`]: byZone, [`${us}.partition`]: 2 },
      ['spec.updateStrategy.partition: Invalid value: 2: Partition and Selector cannot be used together'],
    ],
    [
      'rejects a selector with a percentage partition',
      { [`${us}.selector`]: byZone, [`${us}.partition`]: '0%' },
      ['spec.updateStrategy.partition: Invalid value: "0%": Partition and Selector cannot be used together'],
    ],
    ['rejects an empty update selector', { [`${us}.selector`]: {} }, ['spec.updateStrategy.selector: Invalid value: {}: empty selector is not valid for sidecarset.']],
    [
      'checks update selector syntax',
      { [`${us}.selector`]: { matchExpressions: [{ key: 'zone', operator: 'In' }] } },
      ['spec.updateStrategy.selector.matchExpressions[0].values: Required value'],
    ],
    ['accepts a percentage partition', { [`${us}.partition`]: '20%' }, []],
    ['rejects a negative partition', { [`${us}.partition`]: -1 }, ['spec.updateStrategy.partition: Invalid value: -1: must be greater than or equal to 0']],
    ['rejects a partition that is a bare number string', { [`${us}.partition`]: '20' }, ['spec.updateStrategy.partition: Invalid value: "20": a valid percent string must be a numeric string']],
    ['accepts a percentage maxUnavailable', { [`${us}.maxUnavailable`]: '50%' }, []],
    ['rejects a maxUnavailable that is a word', { [`${us}.maxUnavailable`]: 'half' }, ['spec.updateStrategy.maxUnavailable: Invalid value: "half"']],
    // Kruise #2111 (1.9) made CloneSet refuse these too; SidecarSet's validation always did, here as in Kruise 1.8 and 1.9.
    ['rejects a maxUnavailable that is a bare number string such as "5"', { [`${us}.maxUnavailable`]: '5' }, ['spec.updateStrategy.maxUnavailable: Invalid value: "5": a valid percent string must be a numeric string']],
    ['rejects a fractional maxUnavailable', { [`${us}.maxUnavailable`]: 1.5 }, ["spec.updateStrategy.maxUnavailable: Invalid value: 1.5: must be an integer or percentage (e.g '5%')"]],
  ])('%s', check);
});

describe('rule 8: priorityStrategy and scatterStrategy', () => {
  const ps = `${us}.priorityStrategy`;
  const weight = (w: unknown, matchSelector: unknown = byZone): unknown => ({ weight: w, matchSelector });
  it.each<Row>([
    ['accepts weightPriority alone, weights 1 and 100', { [`${ps}.weightPriority`]: [weight(1), weight(100)] }, []],
    ['accepts orderPriority alone', { [`${ps}.orderPriority`]: [{ orderedKey: 'zone' }] }, []],
    [
      'rejects weightPriority with orderPriority',
      { [`${ps}.weightPriority`]: [weight(10)], [`${ps}.orderPriority`]: [{ orderedKey: 'zone' }] },
      ['spec.updateStrategy.priorityStrategy: Forbidden: only one of weightPriority and orderPriority can be used'],
    ],
    [
      'rejects weight 0',
      { [`${ps}.weightPriority`]: [weight(0)] },
      ['spec.updateStrategy.priorityStrategy.weightPriority[0].weight: Invalid value: 0: weight must be valid number in the range 1-100'],
    ],
    ['rejects weight 101', { [`${ps}.weightPriority`]: [weight(10), weight(101)] }, ['spec.updateStrategy.priorityStrategy.weightPriority[1].weight: Invalid value: 101']],
    [
      'rejects an empty weight selector',
      { [`${ps}.weightPriority`]: [weight(10, {})] },
      ['spec.updateStrategy.priorityStrategy.weightPriority[0].matchSelector: Invalid value: {}: empty selector is not valid for sidecarset.'],
    ],
    [
      'requires a weight selector',
      { [`${ps}.weightPriority`]: [{ weight: 10 }] },
      ['spec.updateStrategy.priorityStrategy.weightPriority[0].matchSelector: Required value: selector can not be empty'],
    ],
    [
      'rejects an empty orderedKey',
      { [`${ps}.orderPriority`]: [{ orderedKey: '' }] },
      ['spec.updateStrategy.priorityStrategy.orderPriority[0].orderedKey: Required value: order key can not be empty'],
    ],
    ['accepts scatter terms on one key with different values', { [`${us}.scatterStrategy`]: [{ key: 'zone', value: 'a' }, { key: 'zone', value: 'b' }] }, []],
    ['rejects a scatter term without a key', { [`${us}.scatterStrategy`]: [{ key: '', value: 'a' }] }, ['spec.updateStrategy.scatterStrategy[0].key: Required value: key should not be empty']],
    [
      'rejects a scatter term given twice',
      { [`${us}.scatterStrategy`]: [{ key: 'zone', value: 'a' }, { key: 'zone', value: 'a' }] },
      ['spec.updateStrategy.scatterStrategy[1]: Duplicate value: {"key":"zone","value":"a"}'],
    ],
  ])('%s', check);
});

describe('rule 9: native sidecar init containers', () => {
  const init = 'spec.initContainers.0';
  const hot = { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'busybox:empty' };
  const hotRefused =
    'spec.initContainers[0].upgradeStrategy.upgradeType: Forbidden: a native sidecar (an init container with restartPolicy Always) is rolled in place, never hot upgraded; use upgradeType ColdUpgrade, or updateStrategy.type NotUpdate';
  it.each<Row>([
    ['accepts restartPolicy Always under NotUpdate', { [`${init}.restartPolicy`]: 'Always', [`${us}.type`]: 'NotUpdate' }, []],
    // Kruise refuses this set (kruise#1671); here the native sidecar rolls in place like a container.
    ['accepts restartPolicy Always under RollingUpdate (rolled in place, unlike Kruise)', { [`${init}.restartPolicy`]: 'Always' }, []],
    [
      'accepts a native sidecar under RollingUpdate with the whole strategy',
      {
        [`${init}.restartPolicy`]: 'Always',
        [`${init}.upgradeStrategy`]: { upgradeType: 'ColdUpgrade' },
        [`${us}.maxUnavailable`]: '50%',
        [`${us}.partition`]: 1,
        [`${us}.paused`]: true,
        [`${us}.scatterStrategy`]: [{ key: 'zone', value: 'a' }],
        [`${us}.priorityStrategy`]: { weightPriority: [{ weight: 10, matchSelector: byZone }] },
      },
      [],
    ],
    ['rejects a HotUpgrade native sidecar under RollingUpdate', { [`${init}.restartPolicy`]: 'Always', [`${init}.upgradeStrategy`]: hot }, [hotRefused]],
    ['accepts a HotUpgrade native sidecar under NotUpdate (injected split, never rolled)', { [`${init}.restartPolicy`]: 'Always', [`${init}.upgradeStrategy`]: hot, [`${us}.type`]: 'NotUpdate' }, []],
    ['leaves a plain init container\'s upgradeStrategy to the other rules', { [`${init}.upgradeStrategy`]: hot }, []],
  ])('%s', check);
});

describe('rule 10: injectionStrategy.revision', () => {
  const rev = 'spec.injectionStrategy.revision';
  it.each<Row>([
    ['accepts customVersion alone', { [`${rev}.revisionName`]: undefined, [`${rev}.customVersion`]: 'v2' }, []],
    ['accepts no revision at all', { 'spec.injectionStrategy': {} }, []],
    [
      'requires revisionName or customVersion',
      { [`${rev}.revisionName`]: undefined },
      ['spec.injectionStrategy.revision: Required value: revisionName and customVersion cannot be empty simultaneously'],
    ],
    [
      'treats empty strings as unset',
      { [`${rev}.revisionName`]: '', [`${rev}.customVersion`]: '' },
      ['spec.injectionStrategy.revision: Required value: revisionName and customVersion cannot be empty simultaneously'],
    ],
    ['accepts policy Partial', { [`${rev}.policy`]: 'Partial' }, []],
    ['accepts an unset policy', { [`${rev}.policy`]: undefined }, []],
    [
      'rejects an unknown policy',
      { [`${rev}.policy`]: 'Never' },
      ['spec.injectionStrategy.revision.policy: Unsupported value: "Never": supported values: "Always", "Partial"'],
    ],
  ])('%s', check);
});

describe('revisionHistoryLimit is bounded', () => {
  it.each<Row>([
    ['accepts 100', { 'spec.revisionHistoryLimit': 100 }, []],
    ['accepts 0', { 'spec.revisionHistoryLimit': 0 }, []],
    [
      'refuses 101: every reconcile reads each kept revision',
      { 'spec.revisionHistoryLimit': 101 },
      ['spec.revisionHistoryLimit: Invalid value: 101: must be at most 100 (each kept revision is read on every reconcile)'],
    ],
    ['refuses a huge limit', { 'spec.revisionHistoryLimit': 2147483647 }, ['spec.revisionHistoryLimit: Invalid value: 2147483647: must be at most 100']],
    ['refuses a limit that is not an integer', { 'spec.revisionHistoryLimit': 1.5 }, ['spec.revisionHistoryLimit: Invalid value: 1.5: must be an integer']],
  ])('%s', check);
});
