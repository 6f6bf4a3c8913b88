/**
 * Disagreements with Kruise that are known bugs of this project, each with
 * the issue item that fixes it. A mismatch counts as expected only when
 * every field error one side alone reports is explained by an entry here
 * (or, for status and rollout, the entry recognises the case). When an item is fixed,
 * delete its entry: the suite then requires agreement on those cases.
 */
import type { Comparison } from './compare.ts';
import type { ConformanceCase } from './generator.ts';

export interface ExpectedMismatch {
  /** Where it is tracked. */
  item: string;
  /** Kruise denies with this field error and this project does not. */
  kruiseOnlyError?: RegExp;
  /** This project denies with this field error and Kruise does not. */
  oursOnlyError?: RegExp;
  /** A status case this entry explains. */
  statusCase?: (c: ConformanceCase, comparison: Comparison) => boolean;
  /** A rollout case this entry explains (the pods the reconcile left, compared as in compare.ts). */
  rolloutCase?: (c: ConformanceCase, comparison: Comparison) => boolean;
  /** Explains an error only next to one a primary entry explains (see {@link unexplainedErrors}). */
  consequence?: boolean;
  /**
   * The same error at another path: an error is explained only when the
   * other side has one this entry matches with the same text after the path.
   */
  samePairedMessage?: boolean;
}

// Issue 15 item 10 (a pinned sidecar running an older digest counted as
// ready) was fixed by the rollout's readiness rule (issue 16): no known bug is left.
export const EXPECTED_MISMATCHES: readonly ExpectedMismatch[] = [];

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
  if (c.class === 'status' || c.class === 'rollout') {
    const entries = EXPECTED_MISMATCHES.filter((e) => (c.class === 'status' ? e.statusCase : e.rolloutCase)?.(c, comparison) === true);
    return entries.length === 0 ? undefined : entries;
  }
  if ((comparison.kruiseOnly ?? []).length === 0 && (comparison.oursOnly ?? []).length === 0) return undefined;
  const { oursOnly, kruiseOnly, used } = unexplainedErrors(comparison);
  return oursOnly.length === 0 && kruiseOnly.length === 0 ? [...used] : undefined;
}
