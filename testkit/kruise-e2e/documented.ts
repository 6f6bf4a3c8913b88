/**
 * Kruise e2e specs that fail here because this project does better on
 * purpose, each recognised narrowly: by its group, its spec text and the
 * exact shape of its failure. A spec that fails any other way is a failure.
 * Each entry names the section of docs/DIFFERENCES-FROM-KRUISE-1.9.md that
 * describes the difference.
 *
 * Ginkgo prefixes a `Failf` message with its time (`Dec  6 07:45:21.724: `).
 */
export interface DocumentedDifference {
  /** Short name, printed in the table and the summary. */
  name: string;
  group: string;
  /** The spec's text (the JUnit name without `[It] `) ends with this. */
  spec: string;
  /** The failure's message, as Ginkgo writes it, matches this. */
  failure: RegExp;
  /** Where the difference is written down. */
  doc: string;
}

export const DOCUMENTED_DIFFERENCES: readonly DocumentedDifference[] = [
  {
    // The spec expects the NotUpdate canary's readyPods and updatedReadyPods
    // to be 0 while both its pods are ready: Kruise's pod event handler
    // skips NotUpdate sets on pod updates (sidecarset_pod_event_handler.go,
    // updatePod), so its status keeps the counts of the pods' creation, when
    // they were not ready yet, until the controller's next resync (hours).
    // Here the status counts the ready pods: {observedGeneration, matched 2,
    // updated 2, ready 2, updatedReady 2}, Go's print of SidecarSetStatus.
    name: 'readyPods stays current for NotUpdate sets',
    group: 'v1beta1',
    spec: 'inject pod sidecar with canary sidecarSet [SidecarSet, workload]',
    failure: /^(?:[A-Z][a-z]{2} +\d+ [\d:.]+: )?Failed waiting for sidecarSet to upgrade complete: context deadline exceeded status\(\{\d+ 2 2 2 2 test-sidecarset-\S+ /,
    doc: 'docs/DIFFERENCES-FROM-KRUISE-1.9.md ("readyPods stays current")',
  },
];

/** The documented difference a failed spec of `group` is, if it is exactly one. */
export function documentedDifferenceOf(group: string, spec: { name: string; state: string; message: string }): DocumentedDifference | undefined {
  if (spec.state !== 'failed') return undefined;
  const text = spec.name.replace(/^\[It\]\s*/, '');
  return DOCUMENTED_DIFFERENCES.find((d) => d.group === group && text.endsWith(d.spec) && d.failure.test(spec.message.trim()));
}
