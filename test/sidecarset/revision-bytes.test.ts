import { describe, expect, it } from '@jest/globals';
import { revisionData } from '../../lib/sidecarset/revision-data.ts';
import { newRevision } from '../../lib/sidecarset/revisions.ts';
import { sidecarSet } from '../../testkit/sidecarset-objects.ts';

describe('a ControllerRevision as written', () => {
  it("carries its data in Kruise's bytes (keys sorted), which Kruise's EqualRevision compares byte for byte", () => {
    const set = sidecarSet('log', {
      containers: [{ name: 'log', image: 'busybox:1.37', command: ['sleep', '1'], volumeMounts: [{ name: 'logs', mountPath: '/var/log' }] }],
      volumes: [{ name: 'logs', emptyDir: {} }],
    });
    expect(JSON.stringify(newRevision(set, 'kruise-system', 1, 0).data)).toBe(revisionData(set));
  });
});
