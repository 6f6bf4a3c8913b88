/** In-memory sources: the cluster as given (the invoke command's files, tests). */
import { stringMapOf, stringOf } from '../kube/json.ts';
import type { Namespace } from '../kube/types.ts';
import type { NamespaceSource, SidecarSetSource } from '../ports.ts';
import type { NamespaceLabels } from '../sidecarset/match.ts';
import type { SidecarSet } from '../sidecarset/types.ts';

export function memorySidecarSetSource(sets: readonly SidecarSet[]): SidecarSetSource {
  const frozen = [...sets];
  return { list: () => Promise.resolve(frozen) };
}

export function memoryNamespaceSource(namespaces: readonly Namespace[]): NamespaceSource {
  const all = new Map<string, Record<string, string>>();
  for (const ns of namespaces) {
    const name = stringOf(ns.metadata?.name);
    if (name !== undefined) all.set(name, stringMapOf(ns.metadata?.labels));
  }
  return {
    labels(names) {
      const out = new Map<string, Readonly<Record<string, string>>>();
      for (const name of names) {
        const labels = all.get(name);
        if (labels) out.set(name, labels);
      }
      return Promise.resolve(out as NamespaceLabels);
    },
  };
}
