import { describe, expect, it } from '@jest/globals';
import { SourceOptionsError } from '../../lib/adapters/kube-sources.ts';
import { ENV_REVISION_NAMESPACE, inRevisionNamespace, revisionNamespaceFromEnv } from '../../lib/adapters/revision-namespace.ts';

describe('revisionNamespaceFromEnv', () => {
  it('is kruise-system (Kruise\'s) when unset or empty', () => {
    expect(ENV_REVISION_NAMESPACE).toBe('SIDECARSET_REVISION_NAMESPACE');
    expect(revisionNamespaceFromEnv({})).toBe('kruise-system');
    expect(revisionNamespaceFromEnv({ SIDECARSET_REVISION_NAMESPACE: '' })).toBe('kruise-system');
  });

  it('reads a namespace name', () => {
    expect(revisionNamespaceFromEnv({ SIDECARSET_REVISION_NAMESPACE: 'sidecarset-history' })).toBe('sidecarset-history');
  });

  it.each(['Kruise', 'kruise_system', 'kruise.system', ' kruise-system', '-x', 'x'.repeat(64)])('refuses %j at start-up, naming the variable', (value) => {
    const read = () => revisionNamespaceFromEnv({ SIDECARSET_REVISION_NAMESPACE: value });
    expect(read).toThrow(SourceOptionsError);
    expect(read).toThrow(/^SIDECARSET_REVISION_NAMESPACE must be a namespace name \(.*\); got ".*"$/);
  });
});

describe('inRevisionNamespace', () => {
  const rbac = [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'sidecarset-functions' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kruise-system' } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r', namespace: 'kruise-system' } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'r', namespace: 'kruise-system' } },
  ];

  it('moves the namespace and the objects in it, and nothing else', () => {
    expect(inRevisionNamespace(rbac, 'history')).toEqual([
      rbac[0],
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'history' } },
      { ...rbac[2], metadata: { name: 'r', namespace: 'history' } },
      { ...rbac[3], metadata: { name: 'r', namespace: 'history' } },
    ]);
    expect(rbac[1]?.metadata.name).toBe('kruise-system');
  });

  it('leaves the manifests as they are for kruise-system', () => {
    expect(inRevisionNamespace(rbac, 'kruise-system')).toEqual(rbac);
  });
});
