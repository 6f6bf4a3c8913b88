/**
 * Namespace labels for the reconciler's resyncs and reconciles and the rollout view (the
 * webhooks' cached per-name reads are kube-sources.ts).
 */
import { objectOf, stringMapOf, stringOf } from '../kube/json.ts';
import type { NamespaceSource } from '../ports.ts';
import type { NamespaceLabels } from '../sidecarset/match.ts';
import { listAll } from './kube-paged-list.ts';
import { getObject, type KubeClient } from './kube-request.ts';

type Labels = Readonly<Record<string, string>>;

export const getNamespaceOperation = (name: string): string => `get namespace "${name}"`;

const labelsOf = (namespace: unknown): Labels => stringMapOf(objectOf(objectOf(namespace)?.metadata)?.labels);

/**
 * Namespace labels for one resync or reconcile: the first call lists every namespace (a
 * few pages however many namespaces there are, instead of one GET each); a
 * name the list did not have (created since) is read on its own. Make one
 * per resync or reconcile so that each sees current labels.
 */
export function kubeNamespaceSnapshot(client: KubeClient): NamespaceSource {
  let listed: Promise<Map<string, Labels>> | undefined;

  async function listEvery(signal: AbortSignal | undefined): Promise<Map<string, Labels>> {
    const all = new Map<string, Labels>();
    for (const ns of (await listAll(client, '/api/v1/namespaces', {}, 'list namespaces', signal)).items) {
      const name = stringOf(objectOf(ns.metadata)?.name);
      if (name !== undefined) all.set(name, labelsOf(ns));
    }
    return all;
  }

  async function readOne(name: string, signal: AbortSignal | undefined): Promise<Labels | undefined> {
    const ns = await getObject(client, `/api/v1/namespaces/${encodeURIComponent(name)}`, getNamespaceOperation(name), signal);
    return ns === undefined ? undefined : labelsOf(ns);
  }

  return {
    async labels(names, signal) {
      if (listed === undefined) {
        listed = listEvery(signal);
        // A failed list is not kept: a later call of the same resync or reconcile tries again.
        listed.catch(() => {
          listed = undefined;
        });
      }
      const all = await listed;
      const out = new Map<string, Labels>();
      const missing: string[] = [];
      for (const name of new Set(names)) {
        const labels = all.get(name);
        if (labels !== undefined) out.set(name, labels);
        else if (name !== '') missing.push(name);
      }
      for (const [name, labels] of await Promise.all(missing.map(async (name) => [name, await readOne(name, signal)] as const))) {
        if (labels === undefined) continue;
        all.set(name, labels);
        out.set(name, labels);
      }
      return out satisfies NamespaceLabels;
    },
  };
}
