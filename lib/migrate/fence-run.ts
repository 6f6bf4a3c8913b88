/**
 * `npm run -s migrate -- fence`: walks the pods page by page, decides each
 * with fence-backfill.ts and writes the fence through {@link FenceCluster}
 * (lib/adapters/kube-fence-backfill.ts on a live cluster), one line per pod
 * fenced or skipped. A write carries a resourceVersion test: a pod changed
 * meanwhile answers a conflict, is read again once and decided afresh, and
 * is reported failed if it changed again.
 */
import { errorMessage } from '../errors.ts';
import type { Pod } from '../kube/types.ts';
import type { PodWebhookSelectors } from '../ports.ts';
import { podKey } from '../sidecarset/pod-state.ts';
import { sidecarSetName } from '../sidecarset/match.ts';
import type { NamespaceLabels } from '../sidecarset/match.ts';
import type { ControllerRevision } from '../sidecarset/revisions.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { declaredImages, fenceDecision, type FenceContext, type FenceDecision, type FenceValues } from './fence-backfill.ts';

/** What the tool reads and writes. */
export interface FenceCluster {
  /**
   * The pods carrying `kruise.io/sidecarset-hash` (of `namespace`, or all),
   * page by page. A list whose continue token expired starts over: a pod
   * may then come twice.
   */
  podPages(namespace: string | undefined, signal?: AbortSignal): AsyncIterable<Pod[]>;
  /** Every stored SidecarSet. */
  sidecarSets(signal?: AbortSignal): Promise<SidecarSet[]>;
  /** Every namespace's labels. */
  namespaceLabels(signal?: AbortSignal): Promise<NamespaceLabels>;
  /** pod-inject's selectors as registered; undefined when the project's configuration holds no pod-inject webhook. */
  podWebhook(signal?: AbortSignal): Promise<PodWebhookSelectors | undefined>;
  /** Every SidecarSet ControllerRevision of the revision namespace. */
  revisions(signal?: AbortSignal): Promise<readonly ControllerRevision[]>;
  /** The pod as stored now; undefined when it is gone. */
  getPod(namespace: string, name: string, signal?: AbortSignal): Promise<Pod | undefined>;
  /**
   * Adds the fence to `pod` as read, on the condition that it is still stored
   * at the same resourceVersion: 'conflict' when it is not (the pod changed
   * since), 'gone' when it was deleted.
   */
  patchPod(pod: Pod, fence: FenceValues, signal?: AbortSignal): Promise<'written' | 'gone' | 'conflict'>;
}

export interface FenceRunOptions {
  namespace?: string;
  dryRun: boolean;
}

export interface FenceSummary {
  /** Pods carrying `kruise.io/sidecarset-hash`. */
  injected: number;
  fenced: number;
  alreadyFenced: number;
  skipped: number;
  failed: number;
}

const fenceText = (d: FenceValues): string => `rollout-containers=${JSON.stringify(d.containers)} rollout-annotations=${JSON.stringify(d.keys)}`;

/** What each pod is judged against, read once for the run. */
async function fenceContext(cluster: FenceCluster, signal?: AbortSignal): Promise<FenceContext> {
  const [sets, namespaceLabels, webhook, revisions] = await Promise.all([cluster.sidecarSets(signal), cluster.namespaceLabels(signal), cluster.podWebhook(signal), cluster.revisions(signal)]);
  const byName = new Map(sets.map((set) => [sidecarSetName(set), set] as const));
  return { sets: byName, namespaceLabels, webhook, declaredImages: declaredImages(byName, revisions) };
}

/**
 * Fences every unfenced pod Kruise (or an earlier pod-inject) injected;
 * `out` gets one line per pod and none for the summary (see {@link formatFenceSummary}).
 * @throws what reading the sets, namespaces, pod-inject's registration, the revisions or the pod list throws (the cluster cannot be read).
 */
export async function runFenceBackfill(cluster: FenceCluster, options: FenceRunOptions, out: (line: string) => void, signal?: AbortSignal): Promise<FenceSummary> {
  const context = await fenceContext(cluster, signal);
  const summary: FenceSummary = { injected: 0, fenced: 0, alreadyFenced: 0, skipped: 0, failed: 0 };
  /** Pods seen, by uid (or key): a list started over after its continue token expired does not report them again. */
  const done = new Set<string>();

  const report = (pod: Pod, decision: FenceDecision | { kind: 'failed'; reason: string } | { kind: 'gone' }): void => {
    const key = podKey(pod);
    switch (decision.kind) {
      case 'not-injected':
        return;
      case 'fence':
        summary.fenced++;
        out(`${options.dryRun ? 'would fence' : 'fenced'} ${key}: ${fenceText(decision)}`);
        return;
      case 'fenced':
        summary.alreadyFenced++;
        out(`skipped ${key}: already fenced (its fence is never changed)`);
        return;
      case 'gone':
        summary.skipped++;
        out(`skipped ${key}: deleted meanwhile`);
        return;
      case 'skip':
        summary.skipped++;
        out(`skipped ${key}: ${decision.reason}`);
        return;
      case 'failed':
        summary.failed++;
        out(`failed ${key}: ${decision.reason}`);
        return;
    }
  };

  /** Writes the fence decided for `pod`, re-reading it once after a conflict. */
  const fence = async (pod: Pod, decision: FenceDecision & { kind: 'fence' }): Promise<void> => {
    const namespace = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    let current = pod;
    let decided = decision;
    for (let attempt = 1; ; attempt++) {
      let outcome;
      try {
        outcome = await cluster.patchPod(current, decided, signal);
      } catch (error) {
        report(current, { kind: 'failed', reason: errorMessage(error).replace(/\s*\n\s*/g, ' ') });
        return;
      }
      if (outcome !== 'conflict') {
        report(current, outcome === 'gone' ? { kind: 'gone' } : decided);
        return;
      }
      if (attempt > 1) {
        report(current, { kind: 'failed', reason: 'the pod changed while it was being fenced, twice; run the command again' });
        return;
      }
      let reread: Pod | undefined;
      try {
        reread = await cluster.getPod(namespace, name, signal);
      } catch (error) {
        report(current, { kind: 'failed', reason: `the pod changed meanwhile and could not be read again: ${errorMessage(error)}` });
        return;
      }
      if (reread === undefined) {
        report(current, { kind: 'gone' });
        return;
      }
      const again = fenceDecision(reread, context);
      if (again.kind !== 'fence') {
        report(reread, again);
        return;
      }
      current = reread;
      decided = again;
    }
  };

  for await (const pods of cluster.podPages(options.namespace, signal)) {
    for (const pod of pods) {
      const id = pod.metadata?.uid ?? podKey(pod);
      if (done.has(id)) continue;
      done.add(id);
      const decision = fenceDecision(pod, context);
      if (decision.kind === 'not-injected') continue;
      summary.injected++;
      if (decision.kind === 'fence' && !options.dryRun) await fence(pod, decision);
      else report(pod, decision);
    }
  }
  return summary;
}

/** The summary line. */
export function formatFenceSummary(summary: FenceSummary, dryRun: boolean): string {
  const fenced = `${summary.fenced} ${dryRun ? 'would be fenced' : 'fenced'}`;
  return `${summary.injected} pod(s) carry kruise.io/sidecarset-hash: ${fenced}, ${summary.alreadyFenced} already fenced, ${summary.skipped} skipped, ${summary.failed} failed${dryRun ? ' (dry run: nothing written)' : ''}`;
}
