/**
 * The Namespaces of `--namespaces FILE`, remembering which names a function
 * asked for and did not find there. A SidecarSet with a namespaceSelector
 * needs the pod's Namespace; on a cluster that is a read, offline it is this
 * file, so when a decision fails for want of one the CLI can say which
 * Namespace is missing and how to give it, instead of leaving the user with
 * the webhook's "namespace is unknown".
 */
import { memoryNamespaceSource } from '../../lib/adapters/memory.ts';
import type { Namespace } from '../../lib/kube/types.ts';
import type { NamespaceSource } from '../../lib/ports.ts';

export interface NamespacesWithHint {
  source: NamespaceSource;
  /** What to do about the Namespaces asked for and missing, or undefined when none was. */
  hint: () => string | undefined;
}

export function namespacesWithHint(namespaces: readonly Namespace[], path: string | undefined): NamespacesWithHint {
  const inner = memoryNamespaceSource(namespaces);
  const missing = new Set<string>();
  return {
    source: {
      async labels(names, signal) {
        const found = await inner.labels(names, signal);
        for (const name of names) if (!found.has(name)) missing.add(name);
        return found;
      },
    },
    hint: () => {
      if (missing.size === 0) return undefined;
      const names = [...missing].sort();
      const where = path === undefined ? 'no --namespaces FILE was given' : `${path} does not hold ${names.length === 1 ? 'it' : 'them'}`;
      return `a SidecarSet's namespaceSelector needs the labels of Namespace ${names.map((n) => JSON.stringify(n)).join(', ')} and ${where}: pass the Namespace objects with --namespaces FILE (for example kubectl get namespace ${names.join(' ')} -o yaml > namespaces.yaml)`;
    },
  };
}
