import { describe, expect, it } from '@jest/globals';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { ANNOTATION_INJECTION_PATH, injectionPath, POLICY_SET_BOUNDS } from '../../lib/sidecarset/injection-path.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

function set(spec: Record<string, unknown>, annotations: Record<string, string> = {}): SidecarSet {
  return defaultSidecarSet({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'agent', annotations }, spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'agent', image: 'agent:1' }], ...spec } });
}

describe('injectionPath', () => {
  it('sends a plain set to the policy, and defaulting writes that over what the author wrote', () => {
    const plain = set({}, { [ANNOTATION_INJECTION_PATH]: 'webhook' });
    expect(injectionPath(plain).path).toBe('policy');
    expect(plain.metadata?.annotations?.[ANNOTATION_INJECTION_PATH]).toBe('policy');
  });

  it.each([
    ['init containers', { initContainers: [{ name: 'init', image: 'i:1' }] }, 'init containers'],
    ['HotUpgrade', { containers: [{ name: 'agent', image: 'a:1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'e:1' } }] }, 'HotUpgrade'],
    ['resourcesPolicy', { containers: [{ name: 'agent', image: 'a:1', resourcesPolicy: { targetContainerMode: 'sum' } }] }, 'resourcesPolicy'],
    ['patchPodMetadata', { patchPodMetadata: [{ annotations: { a: 'b' } }] }, 'patchPodMetadata'],
    ['a pinned revision', { injectionStrategy: { revision: { customVersion: 'v1' } } }, 'pins a revision'],
    ['shareVolumeDevicePolicy', { containers: [{ name: 'agent', image: 'a:1', shareVolumeDevicePolicy: { type: 'enabled' } }] }, 'volume devices'],
    ['transferEnv', { containers: [{ name: 'agent', image: 'a:1', transferEnv: [{ sourceContainerName: 'app', envName: 'X' }] }] }, 'transferEnv'],
    ['too many containers', { containers: Array.from({ length: POLICY_SET_BOUNDS.containers + 1 }, (_, i) => ({ name: `c${i}`, image: 'a:1' })) }, 'containers, more than'],
    ['a long list', { containers: [{ name: 'agent', image: 'a:1', env: Array.from({ length: POLICY_SET_BOUNDS.listItems + 1 }, (_, i) => ({ name: `E${i}`, value: 'x' })) }] }, 'more than'],
    ['containers out of name order', { containers: [{ name: 'b', image: 'b:1' }, { name: 'a', image: 'a:1' }] }, 'name order'],
    ['two volumes of one name', { volumes: [{ name: 'v', emptyDir: {} }, { name: 'v', emptyDir: {} }] }, 'volumes'],
  ])('sends a set with %s to pod-inject', (_what, spec, reason) => {
    const verdict = injectionPath(set(spec));
    expect(verdict.path).toBe('webhook');
    expect(verdict.reason).toContain(reason);
  });
});
