/**
 * The preflight's decision (`npm run -s migrate -- check`): from what was
 * read, where the switch from Kruise stands (the step of docs/MIGRATION.md
 * that comes next), what blocks it, and whether a switch now would restart
 * any pod: that is decided with the reconciler's own plan
 * (lib/rollout/plan.ts planRollout), so "no pod would be patched" means the
 * status-sync reconcile, run now over these objects, writes no pod.
 */
import { errorMessage } from '../errors.ts';
import { objectOf, stringMapOf, stringOf } from '../kube/json.ts';
import type { JsonObject, Pod } from '../kube/types.ts';
import { planRollout, type RolloutCounts } from '../rollout/plan.ts';
import { podKey } from '../sidecarset/pod-state.ts';
import { waitingMessage } from '../rollout/batch.ts';
import { currentRevisionName, LABEL_SIDECARSET_NAME, type ControllerRevision } from '../sidecarset/revisions.ts';
import { sidecarSetName, type NamespaceLabels } from '../sidecarset/match.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { crdVersionsOf, olderStoredVersions, type CrdVersions } from './crd-versions.ts';
import { kruiseManagerOf, managerActive, supportedLine, type KruiseManager } from './kruise-manager.ts';
import { recognisePod } from './pod-recognition.ts';
import { kruiseEntries, ourEntries, type KruiseEntry, type OurEntries } from './webhook-entries.ts';

/** Everything the preflight reads, as read (undefined: the object does not exist). */
export interface MigrationSnapshot {
  kruiseNamespace: string;
  /** Where this project keeps ControllerRevisions (SIDECARSET_REVISION_NAMESPACE). */
  revisionNamespace: string;
  manager: JsonObject | undefined;
  kruiseMutating: JsonObject | undefined;
  kruiseValidating: JsonObject | undefined;
  ourMutating: JsonObject | undefined;
  ourValidating: JsonObject | undefined;
  crd: JsonObject | undefined;
  sets: readonly SidecarSet[];
  /** Every ControllerRevision labelled with a SidecarSet name, in any namespace. */
  revisions: readonly ControllerRevision[];
  /** The pods of the sets' scopes (each once). */
  pods: readonly Pod[];
  namespaceLabels: NamespaceLabels;
}

/** One set, as the reconciler would find it. */
export interface SetFinding {
  name: string;
  counts?: RolloutCounts;
  /** The stored status's counts that differ from the reconciler's (it would rewrite them; no pod is touched). */
  statusDiffers: string[];
  /** Pods a reconcile now would update in place (a sidecar restart), then flip (HotUpgrade): their keys. */
  wouldUpdate: string[];
  wouldFlip: string[];
  /** What the reconcile says about the rollout. */
  why: string;
  latestRevision: string | undefined;
  /** The revision the reconciler registers for the current spec. */
  expectedRevision: string;
  /** Namespaces holding this set's ControllerRevisions, with their count. */
  revisionsIn: Record<string, number>;
  /** The pinned injection revision, when it cannot be found where this project reads revisions. */
  missingPinnedRevision?: string;
}

export interface PodFinding {
  pod: string;
  detail: string;
}

export interface NextStep {
  /** The step of docs/MIGRATION.md, "Kruise to this project". */
  step: number;
  text: string;
}

export interface MigrationReport {
  kruise: { namespace: string; manager: KruiseManager | undefined; line: string | undefined; controllerActive: boolean; entries: KruiseEntry[] };
  ours: OurEntries;
  crd: CrdVersions | undefined;
  sets: SetFinding[];
  revisionNamespaces: Record<string, number>;
  revisionNamespace: string;
  oldFormPods: PodFinding[];
  unrecognisedPods: PodFinding[];
  /** What makes a switch unsafe now; empty when ready. */
  blockers: string[];
  /** Worth knowing, not blocking. */
  notes: string[];
  next: NextStep;
}

const COUNT_FIELDS = ['matchedPods', 'updatedPods', 'readyPods', 'updatedReadyPods'] as const;

