/** The SidecarSet validating webhook: every field error at once, as a 422 denial. */
import { errorMessage } from '../errors.ts';
import { allowed, denied } from '../admission/responses.ts';
import type { AdmissionRequest } from '../admission/review.ts';
import { formatFieldErrors } from '../kube/field-errors.ts';
import { objectOf, stringOf } from '../kube/json.ts';
import { hasNamespaceSelector, type NamespaceLabels } from '../sidecarset/match.ts';
import { GROUP, KIND, type SidecarSet } from '../sidecarset/types.ts';
import { validateSidecarSet, validateSidecarSetAgainstCluster, type ValidationContext } from '../sidecarset/validate.ts';
import { failed, neverThrows, type AdmissionHandler, type HandlerDeps } from './handler.ts';
import { pinnedRevisionErrors } from './pinned-revisions.ts';
import { onlyKind, onlyOperations } from './skip.ts';

/** The namespaces whose labels the cross-set rules may compare with a namespaceSelector. */
function namespacesToLabel(sets: readonly SidecarSet[]): string[] {
  if (!sets.some(hasNamespaceSelector)) return [];
  const names = new Set<string>();
  for (const set of sets) {
    const ns = stringOf(objectOf(set.spec)?.namespace);
    if (ns !== undefined && ns !== '') names.add(ns);
  }
  return [...names];
}

const handleValidate = async (request: AdmissionRequest, deps: HandlerDeps) => {
  const object = request.object as SidecarSet;
  const base: ValidationContext = {
    operation: request.operation === 'UPDATE' ? 'UPDATE' : 'CREATE',
    ...(request.operation === 'UPDATE' ? { oldObject: request.oldObject as SidecarSet } : {}),
    others: [],
    namespaceLabels: new Map(),
  };
  // First without the cluster: an object that is wrong on its own is denied
  // without an API call, and even while the API is unreachable.
  let errors = validateSidecarSet(object, base);
  if (errors.length === 0) {
    let others: readonly SidecarSet[];
    let namespaceLabels: NamespaceLabels;
    try {
      others = await deps.sidecarSets.list(deps.signal);
      namespaceLabels = await deps.namespaces.labels(namespacesToLabel([object, ...others]), deps.signal);
    } catch (error) {
      return failed(503, `cannot check conflicts with other SidecarSets: ${errorMessage(error)}`, error);
    }
    // Rules 1-12 just passed and do not read the cluster: only rule 13 is left.
    errors = validateSidecarSetAgainstCluster(object, { ...base, others, namespaceLabels });
    // A pinned revision must resolve now (rollout.md §2.4); reading it is the one more call.
    try {
      errors = [...errors, ...(await pinnedRevisionErrors(object, deps.revisions, deps.signal))];
    } catch (error) {
      return failed(503, `cannot check the pinned revision: ${errorMessage(error)}`, error);
    }
  }
  if (errors.length === 0) return allowed();
  return denied(422, formatFieldErrors(errors), 'Invalid');
};

export const sidecarSetValidateHandler: AdmissionHandler = neverThrows(
  onlyKind(GROUP, KIND, onlyOperations(['CREATE', 'UPDATE'], handleValidate)),
);
