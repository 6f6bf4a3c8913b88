/**
 * The SidecarSet validating webhook: every field error at once, as a 422
 * denial. A review of either version is validated as OpenKruise 1.9 does:
 * the rules of the fields only that version has (validate-version.ts) on
 * the object as sent, then the shared rules on the object in the internal
 * model (lib/conversion/internal-model.ts), against the other sets, which
 * the sources give in that model too.
 */
import { errorMessage } from '../errors.ts';
import { allowed, denied } from '../admission/responses.ts';
import type { AdmissionRequest } from '../admission/review.ts';
import { formatFieldErrors, type FieldError } from '../kube/field-errors.ts';
import { objectOf, stringOf } from '../kube/json.ts';
import { canaryBaseOf } from '../sidecarset/canary.ts';
import { hasNamespaceSelector, type NamespaceLabels } from '../sidecarset/match.ts';
import { GROUP, KIND, type SidecarSet } from '../sidecarset/types.ts';
import { validateSidecarSet, validateSidecarSetAgainstCluster, type ValidationContext } from '../sidecarset/validate.ts';
import { validateVersionFields } from '../sidecarset/validate-version.ts';
import { patchPodMetadataWarnings } from '../sidecarset/validate-patch-metadata.ts';
import { repairMissingWarnings } from '../sidecarset/repair-missing-mode.ts';
import { internalSidecarSet } from '../conversion/internal-model.ts';
import { failed, neverThrows, type AdmissionHandler, type HandlerDeps, type HandlerResult } from './handler.ts';
import { reviewedVersion, unsupportedVersion } from './sidecarset-version.ts';
import { pinnedRevisionErrors, RevisionReadError } from './pinned-revisions.ts';
import { onlyKind, onlyOperations } from './skip.ts';
import { enqueueAdmitted } from './rollout-enqueue.ts';

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

/**
 * How long an admission waits, at most, to hand an admitted change to the
 * reconciler. The answer must not wait on it for long: a missed trigger only
 * means the set is reconciled at the next scheduled resync.
 */
export const ADMITTED_ENQUEUE_TIMEOUT_MS = 1000;

/**
 * Tells the reconciler (deps.rollout) about an admitted SidecarSet change so
 * its reconcile starts now, not at the next tick. Never on a dry run: nothing is
 * written, which is why the webhook declares `sideEffects: NoneOnDryRun`.
 * Awaited before answering because on Lambda nothing runs after the answer
 * (the sandbox freezes), and so bounded by ADMITTED_ENQUEUE_TIMEOUT_MS or the review's
 * own deadline, whichever comes first. A failure is a warning and the answer
 * stays "allowed": the schedule is the safety net.
 */
async function announceAdmitted(request: AdmissionRequest, object: SidecarSet, deps: HandlerDeps): Promise<void> {
  if (request.dryRun === true) return;
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return;
  const metadata = objectOf(object.metadata);
  // Validation denies a set without a name (and validating webhooks run
  // after a generateName is resolved), so an admitted set has one.
  const sidecarSet = stringOf(metadata?.name) ?? '';
  if (sidecarSet === '') return;
  const change = { sidecarSet, uid: stringOf(metadata?.uid) ?? '', operation: request.operation, resourceVersion: stringOf(metadata?.resourceVersion) ?? '' };
  await enqueueAdmitted([change], deps, ADMITTED_ENQUEUE_TIMEOUT_MS, 'could not start the reconcile for an admitted SidecarSet now; the schedule\'s resync will');
}

/** Rule 13, the one that reads the cluster: conflicts with the other sets (`listed` when read already); a failure when they cannot be read. */
async function clusterErrors(object: SidecarSet, base: ValidationContext, listed: readonly SidecarSet[] | undefined, deps: HandlerDeps): Promise<FieldError[] | HandlerResult> {
  let others: readonly SidecarSet[];
  let namespaceLabels: NamespaceLabels;
  try {
    others = listed ?? (await deps.sidecarSets.list(deps.signal));
    namespaceLabels = await deps.namespaces.labels(namespacesToLabel([object, ...others]), deps.signal);
  } catch (error) {
    return failed(503, `cannot check conflicts with other SidecarSets: ${errorMessage(error)}`, error);
  }
  // Rules 1-12 just passed and do not read the cluster: only rule 13 is left.
  return validateSidecarSetAgainstCluster(object, { ...base, others, namespaceLabels });
}

/**
 * The cluster's sets for a canary, whose base is looked up among them by its
 * own rule (validate-canary.ts) and listed beside its other errors as Kruise
 * lists it; none for any other set, whose others are read only when it is valid alone.
 */
async function canarySets(object: SidecarSet, deps: HandlerDeps): Promise<{ listed: readonly SidecarSet[] | undefined } | HandlerResult> {
  if (canaryBaseOf(object) === undefined) return { listed: undefined };
  try {
    return { listed: await deps.sidecarSets.list(deps.signal) };
  } catch (error) {
    return failed(503, `cannot look up the canary's base SidecarSet: ${errorMessage(error)}`, error);
  }
}

const handleValidate = async (request: AdmissionRequest, deps: HandlerDeps) => {
  const version = reviewedVersion(request);
  if (version === undefined) return unsupportedVersion(request);
  const object = internalSidecarSet(request.object as SidecarSet);
  const canary = await canarySets(object, deps);
  if ('outcome' in canary) return canary;
  const { listed } = canary;
  const base: ValidationContext = {
    operation: request.operation === 'UPDATE' ? 'UPDATE' : 'CREATE',
    ...(request.operation === 'UPDATE' ? { oldObject: internalSidecarSet(request.oldObject as SidecarSet) } : {}),
    others: [],
    ...(listed === undefined ? {} : { bases: listed }),
    namespaceLabels: new Map(),
  };
  // First without the other sets: an object that is wrong on its own is
  // denied without listing them, and even while the API is unreachable.
  let errors = [...validateVersionFields(request.object, version), ...validateSidecarSet(object, base)];
  // A pinned revision must resolve now (rollout.md §2.4); reading it is one
  // call, made only for a set that pins. Its error is listed beside the
  // set's other errors, as Kruise lists it among them.
  try {
    errors = [...errors, ...(await pinnedRevisionErrors(object, deps.revisions, deps.signal))];
  } catch (error) {
    // A set that is wrong anyway is refused for what is known to be wrong.
    if (errors.length === 0 || !(error instanceof RevisionReadError)) return failed(503, `cannot check the pinned revision: ${errorMessage(error)}`, error);
  }
  // The other sets are compared only with a set valid on its own, as Kruise does.
  if (errors.length === 0) {
    const against = await clusterErrors(object, base, listed, deps);
    if (!Array.isArray(against)) return against;
    errors = against;
  }
  if (errors.length === 0) {
    await announceAdmitted(request, object, deps);
    return allowed([...patchPodMetadataWarnings(object.spec), ...repairMissingWarnings(request.object)]);
  }
  return denied(422, formatFieldErrors(errors), 'Invalid');
};

export const sidecarSetValidateHandler: AdmissionHandler = neverThrows(
  onlyKind(GROUP, KIND, onlyOperations(['CREATE', 'UPDATE'], handleValidate)),
);
