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
    ['plain and native init containers', { initContainers: [{ name: 'init', image: 'i:1' }, { name: 'native', image: 'n:1', restartPolicy: 'Always' }], updateStrategy: { type: 'NotUpdate' } }],
    ['patchPodMetadata', { patchPodMetadata: [{ annotations: { a: 'b' }, patchPolicy: 'Overwrite' }, { annotations: { 'example.com/c': '{}' }, patchPolicy: 'MergePatchJson' }] }],
    ['shared volume devices', { containers: [{ name: 'agent', image: 'a:1', shareVolumeDevicePolicy: { type: 'enabled' } }] }],
    ['transferEnv from a container named by an annotation', { containers: [{ name: 'agent', image: 'a:1', transferEnv: [{ sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.annotations['example.com/src']" } }, envName: 'X' }] }] }],
    ['transferEnv by name and from a label', { containers: [{ name: 'agent', image: 'a:1', transferEnv: [{ sourceContainerName: 'app', envName: 'X' }, { sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.labels['src']" } }, envNames: ['Y', 'Z'] }] }] }],
    ['a canary', {}, { 'apps.kruise.io/sidecarset-canary': 'true', 'apps.kruise.io/sidecarset-base': 'agent-base' }],
    ['a HotUpgrade sidecar beside a plain one', { containers: [{ name: 'agent', image: 'a:1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'e:1' } }, { name: 'b', image: 'b:1' }] }],
  ])('sends a set with %s to the policy', (_what, spec, annotations: Record<string, string> = {}) => {
    const verdict = injectionPath(set(spec, annotations));
    expect(verdict).toEqual({ path: 'policy', reason: 'the policy computes everything it injects' });
  });

  it.each([
    ['a HotUpgrade sidecar without its empty image', { containers: [{ name: 'agent', image: 'a:1', upgradeStrategy: { upgradeType: 'HotUpgrade' } }] }, 'without both its images'],
    ['a HotUpgrade pair out of name order', { containers: [{ name: 'a', image: 'a:1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'e:1' } }, { name: 'a-0', image: 'b:1' }] }, 'name order'],
    ['a HotUpgrade pair named as another container', { containers: [{ name: 'a', image: 'a:1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'e:1' } }, { name: 'a-1', image: 'b:1' }] }, 'share a name'],
    ['patchPodMetadata of a HotUpgrade version annotation', { patchPodMetadata: [{ annotations: { 'version.sidecarset.kruise.io/agent-1': '7' } }] }, 'may not write'],
    ['resourcesPolicy', { containers: [{ name: 'agent', image: 'a:1', resourcesPolicy: { targetContainerMode: 'sum' } }] }, 'resourcesPolicy'],
    ['a pinned revision', { injectionStrategy: { revision: { customVersion: 'v1' } } }, 'pins a revision'],
    ['transferEnv from a container named by an annotation it patches itself', { patchPodMetadata: [{ annotations: { src: 'app' } }], containers: [{ name: 'agent', image: 'a:1', transferEnv: [{ sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.annotations['src']" } }, envName: 'X' }] }] }, "metadata.annotations['src']"],
    ['transferEnv from a container named by an injection annotation', { containers: [{ name: 'agent', image: 'a:1', transferEnv: [{ sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.annotations['kruise.io/sidecarset-injected-list']" } }, envName: 'X' }] }] }, 'injected-list'],
    ['transferEnv from a container named by another field', { containers: [{ name: 'agent', image: 'a:1', transferEnv: [{ sourceContainerNameFrom: { fieldRef: { fieldPath: 'metadata.name' } }, envName: 'X' }] }] }, 'metadata.name'],
    ['patchPodMetadata of an injection annotation', { patchPodMetadata: [{ annotations: { 'kruise.io/sidecarset-injected-list': 'x' } }] }, 'may not write'],
    ['a native HotUpgrade init container', { initContainers: [{ name: 'init', image: 'i:1', restartPolicy: 'Always', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'e:1' } }] }, 'HotUpgrade'],
    ['too many transferred env vars', { containers: [{ name: 'agent', image: 'a:1', transferEnv: [{ sourceContainerName: 'app', envNames: Array.from({ length: POLICY_SET_BOUNDS.transferredEnv + 1 }, (_, i) => `E${i}`) }] }] }, 'transfers 17 env vars'],
    ['too many containers', { containers: Array.from({ length: POLICY_SET_BOUNDS.containers + 1 }, (_, i) => ({ name: `c${i}`, image: 'a:1' })) }, 'pod containers and init containers'],
    ['too many pod containers with HotUpgrade pairs', { containers: Array.from({ length: POLICY_SET_BOUNDS.containers / 2 + 1 }, (_, i) => ({ name: `c${i}`, image: 'a:1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'e:1' } })) }, 'a HotUpgrade sidecar two'],
    ['a long list', { containers: [{ name: 'agent', image: 'a:1', env: Array.from({ length: POLICY_SET_BOUNDS.listItems + 1 }, (_, i) => ({ name: `E${i}`, value: 'x' })) }] }, 'more than'],
    ['containers out of name order', { containers: [{ name: 'b', image: 'b:1' }, { name: 'a', image: 'a:1' }] }, 'name order'],
    ['two volumes of one name', { volumes: [{ name: 'v', emptyDir: {} }, { name: 'v', emptyDir: {} }] }, 'volumes'],
  ])('sends a set with %s to pod-inject', (_what, spec, reason) => {
    const verdict = injectionPath(set(spec));
    expect(verdict.path).toBe('webhook');
    expect(verdict.reason).toContain(reason);
  });
});
