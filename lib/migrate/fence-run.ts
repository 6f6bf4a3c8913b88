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

type Reported = FenceDecision | { kind: 'failed'; reason: string } | { kind: 'gone' };

/** One run: what it judges against, what it has reported, and its counts. */
class FenceRun {
  readonly summary: FenceSummary = { injected: 0, fenced: 0, alreadyFenced: 0, skipped: 0, failed: 0 };
  private readonly cluster: FenceCluster;
  private readonly context: FenceContext;
  private readonly options: FenceRunOptions;
  private readonly out: (line: string) => void;
  private readonly signal: AbortSignal | undefined;
  /** Pods seen, by uid (or key): a list started over after its continue token expired does not report them again. */
  private readonly done = new Set<string>();

  constructor(cluster: FenceCluster, context: FenceContext, options: FenceRunOptions, out: (line: string) => void, signal: AbortSignal | undefined) {
    this.cluster = cluster;
    this.context = context;
    this.options = options;
    this.out = out;
    this.signal = signal;
  }

  /** Decides one listed pod and fences it or reports it; a pod seen before is passed over. */
  async visit(pod: Pod): Promise<void> {
    const id = pod.metadata?.uid ?? podKey(pod);
    if (this.done.has(id)) return;
    this.done.add(id);
    const decision = fenceDecision(pod, this.context);
    if (decision.kind === 'not-injected') return;
    this.summary.injected++;
    if (decision.kind === 'fence' && !this.options.dryRun) await this.fence(pod, decision);
    else this.report(pod, decision);
  }

  private report(pod: Pod, decision: Reported): void {
    const key = podKey(pod);
    const { summary } = this;
    switch (decision.kind) {
      case 'not-injected':
        return;
      case 'fence':
        summary.fenced++;
        this.out(`${this.options.dryRun ? 'would fence' : 'fenced'} ${key}: ${fenceText(decision)}`);
        return;
      case 'fenced':
        summary.alreadyFenced++;
        this.out(`skipped ${key}: already fenced (its fence is never changed)`);
        return;
      case 'gone':
      case 'skip':
        summary.skipped++;
        this.out(`skipped ${key}: ${decision.kind === 'gone' ? 'deleted meanwhile' : decision.reason}`);
        return;
      case 'failed':
        summary.failed++;
        this.out(`failed ${key}: ${decision.reason}`);
        return;
    }
  }

  /** Writes the fence decided for `pod`, re-reading it once after a conflict. */
  private async fence(pod: Pod, decision: FenceDecision & { kind: 'fence' }): Promise<void> {
    let current = pod;
    let decided = decision;
    for (let attempt = 1; ; attempt++) {
      let outcome;
      try {
        outcome = await this.cluster.patchPod(current, decided, this.signal);
      } catch (error) {
        this.report(current, { kind: 'failed', reason: errorMessage(error).replace(/\s*\n\s*/g, ' ') });
        return;
      }
      if (outcome !== 'conflict') {
        this.report(current, outcome === 'gone' ? { kind: 'gone' } : decided);
        return;
      }
      if (attempt > 1) {
        this.report(current, { kind: 'failed', reason: 'the pod changed while it was being fenced, twice; run the command again' });
        return;
      }
      const again = await this.decideAgain(current);
      if (again === undefined) return;
      [current, decided] = again;
    }
  }

  /** After a conflict: the pod read again and its fence decided afresh; undefined (reported) when it is no longer one to fence. */
  private async decideAgain(pod: Pod): Promise<[Pod, FenceDecision & { kind: 'fence' }] | undefined> {
    let reread: Pod | undefined;
    try {
      reread = await this.cluster.getPod(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', this.signal);
    } catch (error) {
      this.report(pod, { kind: 'failed', reason: `the pod changed meanwhile and could not be read again: ${errorMessage(error)}` });
      return undefined;
    }
    if (reread === undefined) {
      this.report(pod, { kind: 'gone' });
      return undefined;
    }
    const again = fenceDecision(reread, this.context);
    if (again.kind === 'fence') return [reread, again];
    this.report(reread, again);
    return undefined;
  }
}

/**
 * Fences every unfenced pod Kruise (or an earlier pod-inject) injected;
 * `out` gets one line per pod and none for the summary (see {@link formatFenceSummary}).
 * @throws what reading the sets, namespaces, pod-inject's registration, the revisions or the pod list throws (the cluster cannot be read).
 */
export async function runFenceBackfill(cluster: FenceCluster, options: FenceRunOptions, out: (line: string) => void, signal?: AbortSignal): Promise<FenceSummary> {
  const run = new FenceRun(cluster, await fenceContext(cluster, signal), options, out, signal);
  for await (const pods of cluster.podPages(options.namespace, signal)) {
    for (const pod of pods) await run.visit(pod);
  }
  return run.summary;
}

/** The summary line. */
export function formatFenceSummary(summary: FenceSummary, dryRun: boolean): string {
  const fenced = `${summary.fenced} ${dryRun ? 'would be fenced' : 'fenced'}`;
  return `${summary.injected} pod(s) carry kruise.io/sidecarset-hash: ${fenced}, ${summary.alreadyFenced} already fenced, ${summary.skipped} skipped, ${summary.failed} failed${dryRun ? ' (dry run: nothing written)' : ''}`;
}
