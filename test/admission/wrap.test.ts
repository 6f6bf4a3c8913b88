import { describe, expect, it } from '@jest/globals';
import { decodeReview } from '../../lib/admission/review.ts';
import { wrapInReview, WrapError } from '../../lib/admission/wrap.ts';

const set = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'log-agent' }, spec: { containers: [] } };
const pod = (metadata: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers: [{ name: 'app', image: 'nginx' }] } });

describe('wrapping a plain object in the review the API server would send', () => {
  it('makes a CREATE review of a SidecarSet: cluster-scoped, its kind and resource, an admin, not a dry run', () => {
    const review = wrapInReview({ object: set, operation: 'CREATE', uid: 'u-1' });
    expect(review).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'u-1',
        kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'SidecarSet' },
        resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'sidecarsets' },
        requestKind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'SidecarSet' },
        requestResource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'sidecarsets' },
        name: 'log-agent',
        operation: 'CREATE',
        userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
        object: set,
        oldObject: null,
        dryRun: false,
        options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
      },
    });
    expect(decodeReview(review).operation).toBe('CREATE');
  });

  it.each<[string, Record<string, unknown>, string | undefined, string, string]>([
    ['a pod naming its namespace', { name: 'web', namespace: 'shop' }, undefined, 'shop', 'web'],
    ['a pod naming none goes to default', { name: 'web' }, undefined, 'default', 'web'],
    ['a pod naming none goes to --namespace', { name: 'web' }, 'shop', 'shop', 'web'],
    ['a pod agreeing with --namespace', { name: 'web', namespace: 'shop' }, 'shop', 'shop', 'web'],
    ['a generateName pod has an empty request name', { generateName: 'web-' }, undefined, 'default', ''],
  ])('%s', (_name, metadata, namespace, expectedNamespace, expectedName) => {
    const review = wrapInReview({ object: pod(metadata), operation: 'CREATE', uid: 'u', ...(namespace !== undefined ? { namespace } : {}) });
    const request = decodeReview(review);
    expect({ namespace: request.namespace, name: request.name, objectNamespace: (request.object as { metadata: { namespace: string } }).metadata.namespace }).toEqual({
      namespace: expectedNamespace,
      name: expectedName,
      objectNamespace: expectedNamespace,
    });
    expect(request.kind).toEqual({ group: '', version: 'v1', kind: 'Pod' });
    expect(request.resource).toEqual({ group: '', version: 'v1', resource: 'pods' });
  });

  it('makes an UPDATE review with the old object and UpdateOptions, leaving its inputs alone', () => {
    const old = structuredClone(set);
    const input = { ...set, spec: { containers: [{ name: 'x', image: 'y' }] } };
    const copy = structuredClone(input);
    const request = decodeReview(wrapInReview({ object: input, oldObject: old, operation: 'UPDATE', uid: 'u' }));
    expect(request).toMatchObject({ operation: 'UPDATE', oldObject: old, object: input, options: { kind: 'UpdateOptions' } });
    expect(input).toEqual(copy);
  });

  it.each<[string, Parameters<typeof wrapInReview>[0], RegExp]>([
    ['a kind no function takes', { object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }, operation: 'CREATE', uid: 'u' }, /cannot make a review for kind "Namespace"/],
    ['a SidecarSet without a name', { object: { ...set, metadata: {} }, operation: 'CREATE', uid: 'u' }, /the SidecarSet has no metadata\.name$/],
    ['a SidecarSet with only generateName', { object: { ...set, metadata: { generateName: 'x-' } }, operation: 'CREATE', uid: 'u' }, /the SidecarSet has no metadata\.name$/],
    ['an UPDATE of a generateName pod', { object: pod({ generateName: 'web-' }), oldObject: pod({ generateName: 'web-' }), operation: 'UPDATE', uid: 'u' }, /the Pod has no metadata\.name$/],
    ['metadata that is not an object', { object: { ...set, metadata: 'x' }, operation: 'CREATE', uid: 'u' }, /metadata is not an object/],
    ['a name that is not a string', { object: { ...set, metadata: { name: 7 } }, operation: 'CREATE', uid: 'u' }, /metadata\.name is not a string/],
    ['an UPDATE that renames', { object: set, oldObject: { ...set, metadata: { name: 'other' } }, operation: 'UPDATE', uid: 'u' }, /named "other", the new one "log-agent"/],
    ['an UPDATE of another kind', { object: set, oldObject: pod({ name: 'log-agent' }), operation: 'UPDATE', uid: 'u' }, /the old object is a "Pod", the new one a SidecarSet/],
    ['an UPDATE across namespaces', { object: pod({ name: 'web', namespace: 'a' }), oldObject: pod({ name: 'web', namespace: 'b' }), operation: 'UPDATE', uid: 'u' }, /namespace "b", the new one in "a"/],
  ])('refuses %s', (_name, input, message) => {
    expect(() => wrapInReview(input)).toThrow(WrapError);
    expect(() => wrapInReview(input)).toThrow(message);
  });
});
