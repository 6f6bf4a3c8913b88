import { describe, expect, it } from '@jest/globals';
import { fencePatch } from '../../lib/adapters/kube-fence-backfill.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { ANNOTATION_FENCE_CONTAINERS, ANNOTATION_FENCE_KEYS } from '../../lib/sidecarset/rollout-fence.ts';

describe('fencePatch', () => {
  const pod: Pod = { metadata: { name: 'p', namespace: 'shop', resourceVersion: '42', annotations: { 'kruise.io/sidecarset-hash': '{}' } }, spec: { containers: [] } };

  it('tests the resourceVersion first, then adds both annotations', () => {
    expect(fencePatch(pod, { containers: 'agent', keys: 'example.com/a' })).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'add', path: '/metadata/annotations/serverless-sidecarset~1rollout-containers', value: 'agent' },
      { op: 'add', path: '/metadata/annotations/serverless-sidecarset~1rollout-annotations', value: 'example.com/a' },
    ]);
  });

  it('adds the annotations object when the pod has none', () => {
    expect(fencePatch({ metadata: { name: 'p', resourceVersion: '7' } }, { containers: 'a', keys: '' })).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'add', path: '/metadata/annotations', value: { [ANNOTATION_FENCE_CONTAINERS]: 'a', [ANNOTATION_FENCE_KEYS]: '' } },
    ]);
  });
});