function countBy(values: Iterable<string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

function setFinding(set: SidecarSet, pods: readonly Pod[], labels: NamespaceLabels, revisions: readonly ControllerRevision[], revisionNamespace: string): SetFinding {
  const name = sidecarSetName(set);
  const own = revisions.filter((r) => stringMapOf(r.metadata?.labels)[LABEL_SIDECARSET_NAME] === name);
  const finding: SetFinding = {
    name,
    statusDiffers: [],
    wouldUpdate: [],
    wouldFlip: [],
    why: '',
    latestRevision: stringOf(set.status?.latestRevision),
    expectedRevision: currentRevisionName(set),
    revisionsIn: countBy(own.map((r) => r.metadata?.namespace ?? '')),
  };
  const pinned = objectOf(set.spec?.injectionStrategy?.revision);
  const pinnedName = stringOf(pinned?.revisionName);
  const pinnedVersion = stringOf(pinned?.customVersion);
  if (pinnedName !== undefined && pinnedName !== '' && !own.some((r) => r.metadata?.name === pinnedName && r.metadata.namespace === revisionNamespace)) {
    finding.missingPinnedRevision = pinnedName;
  } else if (
    (pinnedName === undefined || pinnedName === '') &&
    pinnedVersion !== undefined &&
    pinnedVersion !== '' &&
    !own.some((r) => r.metadata?.namespace === revisionNamespace && stringMapOf(r.metadata.labels)['apps.kruise.io/sidecarset-custom-version'] === pinnedVersion)
  ) {
    finding.missingPinnedRevision = `customVersion ${pinnedVersion}`;
  }
  try {
    const plan = planRollout(set, pods, labels);
    finding.counts = plan.status;
    const stored = set.status ?? {};
    finding.statusDiffers = COUNT_FIELDS.filter((f) => (stored[f] ?? 0) !== plan.status[f]).map((f) => `${f} ${stored[f] ?? 0} → ${plan.status[f]}`);
    finding.wouldUpdate = plan.updates.map((u) => podKey(u.pod));
    finding.wouldFlip = plan.flips.map((f) => podKey(f.pod));
    finding.why = plan.waiting === undefined ? `updating ${plan.updates.length} pod(s) this reconcile` : waitingMessage(plan.waiting);
  } catch (error) {
    finding.why = `cannot be decided: ${errorMessage(error)}`;
  }
  return finding;
}

function sample(keys: readonly string[]): string {
  return keys.length <= 3 ? keys.join(', ') : `${keys.slice(0, 3).join(', ')} and ${keys.length - 3} more`;
}

/** The pods whose SidecarSet annotations are in the early form, and those this project cannot read. */
function podFindings(pods: readonly Pod[]): { oldFormPods: PodFinding[]; unrecognisedPods: PodFinding[] } {
  const oldFormPods: PodFinding[] = [];
  const unrecognisedPods: PodFinding[] = [];
  for (const pod of pods) {
    const seen = recognisePod(pod);
    if (seen.kind === 'old-form') oldFormPods.push({ pod: podKey(pod), detail: 'early {"<set>":"<hash>"} form, read as Kruise reads it' });
    if (seen.kind === 'unrecognised') unrecognisedPods.push({ pod: podKey(pod), detail: seen.problem });
  }
  return { oldFormPods, unrecognisedPods };
}

/** Into `blockers` and `notes`, what one set's finding says, in the report's order. */
function setFindingLines(set: SetFinding, revisionNamespace: string, blockers: string[], notes: string[]): void {
  if (set.wouldUpdate.length > 0) blockers.push(`SidecarSet ${set.name}: a reconcile now would update ${set.wouldUpdate.length} pod(s) in place (${sample(set.wouldUpdate)}): a rollout is in flight; let it finish or pause it (step 2)`);
  if (set.wouldFlip.length > 0) blockers.push(`SidecarSet ${set.name}: ${set.wouldFlip.length} pod(s) are mid-HotUpgrade and would be flipped now (${sample(set.wouldFlip)}); let the swap finish (step 2)`);
  if (set.missingPinnedRevision !== undefined) blockers.push(`SidecarSet ${set.name} pins revision ${set.missingPinnedRevision}, which is not in namespace ${revisionNamespace} where this project reads revisions: new pods would be refused`);
  const elsewhere = Object.keys(set.revisionsIn).filter((ns) => ns !== revisionNamespace);
  if (elsewhere.length > 0 && (set.revisionsIn[revisionNamespace] ?? 0) === 0) {
    blockers.push(`SidecarSet ${set.name}'s ControllerRevisions are in ${elsewhere.join(', ')}, not in ${revisionNamespace}: deploy with SIDECARSET_REVISION_NAMESPACE=${elsewhere[0] ?? ''} (and npm run manifests -- --revision-namespace ${elsewhere[0] ?? ''}), then run the check with --revision-namespace`);
  }
  if (set.statusDiffers.length > 0) notes.push(`SidecarSet ${set.name}: the first reconcile rewrites the status (${set.statusDiffers.join(', ')}); no pod is touched`);
  if (set.latestRevision !== undefined && set.latestRevision !== '' && set.latestRevision !== set.expectedRevision) {
    notes.push(`SidecarSet ${set.name}: status.latestRevision is ${set.latestRevision}, the current spec's revision is ${set.expectedRevision}: the first reconcile registers it (a ControllerRevision, no pod)`);
  }
}

/** Decides the report from a snapshot. */
export function assessMigration(snapshot: MigrationSnapshot): MigrationReport {
  const manager = snapshot.manager === undefined ? undefined : kruiseManagerOf(snapshot.manager);
  const entries = [...kruiseEntries(snapshot.kruiseMutating, true, manager), ...kruiseEntries(snapshot.kruiseValidating, false, manager)];
  const ours = ourEntries(snapshot.ourMutating, snapshot.ourValidating);
  const crd = snapshot.crd === undefined ? undefined : crdVersionsOf(snapshot.crd);
  const line = supportedLine(manager?.version);
  const controllerActive = managerActive(manager) && crd !== undefined;
  const sets = [...snapshot.sets].sort((a, b) => (sidecarSetName(a) < sidecarSetName(b) ? -1 : 1)).map((s) => setFinding(s, snapshot.pods, snapshot.namespaceLabels, snapshot.revisions, snapshot.revisionNamespace));
  const { oldFormPods, unrecognisedPods } = podFindings(snapshot.pods);
  const blockers: string[] = [];
  const notes: string[] = [];

  if (manager !== undefined && manager.version === undefined) notes.push(`Kruise's version is unknown: the manager's image ${manager.image ?? '(none)'} has no version tag; read it from your Helm release before going on`);
  if (manager?.version !== undefined && line === undefined) blockers.push(`Kruise ${manager.version.text} is neither 1.8 nor 1.9: docs/MIGRATION.md was checked against those two lines only`);
  if (crd === undefined) blockers.push('the SidecarSet CRD (sidecarsets.apps.kruise.io) is not installed: there is nothing to migrate, and this project needs it');
  const older = crd === undefined ? [] : olderStoredVersions(crd);
  if (crd !== undefined && crd.ours && crd.conversionWebhook && older.length > 0) {
    notes.push(`the CRD's status.storedVersions also lists ${older.join(', ')}: SidecarSets may still be stored as ${older.join(' or ')}, and each read of them as ${crd.storage ?? '?'} (the version this project's functions read) converts through sidecarset-convert; rewrite them once (docs/MIGRATION.md step 3, "Kruise 1.8")`);
  }
  for (const set of sets) setFindingLines(set, snapshot.revisionNamespace, blockers, notes);
  if (unrecognisedPods.length > 0) {
    blockers.push(`${unrecognisedPods.length} pod(s) carry SidecarSet annotations this project cannot read (${sample(unrecognisedPods.map((p) => p.pod))}): a rollout would count them as not updated and restart them; recreate them or fix the annotation`);
  }
  if (oldFormPods.length > 0) notes.push(`${oldFormPods.length} pod(s) carry the early {"<set>":"<hash>"} annotation form: recognised (read as Kruise reads it)`);

  return {
    kruise: { namespace: snapshot.kruiseNamespace, manager, line, controllerActive, entries },
    ours,
    crd,
    sets,
    revisionNamespaces: countBy(snapshot.revisions.map((r) => r.metadata?.namespace ?? '')),
    revisionNamespace: snapshot.revisionNamespace,
    oldFormPods,
    unrecognisedPods,
    blockers,
    notes,
    next: nextStep(manager, entries, ours, crd),
  };
}

function nextStep(manager: KruiseManager | undefined, entries: readonly KruiseEntry[], ours: OurEntries, crd: CrdVersions | undefined): NextStep {
  const oursComplete = ours.podInject && ours.sidecarSetDefault && ours.sidecarSetValidate;
  const kruiseAnswering = entries.filter((e) => e.active || e.returns);
  if (crd !== undefined && !crd.ours) {
    return { step: 3, text: "deploy the functions, apply this project's RBAC, then its CRD server-side (npm run -s manifests -- --no-namespace …), with sidecarset-convert answering first: the CRD converts through it" };
  }
  if (!oursComplete) return { step: 4, text: "deploy the functions and apply this project's webhook configurations; Kruise's keep answering meanwhile, so every pod is injected by one or both" };
  if (kruiseAnswering.length > 0) {
    const names = kruiseAnswering.map((e) => `${e.name}${e.active ? '' : ' (returns from the template)'}`).join(', ');
    return { step: 5, text: `remove Kruise's SidecarSet and pod-injection entries from its webhook configurations and from their template annotation: ${names}` };
  }
  if (managerActive(manager)) return { step: 6, text: "stop Kruise's SidecarSet controller: scale kruise-controller-manager to 0 (it has no switch for SidecarSet alone)" };
  return { step: 7, text: 'done: this project alone handles SidecarSets; after the next resync, check that no pod changed (step 7)' };
}
