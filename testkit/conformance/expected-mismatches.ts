/**
 * Disagreements with Kruise that are known bugs of this project, each with
 * the issue item that fixes it. A mismatch counts as expected only when
 * every field error one side alone reports is explained by an entry here
 * (or, for status, the entry recognises the case). When an item is fixed,
 * delete its entry: the suite then requires agreement on those cases.
 */
import type { Comparison } from './compare.ts';
import type { ConformanceCase } from './generator.ts';

export interface ExpectedMismatch {
  /** Where it is tracked. */
  item: string;
  /** Kruise denies with this field error and this project does not (items 1-5). */
  kruiseOnlyError?: RegExp;
  /** This project denies with this field error and Kruise does not (item 6). */
  oursOnlyError?: RegExp;
  /** A status case this entry explains (item 10). */
  statusCase?: (c: ConformanceCase) => boolean;
  /** Explains an error only next to one a primary entry explains (see {@link unexplainedErrors}). */
  consequence?: boolean;
  /**
   * The same error at another path: an error is explained only when the
   * other side has one this entry matches with the same text after the path.
   */
  samePairedMessage?: boolean;
}

const CONTAINER = String.raw`spec\.(?:init)?[cC]ontainers\[\d+\]`;

export const EXPECTED_MISMATCHES: readonly ExpectedMismatch[] = [
  {
    item: 'issue 15 item 1: env var with both value and valueFrom',
    kruiseOnlyError: new RegExp(String.raw`^${CONTAINER}\.env\[\d+\]\.valueFrom: Invalid value: "": may not be specified when \`value\` is not empty$`),
  },
  {
    item: 'issue 15 item 2: invalid env var name',
    kruiseOnlyError: new RegExp(String.raw`^${CONTAINER}\.env\[\d+\]\.name: Invalid value: ".*": a valid environment variable name must consist of`),
  },
  {
    item: 'issue 15 item 3: unsupported env fieldRef.fieldPath',
    kruiseOnlyError: new RegExp(String.raw`^${CONTAINER}\.env\[\d+\]\.valueFrom\.fieldRef\.fieldPath: Invalid value: ".*": error converting fieldPath: field label not supported`),
  },
  {
    item: 'issue 15 item 4: volume with more than one source (and its mounts then not found)',
    kruiseOnlyError: new RegExp(String.raw`^spec\.volumes\[\d+\]\.\w+: Forbidden: may not specify more than 1 volume type$|^${CONTAINER}\.volumeMounts\[\d+\]\.name: Not found: ".*"$`),
  },
  {
    item: 'issue 15 item 5: hostPath with an empty path',
    kruiseOnlyError: /^spec\.volumes\[\d+\]\.hostPath\.path: Required value$/,
  },
  {
    // The same error at Kubernetes 1.30's path (what Kruise 1.8 runs) and at 1.36's.
    item: 'issue 15 items 1-5 (Kubernetes 1.30 paths): a request above its limit is reported at resources.requests, not resources.requests[<name>]',
    samePairedMessage: true,
    kruiseOnlyError: new RegExp(String.raw`^${CONTAINER}\.resources\.requests: Invalid value: ".*": must be less than or equal to \w+ limit of`),
    oursOnlyError: new RegExp(String.raw`^${CONTAINER}\.resources\.requests\[[^\]]+\]: Invalid value: ".*": must be less than or equal to \w+ limit of`),
  },
  {
    item: 'issue 15 item 6: podInjectPolicy/shareVolumePolicy/transferEnv are Kruise-checked on spec.containers only',
    oursOnlyError: /^spec\.initContainers\[\d+\]\.(?:podInjectPolicy|shareVolumePolicy|transferEnv)/,
  },
  {
    // Found by this suite, not in issue 15. Kruise's paths name no item (and
    // it says spec.containers for an init container too).
    item: 'NEW (not in issue 15): a clash with another set is reported at the item (spec.containers[i].name, spec.initContainers[i].name, spec.volumes[i], spec.patchPodMetadata[i].annotations[key]); Kruise says spec.containers, spec.volumes, spec.patchPodMetadata',
    kruiseOnlyError: /^spec\.(?:containers|volumes|patchPodMetadata): Invalid value: ".*": (?:container .* already exist in|(?:volume|annotation) .* is in conflict with sidecarset) \S+$/,
    oursOnlyError:
      /^spec\.(?:(?:containers|initContainers)\[\d+\]\.name|volumes\[\d+\]|patchPodMetadata\[\d+\]\.annotations\[[^\]]+\]): Invalid value: ".*": (?:container .* already exist in|(?:volume|annotation) .* is in conflict with sidecarset) \S+$/,
    samePairedMessage: true,
  },
  {
    item: 'issue 15 items 1-5, consequence: a set wrongly valid on its own is then checked against the other sets',
    oursOnlyError: / already exist in |is in conflict with sidecarset /,
    consequence: true,
  },
  {
    item: 'issue 15 item 6, consequence: a set wrongly refused on its own is never checked against the other sets',
    kruiseOnlyError: /^spec\.(?:containers|volumes|patchPodMetadata): Invalid value: ".*": (?:container .* already exist in|(?:volume|annotation) .* is in conflict with sidecarset) \S+$/,
    consequence: true,
  },
  {
    // Both deny; only the wording differs. Found by this suite, not in issue 15.
    item: 'NEW (not in issue 15): a native sidecar under RollingUpdate is denied at spec.initContainers[i].restartPolicy (Forbidden) where Kruise says spec.updateStrategy: Required value, once per such init container',
    kruiseOnlyError: /^spec\.updateStrategy: Required value: The initContainer in-place upgrade is not currently supported\.$/,
    oursOnlyError: /^spec\.initContainers\[\d+\]\.restartPolicy: Forbidden: an init container with restartPolicy Always cannot be updated in place; use updateStrategy\.type NotUpdate$/,
  },
  {
    item: 'issue 15 item 10: a pinned sidecar running an older digest is ready here, not in Kruise (rollout issue)',
    statusCase: (c) =>
      c.class === 'status' &&
      c.cluster.pods.some((pod) => {
        const statuses = (pod.status as { containerStatuses?: { image?: string; imageID?: string }[] } | undefined)?.containerStatuses ?? [];
        return statuses.some((s) => s.image?.includes('@sha256:') === true && s.imageID !== undefined && !s.imageID.endsWith(s.image.split('@')[1] ?? ''));
      }),
  },
];

