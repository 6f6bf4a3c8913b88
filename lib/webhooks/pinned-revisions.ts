/**
 * The revisions a SidecarSet pins with `injectionStrategy.revision`
 * (rollout.md §2.3, §2.4), read for the two webhooks that need them: the
 * pod webhook injects the pinned revision (or the current set), the
 * validating webhook refuses a pin that does not resolve. A set that pins
 * nothing costs no API call; a pinning set costs one (a GET by name, or a
 * list by custom version).
 *
 * A pinned revision is used only when it is the set's own (its
 * `kruise.io/sidecarset-name` label names the set, and its controller
 * reference, if any, names the set in either version of the group: a pin by
 * name could otherwise inject another set's sidecars, which its author may
 * not control)
 * and its recorded containers, volumes and patchPodMetadata pass the checks
 * a SidecarSet's own spec must pass (a revision is an object anyone who can write the
 * revision namespace can forge). Kruise checks neither; either failing is
 * "cannot decide": validation refuses the pin, injection the pod.
 */
import { errorMessage } from '../errors.ts';
import type { FieldError } from '../kube/field-errors.ts';
import { formatFieldError, root } from '../kube/field-errors.ts';
import { objectOf, stringOf } from '../kube/json.ts';
import { labelValueErrors } from '../kube/names.ts';
import type { JsonObject } from '../kube/types.ts';
import type { RevisionSource } from '../ports.ts';
import { pinnedRevision, revisionForInjection, RevisionUnavailableError } from '../sidecarset/revision-pick.ts';
import { foreignController, LABEL_CUSTOM_VERSION, LABEL_SIDECARSET_NAME, type ControllerRevision } from '../sidecarset/revisions.ts';
import { sidecarSetName } from '../sidecarset/match.ts';
import { defaultSidecarSet } from '../sidecarset/defaults.ts';
import { validateContainers } from '../sidecarset/validate-containers.ts';
import { validatePatchPodMetadata } from '../sidecarset/validate-patch-metadata.ts';
import type { SidecarSet } from '../sidecarset/types.ts';

/** The pinned revision could not be read (the API server, not the pin): nobody can decide now. */
export class RevisionReadError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RevisionReadError';
  }
}

/** What `injectionStrategy.revision` pins; undefined when it pins nothing (Kruise then injects the current set). */
export type RevisionPin = { revisionName: string } | { customVersion: string };

export function revisionPin(set: SidecarSet): RevisionPin | undefined {
  const pin = objectOf(set.spec?.injectionStrategy?.revision);
  const revisionName = stringOf(pin?.revisionName);
  if (revisionName !== undefined) return { revisionName };
  const customVersion = stringOf(pin?.customVersion);
  return customVersion === undefined ? undefined : { customVersion };
}

/** The pin in words, for messages: `ControllerRevision "x"` or `custom version "3"`. */
export function describePin(pin: RevisionPin): string {
  return 'revisionName' in pin ? `ControllerRevision ${JSON.stringify(pin.revisionName)}` : `custom version ${JSON.stringify(pin.customVersion)}`;
}

/**
 * The stored revisions the set's pin can resolve to: the one of that name,
 * or those labelled with the set's name and the custom version. Empty when
 * none exists (the pure pick then says what is missing).
 * @throws RevisionUnavailableError when no revision can carry the pin (a name or version that no
 *   label selector can select).
 * @throws RevisionReadError when the API server could not be read, or `source` is absent.
 */
export async function readPinnedRevisions(
  set: SidecarSet,
  pin: RevisionPin,
  source: RevisionSource | undefined,
  signal?: AbortSignal,
): Promise<readonly ControllerRevision[]> {
  const name = sidecarSetName(set);
  // Nothing to read from (the invoke command): nobody can decide here, whether the pin resolves or not.
  if (source === undefined) throw new RevisionReadError(`SidecarSet ${name} pins ${describePin(pin)}, but ControllerRevisions are not read here`);
  const where = `SidecarSet ${name} pins ${describePin(pin)} (namespace ${source.namespace})`;
  if ('revisionName' in pin) {
    // "" names no object (a GET of "" would be the list of all of them).
    if (pin.revisionName === '') return [];
    const found = await read(where, () => source.get(pin.revisionName, signal));
    return found === undefined ? [] : [found];
  }
  // Kruise labels each revision with the set's name and lists by it: a name or version no label can hold has no revision.
  for (const [what, value] of [['its name', name], ['the custom version', pin.customVersion]] as const) {
    const problems = labelValueErrors(value);
    if (problems.length > 0) throw new RevisionUnavailableError(`${where}, but ${what} cannot be a label value, so no ControllerRevision carries it: ${problems.join('; ')}`);
  }
  return read(where, () => source.list(name, { [LABEL_CUSTOM_VERSION]: pin.customVersion }, signal));
}

/** The first problems shown in a message; the rest are counted. */
const PROBLEMS_SHOWN = 3;

