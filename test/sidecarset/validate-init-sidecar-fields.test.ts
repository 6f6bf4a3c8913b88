/**
 * Issue 15 item 6: Kruise 1.8 checks podInjectPolicy, shareVolumePolicy and
 * transferEnv on spec.containers only, so a SidecarSet with other values on
 * its init containers must be admitted unchanged (injection then places and
 * fills those containers as Kruise does: test/golden/inject/
 * init-containers-unchecked-fields). On spec.containers they stay checked.
 */
import { describe, expect, it } from '@jest/globals';
import { errorsFor } from './validate-fixture.ts';

type Row = [string, Record<string, unknown>, string[]];
const init = 'spec.initContainers.0';

describe('SidecarContainer fields on init containers (issue 15 item 6)', () => {
  it.each<Row>([
    ['accepts podInjectPolicy Middle', { [`${init}.podInjectPolicy`]: 'Middle' }, []],
    ['accepts an unset podInjectPolicy', { [`${init}.podInjectPolicy`]: undefined }, []],
    ['accepts an unknown shareVolumePolicy', { [`${init}.shareVolumePolicy`]: { type: 'Sometimes' } }, []],
    [
      'accepts a transferEnv fieldRef of metadata.name',
      { [`${init}.transferEnv`]: [{ sourceContainerNameFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } }, envName: 'TZ' }] },
      [],
    ],
    ['accepts a transferEnv fieldRef without apiVersion', { [`${init}.transferEnv`]: [{ sourceContainerNameFrom: { fieldRef: { fieldPath: 'x' } } }] }, []],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });
});

describe('the same fields on app containers stay checked', () => {
  it.each<Row>([
    [
      'rejects podInjectPolicy Middle',
      { 'spec.containers.0.podInjectPolicy': 'Middle' },
      ['spec.containers[0].podInjectPolicy: Unsupported value: "Middle": supported values: "BeforeAppContainer", "AfterAppContainer"'],
    ],
    [
      'rejects an unknown shareVolumePolicy',
      { 'spec.containers.0.shareVolumePolicy': { type: 'Sometimes' } },
      ['spec.containers[0].shareVolumePolicy.type: Unsupported value: "Sometimes": supported values: "enabled", "disabled"'],
    ],
    [
      'rejects a transferEnv fieldRef of metadata.name',
      { 'spec.containers.0.transferEnv': [{ sourceContainerNameFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } }, envName: 'TZ' }] },
      ["spec.containers[0].transferEnv[0].sourceContainerNameFrom.fieldRef.fieldPath: Invalid value: \"metadata.name\": must be metadata.labels['<key>'] or metadata.annotations['<key>']"],
    ],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });
});