/** An error's text after its field path. */
function afterPath(error: string): string {
  return error.slice(error.indexOf(': ') + 2);
}

function entryFor(error: string, side: 'ours' | 'kruise', comparison: Comparison): ExpectedMismatch | undefined {
  return EXPECTED_MISMATCHES.find((e) => {
    const [mine, theirs, otherErrors] =
      side === 'ours' ? [e.oursOnlyError, e.kruiseOnlyError, comparison.kruiseOnly] : [e.kruiseOnlyError, e.oursOnlyError, comparison.oursOnly];
    if (mine?.test(error) !== true) return false;
    if (e.samePairedMessage !== true) return true;
    return (otherErrors ?? []).some((other) => theirs?.test(other) === true && afterPath(other) === afterPath(error));
  });
}

/**
 * The field errors of a mismatch that no entry explains. An entry marked
 * `consequence` explains an error only when a primary entry explains an
 * error of the other side: a set is checked against the other SidecarSets
 * only when it is valid on its own (on both sides), so when one side wrongly
 * admits it on its own (items 1-5: this project) or wrongly refuses it
 * (item 6: this project), the other side's cross-set errors differ too.
 */
export function unexplainedErrors(comparison: Comparison): { oursOnly: string[]; kruiseOnly: string[]; used: Set<ExpectedMismatch> } {
  const used = new Set<ExpectedMismatch>();
  const explain = (errors: readonly string[], side: 'ours' | 'kruise') =>
    errors.map((error) => ({ error, entry: entryFor(error, side, comparison) }));
  const ours = explain(comparison.oursOnly ?? [], 'ours');
  const kruise = explain(comparison.kruiseOnly ?? [], 'kruise');
  const primary = (list: typeof ours) => list.some(({ entry }) => entry !== undefined && entry.consequence !== true);
  const keep = (list: typeof ours, otherHasPrimary: boolean) =>
    list
      .filter(({ entry }) => {
        if (entry === undefined || (entry.consequence === true && !otherHasPrimary)) return true;
        used.add(entry);
        return false;
      })
      .map(({ error }) => error);
  const oursPrimary = primary(ours);
  const kruisePrimary = primary(kruise);
  return { oursOnly: keep(ours, kruisePrimary), kruiseOnly: keep(kruise, oursPrimary), used };
}

/** The entries that explain this mismatch, or undefined when it is not (entirely) expected. */
export function expectedBy(c: ConformanceCase, comparison: Comparison): ExpectedMismatch[] | undefined {
  if (c.class === 'status') {
    const entries = EXPECTED_MISMATCHES.filter((e) => e.statusCase?.(c) === true);
    return entries.length === 0 ? undefined : entries;
  }
  if ((comparison.kruiseOnly ?? []).length === 0 && (comparison.oursOnly ?? []).length === 0) return undefined;
  const { oursOnly, kruiseOnly, used } = unexplainedErrors(comparison);
  return oursOnly.length === 0 && kruiseOnly.length === 0 ? [...used] : undefined;
}
