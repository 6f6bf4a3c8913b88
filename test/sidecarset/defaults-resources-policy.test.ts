import { describe, expect, it } from '@jest/globals';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { ResourcesPolicy, SidecarContainer, SidecarSet } from '../../lib/sidecarset/types.ts';

function defaulted(container: SidecarContainer, init = false): SidecarContainer {
  const set: SidecarSet = { metadata: { name: 's' }, spec: { selector: { matchLabels: { a: 'b' } }, [init ? 'initContainers' : 'containers']: [container] } };
  const spec = defaultSidecarSet(set).spec!;
  return (init ? spec.initContainers : spec.containers)![0]!;
}

describe('defaults of the OpenKruise 1.9 fields (the CRD schema default the API server applies)', () => {
  it.each<[string, unknown, unknown]>([
    ['an absent pattern becomes ".*"', undefined, '.*'],
    ['a null pattern becomes ".*"', null, '.*'],
    ['an empty pattern is a value, kept for validation to refuse', '', ''],
    ['a pattern is kept', '^app$', '^app$'],
  ])('%s', (_name, regex, expected) => {
    const policy = {
      targetContainersMode: 'sum', resourcesExpr: { limits: { cpu: 'cpu' } }, ...(regex === undefined ? {} : { targetContainersNameRegex: regex }),
    } as ResourcesPolicy;
    expect(defaulted({ name: 'a', image: 'a:1', resourcesPolicy: policy }).resourcesPolicy?.targetContainersNameRegex).toBe(expected);
    expect(defaulted({ name: 'a', image: 'a:1', restartPolicy: 'Always', resourcesPolicy: policy }, true).resourcesPolicy?.targetContainersNameRegex).toBe(expected);
  });

  it('adds neither a resourcesPolicy nor a shareVolumeDevicePolicy (pointers: absent stays absent, so hashes stay)', () => {
    const c = defaulted({ name: 'a', image: 'a:1' });
    expect(c).not.toHaveProperty('resourcesPolicy');
    expect(c).not.toHaveProperty('shareVolumeDevicePolicy');
  });
});
