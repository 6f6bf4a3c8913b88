/**
 * The namespace the SidecarSets' ControllerRevisions live in
 * (rollout.md §2.1): Kruise keeps them in its manager's namespace,
 * `kruise-system` unless installed elsewhere, so that is the default and a
 * cluster migrated from Kruise keeps its history. Read by the webhooks
 * (pinned revisions) and the reconciler (which writes them), so both agree.
 */
import { isObject } from '../kube/json.ts';
import { dns1123LabelErrors } from '../kube/names.ts';
import { DEFAULT_REVISION_NAMESPACE } from '../sidecarset/revisions.ts';
import { SourceOptionsError } from './kube-sources.ts';

export const ENV_REVISION_NAMESPACE = 'SIDECARSET_REVISION_NAMESPACE';

/**
 * SIDECARSET_REVISION_NAMESPACE, `kruise-system` when unset or empty.
 * @throws SourceOptionsError naming the variable when the value cannot be a namespace name (a DNS-1123 label).
 */
export function revisionNamespaceFromEnv(env: Readonly<Record<string, string | undefined>>): string {
  const raw = env[ENV_REVISION_NAMESPACE];
  if (raw === undefined || raw === '') return DEFAULT_REVISION_NAMESPACE;
  const problems = dns1123LabelErrors(raw);
  if (problems.length > 0) throw new SourceOptionsError(ENV_REVISION_NAMESPACE, `must be a namespace name (${problems.join('; ')}); got ${JSON.stringify(raw)}`);
  return raw;
}

/**
 * The RBAC manifests (infra/k8s/rbac.yaml) for another revision namespace:
 * the Namespace named `kruise-system` and the objects in it are moved to
 * `namespace`; everything else is returned as it is.
 */
export function inRevisionNamespace(objects: readonly unknown[], namespace: string): unknown[] {
  if (namespace === DEFAULT_REVISION_NAMESPACE) return [...objects];
  return objects.map((object) => {
    if (!isObject(object) || !isObject(object.metadata)) return object;
    const { metadata } = object;
    if (object.kind === 'Namespace' && object.apiVersion === 'v1' && metadata.name === DEFAULT_REVISION_NAMESPACE) return { ...object, metadata: { ...metadata, name: namespace } };
    if (metadata.namespace === DEFAULT_REVISION_NAMESPACE) return { ...object, metadata: { ...metadata, namespace } };
    return object;
  });
}