/**
 * The revision the set pins, when it may be injected: the set's own, with
 * valid recorded data. Undefined when nothing is pinned.
 * @throws RevisionUnavailableError when the pin does not resolve, or resolves to another set's
 *   revision or to data that is not a valid SidecarSet's.
 */
export function usablePinnedRevision(set: SidecarSet, revisions: readonly ControllerRevision[]): ControllerRevision | undefined {
  const revision = pinnedRevision(set, revisions);
  if (revision === undefined) return undefined;
  const name = sidecarSetName(set);
  const revisionName = stringOf(revision.metadata?.name) ?? '';
  const owner = stringOf(objectOf(revision.metadata?.labels)?.[LABEL_SIDECARSET_NAME]);
  if (owner !== name) {
    const whose = owner === undefined ? `carries no ${LABEL_SIDECARSET_NAME} label` : `belongs to SidecarSet ${JSON.stringify(owner)}`;
    throw new RevisionUnavailableError(`SidecarSet ${name} pins ControllerRevision ${revisionName}, which ${whose}: a set may pin only its own revisions`);
  }
  // Kruise 1.8 named the owner apps.kruise.io/v1alpha1, Kruise 1.9 v1beta1: either is the set.
  const controller = foreignController(revision, set);
  if (controller !== undefined) {
    throw new RevisionUnavailableError(`SidecarSet ${name} pins ControllerRevision ${revisionName}, which is controlled by ${controller}: a set may pin only its own revisions`);
  }
  // Judged with the defaults a stored set has (a revision records the set as stored, defaults included).
  const recorded: JsonObject = objectOf(objectOf(revision.data)?.spec) ?? {};
  const spec: JsonObject = objectOf(defaultSidecarSet({ spec: recorded }).spec) ?? {};
  const errs: FieldError[] = [];
  validateContainers(spec, root.child('data').child('spec'), errs);
  validatePatchPodMetadata(spec, root.child('data').child('spec'), errs);
  if (errs.length > 0) {
    const shown = errs.slice(0, PROBLEMS_SHOWN).map(formatFieldError);
    const more = errs.length > PROBLEMS_SHOWN ? ` (and ${errs.length - PROBLEMS_SHOWN} more)` : '';
    throw new RevisionUnavailableError(`SidecarSet ${name} pins ControllerRevision ${revisionName}, whose recorded sidecars are not valid: ${shown.join('; ')}${more}`);
  }
  return revision;
}

async function read<T>(where: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new RevisionReadError(`${where}, which cannot be read: ${errorMessage(error)}`, { cause: error });
  }
}

/**
 * For each set (already known to apply to the pod) that pins a revision,
 * the set to inject instead of it when the pick (§2.4) chooses the pinned
 * revision: the revision restored onto the set. Sets that pin nothing, or
 * whose pick is the current set, are absent. The sets' revisions are read
 * at once, one read per pinning set; `draw` is called once per pinning set, in order.
 * @throws RevisionUnavailableError (the pin does not resolve, a malformed selector or partition)
 * @throws RevisionReadError (the revisions could not be read)
 */
export async function injectionRevisions(
  sets: readonly SidecarSet[],
  podLabels: Readonly<Record<string, string>>,
  source: RevisionSource | undefined,
  draw: () => number,
  signal?: AbortSignal,
): Promise<Map<string, SidecarSet>> {
  const pinning = sets.flatMap((set) => {
    const pin = revisionPin(set);
    return pin === undefined ? [] : [{ set, pin }];
  });
  const read = await Promise.all(pinning.map(async ({ set, pin }) => ({ set, revisions: await readPinnedRevisions(set, pin, source, signal) })));
  const chosen = new Map<string, SidecarSet>();
  for (const { set, revisions } of read) {
    // Refused before the draw decides whether it is used: a bad pin is bad for every pod.
    usablePinnedRevision(set, revisions);
    const choice = revisionForInjection(set, podLabels, revisions, draw());
    if (choice.kind === 'pinned') chosen.set(sidecarSetName(set), choice.set);
  }
  return chosen;
}

/**
 * Validation's check that a pinned revision resolves now (Kruise's
 * "Cannot find specific ControllerRevision"): empty when the set pins
 * nothing or its pin resolves, else one error on spec.injectionStrategy.revision.
 * @throws RevisionReadError when the revisions could not be read.
 */
export async function pinnedRevisionErrors(set: SidecarSet, source: RevisionSource | undefined, signal?: AbortSignal): Promise<FieldError[]> {
  const pin = revisionPin(set);
  if (pin === undefined) return [];
  const path = root.child('spec').child('injectionStrategy').child('revision');
  try {
    usablePinnedRevision(set, await readPinnedRevisions(set, pin, source, signal));
    return [];
  } catch (error) {
    if (!(error instanceof RevisionUnavailableError)) throw error;
    return [path.invalid(set.spec?.injectionStrategy?.revision, `Cannot find specific ControllerRevision: ${error.message}`)];
  }
}
