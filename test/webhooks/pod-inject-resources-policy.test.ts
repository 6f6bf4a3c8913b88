/** The pod webhook's answer when a SidecarSet's resourcesPolicy cannot be computed for the pod: a denial naming why. */
import { describe, expect, it } from '@jest/globals';
import { memoryNamespaceSource, memoryRevisionSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { decodeReview } from '../../lib/admission/review.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import type { HandlerDeps } from '../../lib/webhooks/handler.ts';
import { podInjectHandler } from '../../lib/webhooks/pod-inject.ts';
import { podReview } from '../../testkit/reviews.ts';
import { NOW, pod, sidecar, sidecarSet } from '../../testkit/sidecarset-objects.ts';

function deps(sets: readonly SidecarSet[]): HandlerDeps {
  return {
    sidecarSets: memorySidecarSetSource(sets),
    namespaces: memoryNamespaceSource([]),
    clock: { now: () => NOW },
    revisions: memoryRevisionSource([]),
  };
}

const setWithPolicy = (regex: string): SidecarSet =>
  sidecarSet('agent', {
    containers: [sidecar('agent', { resourcesPolicy: { targetContainersMode: 'sum', targetContainersNameRegex: regex, resourcesExpr: { limits: { cpu: 'cpu*50%' } } } })],
  });

describe('pod-inject with a resourcesPolicy', () => {
  it('refuses a pod none of whose containers the policy targets, with the reason', async () => {
    const request = decodeReview(podReview('u1', pod({ containers: [{ name: 'web', image: 'web:1', resources: { limits: { cpu: '1' } } }] })));
    const result = await podInjectHandler(request, deps([setWithPolicy('^db$')]));
    expect(result).toMatchObject({
      outcome: 'denied',
      response: { allowed: false, status: { code: 400, reason: 'BadRequest', message: 'SidecarSet agent, sidecar agent: no containers match the regex pattern "^db$"' } },
    });
  });

  it('injects the computed resources when a container matches', async () => {
    const request = decodeReview(podReview('u2', pod({ containers: [{ name: 'web', image: 'web:1', resources: { limits: { cpu: '1' } } }] })));
    const result = await podInjectHandler(request, deps([setWithPolicy('^web$')]));
    expect(result.outcome).toBe('patched');
    const patch = result.outcome === 'patched' ? String(result.response.patch) : '';
    expect(Buffer.from(patch, 'base64').toString('utf8')).toContain('"resources":{"limits":{"cpu":"500m"}}');
  });
});
