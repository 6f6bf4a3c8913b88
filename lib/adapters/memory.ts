/** In-memory sources: the cluster as given (the invoke command's files, tests). */
import { internalSidecarSets } from '../conversion/internal-model.ts';
import { stringMapOf, stringOf } from '../kube/json.ts';
import type { Namespace } from '../kube/types.ts';
import type { NamespaceSource, RevisionSource, SidecarSetSource } from '../ports.ts';
import { DEFAULT_REVISION_NAMESPACE, LABEL_SIDECARSET_NAME, type ControllerRevision } from '../sidecarset/revisions.ts';
import type { NamespaceLabels } from '../sidecarset/match.ts';
import type { SidecarSet } from '../sidecarset/types.ts';

/** The sets as given, each in the internal model (a v1beta1 set converted: lib/conversion/internal-model.ts). */
export function memorySidecarSetSource(sets: readonly SidecarSet[]): SidecarSetSource {
  const frozen = [...internalSidecarSets(sets)];
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

/**
 * ControllerRevisions as given: those of `namespace` (a revision without a
 * namespace counts as in it), found by name or by labels as the API server
 * would select them.
 */
export function memoryRevisionSource(revisions: readonly ControllerRevision[], namespace = DEFAULT_REVISION_NAMESPACE): RevisionSource {
  const here = revisions.filter((r) => (stringOf(r.metadata?.namespace) ?? namespace) === namespace);
  return {
    namespace,
    get: (name) => Promise.resolve(here.find((r) => r.metadata?.name === name)),
    list(setName, labels = {}) {
      const wanted = Object.entries({ ...labels, [LABEL_SIDECARSET_NAME]: setName });
      return Promise.resolve(here.filter((r) => wanted.every(([key, value]) => stringMapOf(r.metadata?.labels)[key] === value)));
    },
  };
}
