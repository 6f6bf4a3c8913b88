import { describe, expect, it } from '@jest/globals';
import type { AdmissionRequest } from '../../lib/admission/review.ts';
import { wrapInReview } from '../../lib/admission/wrap.ts';
import { memoryNamespaceSource, memoryRevisionSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { repairMissingWarnings, repairModeOf } from '../../lib/sidecarset/repair-missing-mode.ts';
import { sidecarSetValidateHandler } from '../../lib/webhooks/sidecarset-validate.ts';
import { NOW } from '../../testkit/sidecarset-objects.ts';

const KEY = 'serverless-sidecarset/repair-missing';

function withAnnotation(value?: unknown): JsonObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'agent', ...(value === undefined ? {} : { annotations: { [KEY]: value } }) },
    spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'agent', image: 'agent:1' }] },
  };
}

describe('the repair-missing annotation', () => {
  it.each<[string, unknown, string]>([
    ['absent', undefined, 'off'],
    ['Evict', 'Evict', 'Evict'],
    ['evict (the case matters)', 'evict', 'invalid'],
    ['true', 'true', 'invalid'],
    ['empty', '', 'invalid'],
  ])('%s reads as %s', (_, value, mode) => {
    expect(repairModeOf(withAnnotation(value)).mode).toBe(mode);
  });

  it('warns of a value that is not Evict, naming the one that works, and is silent otherwise', () => {
    expect(repairMissingWarnings(withAnnotation('evict'))).toEqual([`${KEY}=evict: only Evict turns repair on; treated as off`]);
    expect(repairMissingWarnings(withAnnotation('Evict'))).toEqual([]);
    expect(repairMissingWarnings(withAnnotation())).toEqual([]);
  });

  it('keeps the warning within 120 characters however long the value', () => {
    const [warning] = repairMissingWarnings(withAnnotation('x'.repeat(500)));
    expect(warning?.length).toBeLessThanOrEqual(120);
    expect(warning).toContain('only Evict turns repair on');
  });

  it('sidecarset-validate admits a set with an invalid value, warning that repair stays off', async () => {
    const review = wrapInReview({ object: defaultSidecarSet(withAnnotation('yes')), operation: 'CREATE', uid: 'uid-1' });
    const deps = { sidecarSets: memorySidecarSetSource([]), namespaces: memoryNamespaceSource([]), revisions: memoryRevisionSource([]), clock: { now: () => NOW } };
    const result = await sidecarSetValidateHandler(review.request as AdmissionRequest, deps);
    expect(result.outcome).toBe('allowed');
    expect('response' in result ? result.response.warnings : undefined).toEqual([`${KEY}=yes: only Evict turns repair on; treated as off`]);
  });
});
