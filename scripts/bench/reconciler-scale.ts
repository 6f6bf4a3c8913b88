/**
 * What section 4b says about clusters past its measured size: what happens
 * to a resync longer than the schedule, what a rollout's scoped lists add, and
 * the design for ten times more pods with its cost on the API server next
 * to Kruise's informers. Kept with the section so a new run writes it again
 * from its own figures.
 */

export interface ScaleFigures {
  /** Pods the resync was measured over. */
  pods: number;
  /** The resync's wall time per pod, in ms (median run). */
  perPodMs: number;
  /** Bytes per pod of the pod lists the API server answered. */
  podBytes: number;
  /** The most pods a page asks for. */
  pageSize: number;
  /** status-sync's configured Lambda timeout. */
  timeoutSeconds: number;
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');

/** The notes, given the section's own figures. */
export function pastMeasuredScaleNotes(f: ScaleFigures): string[] {
  const seconds = (pods: number) => (f.perPodMs * pods) / 1000;
  const podsIn = (s: number) => (s * 1000) / f.perPodMs;
  const gb = (pods: number) => ((pods * f.podBytes) / 1e9).toFixed(1);
  const pages = (pods: number) => count(Math.ceil(pods / f.pageSize));
  // Said from the figures, not assumed: a quiet machine's resync of 100,000 pods fits the minute, a loaded one's does not.
  const outlasts = (pods: number) =>
    seconds(pods) > 60 ? `At ${count(pods)} pods a resync already outlasts its one-minute schedule (${seconds(pods).toFixed(0)} s).` : `At ${count(pods)} pods a resync fits its one-minute schedule (${seconds(pods).toFixed(0)} s); larger clusters outlast it.`;
  const againstLimits = (s: number) =>
    s > 900 ? "past Lambda's 15-minute ceiling" : s > f.timeoutSeconds ? `past the configured ${f.timeoutSeconds} s timeout, inside Lambda's 15 minutes` : `inside the configured ${f.timeoutSeconds} s timeout, but many times the one-minute schedule`;
  return [
    `${outlasts(f.pods)} Its time is linear in the pods' bytes (the list it reads is the floor above): ${f.perPodMs.toFixed(3)} ms a pod here, so a resync reaches the one-minute schedule at about ${count(podsIn(60))} pods of this size, the configured ${f.timeoutSeconds} s timeout at about ${count(podsIn(f.timeoutSeconds))} and Lambda's 900 s ceiling at about ${count(podsIn(900))}. EventBridge ticks every minute and status-sync runs one resync at a time (reserved concurrency 1); a tick that cannot start within 60 s is dropped (maxEventAge 60 s, no retries), so a resync longer than a minute runs back to back with the next one and the statuses are as fresh as one resync is long. The timeout is a hard wall: statuses are written after the whole count, so a resync cut off by it writes none (raise statusSyncTimeoutSeconds before that, up to 900). Heavier pods move every threshold down in proportion to their bytes, not their number; memory does not grow with the pods (one pod's text and one page of summaries are held at a time, twice at most while the next page is read ahead).`,
    `A rollout's scoped reads come on top. The first reconcile of a set with rollout work in each invocation (section 6) lists that set's pods by its selector; its requeued reconciles plan from a watch of them (lib/status-sync/pod-view.ts) and list again only when that watch ends or cannot show the loop's own writes in time, so a rollout costs one scoped list per invocation and one watch stream, not one list per reaction. Its reconciles run one at a time with the resync (reserved concurrency 1): while a resync of ${seconds(f.pods).toFixed(0)} s runs, a rollout's next batch waits behind it. The API server answers a label-selected list by walking every pod of the scope (the namespace, or the cluster) and sending the selected ones: a set selecting 10% of ${count(f.pods)} pods costs the server a walk of all of them per list but only a tenth of the bytes.`,
    `For ten times more (1,000,000 pods), a design not built yet: the resync stops listing and keeps state, as Kruise's informers do, without keeping the pods. An invocation opens one pods watch (allowWatchBookmarks) and holds it for its whole run (up to 14 minutes, invocations back to back under reserved concurrency 1), resuming from the resourceVersion the previous invocation reached (bookmarks keep it inside the watch cache's window), and lists again only when the server answers 410 Gone. The counts are kept as one small record per pod (uid, namespace, the sets it matches, updated and ready or not: about 100–150 bytes, 100–150 MB for 1,000,000 pods, a 1–2 GB function), saved to S3 when an invocation ends and loaded when the next starts; a status is written when its counts change, and a rollout's reconciles read their pods' records instead of listing.`,
    `Its cost on the API server, at 1,000,000 pods of ${count(f.podBytes)} bytes: today's design lists every pod every resync, ${pages(1_000_000)} pages and ${gb(1_000_000)} GB of JSON encoded per resync, and a resync would take about ${(seconds(1_000_000) / 60).toFixed(0)} minutes (${againstLimits(seconds(1_000_000))}). Kruise's manager lists the pods once when it starts (the same ${gb(1_000_000)} GB, from the watch cache) and then holds one watch: each pod change is sent once, so at 1% of pods changing a minute it is 10,000 events, about ${((10_000 * f.podBytes) / 1e6).toFixed(0)} MB a minute, and its manager holds every pod in memory (the whole objects, several GB at this size). The watch design costs the server what Kruise's informer does (one list after each 410, one watch stream, one event per change) and the function about 150 bytes a pod instead of the pod.`,
  ];
}
