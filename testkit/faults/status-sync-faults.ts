/**
 * The status reconciler under real faults (issue 7): a pod list that fails
 * halfway, a continue token that expires, write conflicts, an API server
 * restart mid-resync. Each scenario runs real resyncs (the production adapters
 * of functions/status-sync/compose.ts, as the least-privilege identity)
 * against a real control plane, records every SidecarSet version the API
 * server stores meanwhile (status-sync-recorder.ts) and checks:
 *
 * - no stored status is ever anything but the wrong one the scenario began
 *   with or the true status of a version the set had: a status written from
 *   a partial list counts fewer pods than exist and fails this;
 * - the faulted resync reports what it could not do;
 * - the first resync after the fault clears writes the true status, and a
 *   further resync writes nothing.
 *
 * A violated invariant throws an Error saying which, where and by how much.
 * Every scenario returns flat figures, so the jest suite runs a short version
 * and `npm run reliability` a long one.
 */
import { kubeEventSink } from '../../lib/adapters/kube-events.ts';
import { kubeNamespaceSnapshot } from '../../lib/adapters/kube-namespaces.ts';
import { kubePodPages } from '../../lib/adapters/kube-pods.ts';
import { DEFAULT_CALL_TIMEOUT_MS } from '../../lib/adapters/kube-request.ts';
import { kubeStatusWriter } from '../../lib/adapters/kube-sidecarsets.ts';
import { kubeClusterReader, kubeSidecarSetSource } from '../../lib/adapters/kube-sources.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import type { SidecarSet, SidecarSetStatus } from '../../lib/sidecarset/types.ts';
import { notInjectedEvents } from '../../lib/status-sync/not-injected.ts';
import { runResync, type ResyncResult, type ResyncOptions } from '../../lib/status-sync/resync.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';
import { admin, CANARY_SELECTOR, OLD_LOG_HASH, SET_PLANS, SETS_PATH, setPlan, trueStatus, type FaultCluster } from './status-sync-fixture.ts';
import { recordSets, type SetRecorder } from './status-sync-recorder.ts';
import { podPagesCutShort, podPagesWithFault, statusWriterWithFault, type BetweenPages, type FaultyPodPages, type FaultyStatusWriter, type WriteHooks } from './status-sync-triggers.ts';
import type { Figures } from '../reliability/figures.ts';


export interface ScenarioOptions {
  /** Pods per page of the pod list; the list must span several pages. Default 20. */
  pageSize?: number;
  /** Runs of the scenario, the fault at a different page or write each time. Default 1. */
  repetitions?: number;
}

const DEFAULT_PAGE_SIZE = 20;
/** The set whose pods are spread over every page: the one a partial list undercounts. */
const WIDE_SET = 'log-agent';
const STATUS_FIELDS = ['observedGeneration', 'matchedPods', 'updatedPods', 'readyPods', 'updatedReadyPods'] as const;

/** What the scenario's resyncs did, summed. */
class Tally {
  resyncs = 0;
  podsSeen = 0;
  statusesWritten = 0;
  errorsReported = 0;
  podListAttempts = 0;
  conflicts = 0;
  statusObservations = 0;
  /** Written statuses with a count under the truth for the set as it was then: the invariant, always 0 in a passing run. */
  writtenBelowTruth = 0;
  minObservedMatched = Number.POSITIVE_INFINITY;
  expectedMatched = 0;
  convergedAfterResyncs = 0;
  readonly extra: Figures = {};

  add(run: ResyncRun): void {
    this.resyncs++;
    this.podsSeen += run.result.podsSeen;
    this.statusesWritten += run.result.statusesWritten;
    this.errorsReported += run.result.errors.length;
    this.podListAttempts += run.result.podListAttempts;
    this.conflicts += run.writer.conflicts;
  }

  bump(key: string, by = 1): void {
    const current = this.extra[key];
    this.extra[key] = (typeof current === 'number' ? current : 0) + by;
  }

  figures(scenario: string, repetitions: number, startedMs: number): Figures {
    return {
      scenario,
      repetitions,
      resyncs: this.resyncs,
      podsSeen: this.podsSeen,
      statusesWritten: this.statusesWritten,
      errorsReported: this.errorsReported,
      podListAttempts: this.podListAttempts,
      conflicts: this.conflicts,
      statusObservations: this.statusObservations,
      writtenBelowTruth: this.writtenBelowTruth,
      minObservedMatched: Number.isFinite(this.minObservedMatched) ? this.minObservedMatched : -1,
      expectedMatched: this.expectedMatched,
      convergedAfterResyncs: this.convergedAfterResyncs,
      ...this.extra,
      durationMs: Math.round(performance.now() - startedMs),
    };
  }
}

interface ResyncRun {
  result: ResyncResult;
  pods: FaultyPodPages;
  writer: FaultyStatusWriter;
}

interface Faults extends WriteHooks {
  betweenPages?: BetweenPages;
  /** Ends the pod list quietly after this many pages (a broken adapter), to check the checks. */
  cutShortAfter?: number;
}

interface Reconciler {
  resync(faults?: Faults, options?: ResyncOptions): Promise<ResyncRun>;
}

/** The reconciler as functions/status-sync/compose.ts composes it, with fault triggers around the pod list and the writer. */
function reconciler(kubeconfig: string, pageSize: number): Reconciler {
  const client = kubeConfigClient(parseKubeConfig(kubeconfig, 'the functions kubeconfig'), { attemptTimeoutMs: DEFAULT_CALL_TIMEOUT_MS });
  const sidecarSets = kubeSidecarSetSource(kubeClusterReader(client), { maxStalenessMs: 0, apiTimeoutMs: DEFAULT_CALL_TIMEOUT_MS });
  const pods = kubePodPages(client, { pageSize });
  const statuses = kubeStatusWriter(client);
  const events = kubeEventSink(client);
  const notices = notInjectedEvents();
  return {
    async resync(faults = {}, resyncOptions = {}) {
      const faultyPods = podPagesWithFault(faults.cutShortAfter === undefined ? pods : podPagesCutShort(pods, faults.cutShortAfter), faults.betweenPages ?? (() => Promise.resolve()));
      const writer = statusWriterWithFault(statuses, faults);
      const result = await runResync({ sidecarSets, pods: faultyPods, namespaces: kubeNamespaceSnapshot(client), statuses: writer, events, notices }, resyncOptions);
      return { result, pods: faultyPods, writer };
    },
  };
}

function sameStatus(a: SidecarSetStatus | undefined, b: SidecarSetStatus | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return STATUS_FIELDS.every((field) => a[field] === b[field]);
}

const show = (status: SidecarSetStatus | undefined): string =>
  status === undefined ? '(no status)' : JSON.stringify(Object.fromEntries(STATUS_FIELDS.map((field) => [field, status[field]])));

const showResult = (result: ResyncResult): string =>
  JSON.stringify({ podsSeen: result.podsSeen, statusesWritten: result.statusesWritten, podListAttempts: result.podListAttempts, errors: result.errors });

/** Throws `label: message` with the resync's result when `ok` is false. */
function ensure(ok: boolean, label: string, message: string, result?: ResyncResult): void {
  if (!ok) throw new Error(`${label}: ${message}${result === undefined ? '' : `; the resync returned ${showResult(result)}`}`);
}

/**
 * Every stored version must carry the status the scenario began with or the
 * true status of a version the set has had (a status written for the set
 * before its selector changed stays on it until the next resync): anything
 * else was computed from pods that were not all there.
 */
function checkRecord(cluster: FaultCluster, recorder: SetRecorder, label: string, tally: Tally): void {
  ensure(recorder.gaps.length === 0, label, `the record of stored statuses is incomplete, so it proves nothing: ${recorder.gaps.join('; ')}`);
  let observations = 0;
  for (const plan of SET_PLANS) {
    const versions = recorder.versions.filter((v) => v.name === plan.name);
    const first = versions[0];
    ensure(first !== undefined && sameStatus(first.status, plan.resetStatus), label, `${plan.name} began with ${show(first?.status)}, not its reset status ${show(plan.resetStatus)}`);
    const allowed: (SidecarSetStatus | undefined)[] = [plan.resetStatus];
    let previous = first?.status;
    for (const version of versions) {
      const truth = trueStatus(plan, version, version.generation, cluster.pods);
      allowed.push(truth);
      if (!sameStatus(version.status, previous)) {
        observations++;
        if (STATUS_FIELDS.some((field) => field !== 'observedGeneration' && (version.status?.[field] ?? 0) < (truth[field] ?? 0))) tally.writtenBelowTruth++;
        if (plan.name === WIDE_SET) tally.minObservedMatched = Math.min(tally.minObservedMatched, version.status?.matchedPods ?? 0);
      }
      if (!allowed.some((status) => sameStatus(status, version.status))) {
        const fewer = STATUS_FIELDS.filter((field) => field !== 'observedGeneration' && (version.status?.[field] ?? 0) < (truth[field] ?? 0));
        throw new Error(
          `${label}: SidecarSet ${plan.name} was stored at resourceVersion ${version.resourceVersion} with status ${show(version.status)}, ` +
            `which no complete pod list gives (true: ${show(truth)})` +
            (fewer.length > 0 ? `; its ${fewer.join(', ')} count fewer pods than exist: a status written from a partial list` : ''),
        );
      }
      previous = version.status;
    }
  }
  tally.statusObservations += observations;
}

/** Every version stored so far is true (checkRecord), then the next resync converges (converge). */
async function recordTrueThenConverge(cluster: FaultCluster, recon: Reconciler, recorder: SetRecorder, label: string, tally: Tally): Promise<void> {
  await recorder.caughtUp();
  checkRecord(cluster, recorder, label, tally);
  await converge(cluster, recon, recorder, label, tally);
}

/** Every set's stored status must be its true status now. */
async function checkConverged(cluster: FaultCluster, label: string): Promise<void> {
  for (const plan of SET_PLANS) {
    const set = (await admin(cluster.cp, 'GET', `${SETS_PATH}/${plan.name}`)) as SidecarSet;
    const variant = { selector: { ...(set.spec?.selector?.matchLabels ?? {}) }, hash: set.metadata?.annotations?.['kruise.io/sidecarset-hash'] ?? '' };
    const truth = trueStatus(plan, variant, set.metadata?.generation ?? 0, cluster.pods);
    ensure(sameStatus(set.status, truth), label, `SidecarSet ${plan.name} is stored with ${show(set.status)}, not its true status ${show(truth)}`);
  }
}

/**
 * The first resync after the fault cleared must write the true status without
 * an error, and a further resync must write nothing (no stored version at all).
 */
async function converge(cluster: FaultCluster, recon: Reconciler, recorder: SetRecorder, label: string, tally: Tally): Promise<void> {
  const first = await recon.resync();
  tally.add(first);
  ensure(first.result.errors.length === 0, label, 'the first resync after the fault cleared reported errors', first.result);
  await checkConverged(cluster, `${label}, after the fault cleared`);
  tally.convergedAfterResyncs = Math.max(tally.convergedAfterResyncs, 1);
  await recorder.caughtUp();
  const stored = recorder.versions.length;
  const again = await recon.resync();
  tally.add(again);
  ensure(again.result.statusesWritten === 0 && again.result.errors.length === 0, label, 'a resync after convergence wrote or failed', again.result);
  await recorder.caughtUp();
  ensure(recorder.versions.length === stored, label, `a resync after convergence stored ${recorder.versions.length - stored} new SidecarSet versions`);
}

/** One repetition: data reset, every stored version recorded and checked, whatever `body` does. */
async function repetition(cluster: FaultCluster, label: string, tally: Tally, body: (recorder: SetRecorder) => Promise<void>): Promise<void> {
  await cluster.reset();
  const recorder = await recordSets(cluster.cp);
  try {
    await body(recorder);
    await recorder.caughtUp();
    checkRecord(cluster, recorder, label, tally);
  } finally {
    await recorder.stop();
  }
}

/** Stops the API server as a rolling restart does (SIGTERM); the record resumes once it is back. */
async function stopApiServer(cluster: FaultCluster, recorder: SetRecorder): Promise<void> {
  await recorder.pause();
  await cluster.cp.stopApiServer();
}

async function startApiServer(cluster: FaultCluster, recorder: SetRecorder): Promise<void> {
  await cluster.cp.startApiServer();
  await recorder.resume();
}

async function restartApiServer(cluster: FaultCluster, recorder: SetRecorder): Promise<void> {
  await stopApiServer(cluster, recorder);
  await startApiServer(cluster, recorder);
}

function pageCount(cluster: FaultCluster, pageSize: number): number {
  const pages = Math.ceil(cluster.pods.length / pageSize);
  if (pages < 3) throw new Error(`${cluster.pods.length} pods in pages of ${pageSize} make ${pages} pages: a fault between pages needs at least 3`);
  return pages;
}

/**
 * The page after which repetition `rep` faults: halfway first, then the pages after it in turn, never one of the
 * last three: the list reads one page ahead, so a fault after page k can first touch page k + 2, and a page must
 * still follow that one for the fault to land inside the list.
 */
function faultPage(pages: number, rep: number): number {
  return 1 + ((Math.floor(pages / 2) - 1 + rep) % Math.max(1, pages - 3));
}

function startTally(cluster: FaultCluster): Tally {
  const tally = new Tally();
  tally.expectedMatched = trueStatus(setPlan(WIDE_SET), setPlan(WIDE_SET), 1, cluster.pods).matchedPods ?? 0;
  return tally;
}

/** The API server's etcd revision moves on and is compacted: every continue token from before is now too old. */
async function expireContinueTokens(cluster: FaultCluster, tick: number): Promise<void> {
  // A compaction to the list's own revision would keep it readable; one write moves the revision past it.
  await cluster.cp.apply(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'faults-tick', namespace: 'default' }, data: { tick: String(tick) } }));
  await cluster.cp.compactEtcd();
}

function listErrors(result: ResyncResult): ResyncResult['errors'] {
  return result.errors.filter((error) => error.operation === 'list pods');
}

/**
 * (a) The pod list fails halfway: the API server is stopped after page k;
 * then, through a TCP proxy, the connection is reset while page k+1 is on
 * the wire. The resync must report the failed list and write no status.
 */
export async function podListFailsHalfway(cluster: FaultCluster, options: ScenarioOptions = {}): Promise<Figures> {
  const started = performance.now();
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const repetitions = options.repetitions ?? 1;
  const pages = pageCount(cluster, pageSize);
  const tally = startTally(cluster);
  const recon = reconciler(cluster.cp.kubeconfig('functions'), pageSize);
  const proxy = await startFaultProxy({ targetPort: Number(new URL(cluster.cp.url).port) });
  try {
    // A page the proxy forwards in several chunks, so that a reset can land inside it: a pod lists as about 3 KiB,
    // so 30 make ~90 KiB, over one socket read (64 KiB) and under the 128 KiB above which the API server gzips.
    const proxiedPageSize = 30;
    const proxiedPages = pageCount(cluster, proxiedPageSize);
    const proxied = reconciler(cluster.cp.kubeconfig('functions').replace(cluster.cp.url, `https://127.0.0.1:${proxy.port}`), proxiedPageSize);
    for (let rep = 0; rep < repetitions; rep++) {
      const k = faultPage(pages, rep);
      const stopped = `list fails halfway (API server stopped after page ${k} of ${pages}, run ${rep + 1})`;
      await repetition(cluster, stopped, tally, async (recorder) => {
        const run = await recon.resync({
          betweenPages: async (page, attempt) => {
            if (attempt === 1 && page === k) await stopApiServer(cluster, recorder);
          },
        });
        tally.add(run);
        await startApiServer(cluster, recorder);
        ensure(listErrors(run.result).length === 1 && run.result.statusesWritten === 0 && run.writer.patches === 0, stopped, 'expected one "list pods" error and no status write', run.result);
        // The list reads one page ahead (kube-paged-list.ts): page k+1 was asked for before the resync took page k, and may have been answered before the stop.
        ensure(run.pods.pagesRead >= k && run.pods.pagesRead <= k + 1 && run.pods.pagesRead < pages, stopped, `the resync read ${run.pods.pagesRead} pages, expected the ${k} before the stop (or the one read ahead)`);
        await recordTrueThenConverge(cluster, recon, recorder, stopped, tally);
      });

      const kr = faultPage(proxiedPages, rep);
      const reset = `list fails halfway (connection reset during page ${kr + 1} of ${proxiedPages}, run ${rep + 1})`;
      await repetition(cluster, reset, tally, async (recorder) => {
        let atPageEnd = proxy.counters().bytesFromTarget;
        const run = await proxied.resync({
          betweenPages: (page, attempt) => {
            const bytes = proxy.counters().bytesFromTarget;
            if (attempt === 1 && page === kr) resetDuringNextResponse(proxy, bytes - atPageEnd);
            atPageEnd = bytes;
            return Promise.resolve();
          },
        });
        tally.add(run);
        proxy.passThrough();
        const [error] = listErrors(run.result);
        ensure(error !== undefined && run.result.statusesWritten === 0 && run.writer.patches === 0, reset, 'expected one "list pods" error and no status write', run.result);
        // The reset is aimed at the next answer on the wire after page kr was taken. The list reads one page ahead
        // (kube-paged-list.ts), so that answer is page kr + 1 or, when it had already arrived, kr + 2; and on a
        // kept-alive connection the reset can land just after it (the next request then meets it). Any of these
        // is a list failed halfway, and nothing may be written.
        ensure(run.pods.pagesRead >= kr && run.pods.pagesRead <= kr + 2 && run.pods.pagesRead < proxiedPages, reset, `the resync read ${run.pods.pagesRead} pages, expected the ${kr} before the reset (or up to two more: one read ahead, one at the reset)`, run.result);
        tally.bump('connectionResets', proxy.counters().resets);
        // fetch() fails while it waits for the status line; a reset after it fails reading the body.
        tally.bump(error?.message.includes('fetch failed') === true ? 'resetsBeforeResponse' : 'resetsInsideResponse');
        await recordTrueThenConverge(cluster, proxied, recorder, reset, tally);
      });
    }
  } finally {
    await proxy.close();
  }
  return tally.figures('pod list fails halfway', repetitions, started);
}

/**
 * Resets every connection once about half of the next page's bytes have come
 * through (a page costs about `pageBytes`, measured on the page before), and
 * slows the proxy so that they come through in several chunks: the reset
 * then lands inside the response, after its status line.
 */
function resetDuringNextResponse(proxy: FaultProxy, pageBytes: number): void {
  const before = proxy.counters().bytesFromTarget;
  const threshold = before + Math.max(4096, Math.floor(pageBytes / 2));
  proxy.slow({ perChunkMs: 100 });
  const deadline = Date.now() + 30_000;
  // Not awaited: the resync asks for the next page while this watches its bytes.
  void (async () => {
    while (proxy.counters().bytesFromTarget < threshold && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
    proxy.reset();
  })();
}

/**
 * (b) The continue token expires mid-list (etcd compacted between two pages,
 * lists read from etcd): the resync starts the list again and writes complete,
 * true statuses; when it expires on every attempt, the resync gives up and
 * writes nothing.
 */
export async function continueTokenExpires(cluster: FaultCluster, options: ScenarioOptions = {}): Promise<Figures> {
  const started = performance.now();
  if (!cluster.listsFromEtcd) throw new Error('continue tokens expire on compaction only when lists are read from etcd: start the cluster with listsFromEtcd');
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const repetitions = options.repetitions ?? 1;
  const pages = pageCount(cluster, pageSize);
  const tally = startTally(cluster);
  const recon = reconciler(cluster.cp.kubeconfig('functions'), pageSize);
  let tick = 0;
  for (let rep = 0; rep < repetitions; rep++) {
    const k = faultPage(pages, rep);
    const once = `continue token expires once (after page ${k} of ${pages}, run ${rep + 1})`;
    await repetition(cluster, once, tally, async (recorder) => {
      const run = await recon.resync({
        betweenPages: async (page, attempt) => {
          if (attempt === 1 && page === k) await expireContinueTokens(cluster, ++tick);
        },
      });
      tally.add(run);
      ensure(run.result.podListAttempts === 2, once, 'the list did not start over once (did the compaction expire the token?)', run.result);
      ensure(run.result.errors.length === 0 && run.result.statusesWritten === SET_PLANS.length, once, `expected every status written (${SET_PLANS.length}) from the second, complete list`, run.result);
      ensure(run.result.podsSeen === cluster.pods.length, once, `the resync counted ${run.result.podsSeen} pods, not the ${cluster.pods.length} that exist`, run.result);
      await checkConverged(cluster, once);
      await recorder.caughtUp();
      const stored = recorder.versions.length;
      const again = await recon.resync();
      tally.add(again);
      ensure(again.result.statusesWritten === 0 && again.result.errors.length === 0, once, 'a resync after the restarted list wrote or failed', again.result);
      await recorder.caughtUp();
      ensure(recorder.versions.length === stored, once, 'a resync after the restarted list stored new versions');
    });

    const always = `continue token expires on every attempt (after page ${k} of ${pages}, run ${rep + 1})`;
    await repetition(cluster, always, tally, async (recorder) => {
      const run = await recon.resync({
        betweenPages: async (page) => {
          if (page === k) await expireContinueTokens(cluster, ++tick);
        },
      });
      tally.add(run);
      const [error] = listErrors(run.result);
      ensure(run.result.podListAttempts === 3 && error?.message.includes('expired 3 times in a row') === true, always, 'expected the resync to give up after 3 expired lists', run.result);
      ensure(run.result.statusesWritten === 0 && run.writer.patches === 0, always, 'a status was written although no list completed', run.result);
      await recordTrueThenConverge(cluster, recon, recorder, always, tally);
    });
  }
  return tally.figures('continue token expires', repetitions, started);
}

/** Changes a set as the admin (a merge patch on the set, not its status): a new resourceVersion. */
async function touchSet(cluster: FaultCluster, name: string, patch: Record<string, unknown>): Promise<void> {
  await admin(cluster.cp, 'PATCH', `${SETS_PATH}/${name}`, patch, 'application/merge-patch+json');
}

/**
 * (c) Conflicts: a set changed between the resync's read and its status write
 * gets a real 409. A label change or a new hash: the resync reads the set
 * again and writes the counts for its new version. A selector change during
 * the list: that set is not written this resync, the next resync writes it. A
 * set that changes before every write: the resync gives up on it after
 * maxWriteAttempts and says so.
 */
export async function writeConflicts(cluster: FaultCluster, options: ScenarioOptions = {}): Promise<Figures> {
  const started = performance.now();
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const repetitions = options.repetitions ?? 1;
  const pages = pageCount(cluster, pageSize);
  const tally = startTally(cluster);
  const recon = reconciler(cluster.cp.kubeconfig('functions'), pageSize);
  let touch = 0;
  for (let rep = 0; rep < repetitions; rep++) {
    const target = SET_PLANS[rep % SET_PLANS.length]?.name ?? WIDE_SET;
    const labelled = `conflict: ${target} labelled before its status write (run ${rep + 1})`;
    await repetition(cluster, labelled, tally, async (recorder) => {
      let done = false;
      const run = await recon.resync({
        beforePatch: async (name) => {
          if (name !== target || done) return;
          done = true;
          await touchSet(cluster, name, { metadata: { labels: { 'faults.test/touched': String(++touch) } } });
        },
      });
      tally.add(run);
      ensure(run.writer.conflicts === 1, labelled, `expected exactly one 409, got ${run.writer.conflicts}`, run.result);
      ensure(run.result.errors.length === 0 && run.result.statusesWritten === SET_PLANS.length, labelled, 'expected every status written after the re-read', run.result);
      await checkConverged(cluster, labelled);
      await recordTrueThenConverge(cluster, recon, recorder, labelled, tally);
    });

    const rehashed = `conflict: ${WIDE_SET} gets a new hash before its status write (run ${rep + 1})`;
    await repetition(cluster, rehashed, tally, async (recorder) => {
      let done = false;
      const run = await recon.resync({
        beforePatch: async (name) => {
          if (name !== WIDE_SET || done) return;
          done = true;
          await touchSet(cluster, name, { metadata: { annotations: { 'kruise.io/sidecarset-hash': OLD_LOG_HASH } } });
        },
      });
      tally.add(run);
      ensure(run.writer.conflicts === 1 && run.result.errors.length === 0 && run.result.statusesWritten === SET_PLANS.length, rehashed, 'expected one 409, then every status written', run.result);
      // updatedPods now counts the pods on the old hash: the counts were reused for the new version.
      await checkConverged(cluster, rehashed);
      await recordTrueThenConverge(cluster, recon, recorder, rehashed, tally);
    });

    const k = faultPage(pages, rep);
    const reselected = `conflict: ${WIDE_SET}'s selector changes after page ${k} of ${pages} (run ${rep + 1})`;
    await repetition(cluster, reselected, tally, async (recorder) => {
      const run = await recon.resync({
        betweenPages: async (page, attempt) => {
          if (attempt === 1 && page === k) {
            await admin(cluster.cp, 'PATCH', `${SETS_PATH}/${WIDE_SET}`, [{ op: 'replace', path: '/spec/selector', value: { matchLabels: CANARY_SELECTOR } }], 'application/json-patch+json');
          }
        },
      });
      tally.add(run);
      const [error] = run.result.errors;
      ensure(
        run.result.errors.length === 1 && error?.sidecarSet === WIDE_SET && error.message.includes('changed which pods it selects'),
        reselected,
        `expected one error: ${WIDE_SET} not written because its selector changed`,
        run.result,
      );
      ensure(run.result.statusesWritten === SET_PLANS.length - 1, reselected, `expected the other ${SET_PLANS.length - 1} statuses written`, run.result);
      await recorder.caughtUp();
      checkRecord(cluster, recorder, reselected, tally);
      const latest = recorder.versions.filter((v) => v.name === WIDE_SET).at(-1);
      ensure(sameStatus(latest?.status, setPlan(WIDE_SET).resetStatus), reselected, `${WIDE_SET}'s status changed in the resync that saw its selector change: ${show(latest?.status)}`);
      await converge(cluster, recon, recorder, reselected, tally);
    });

    const restless = `conflict: ${target} changes before every status write (run ${rep + 1})`;
    await repetition(cluster, restless, tally, async (recorder) => {
      const run = await recon.resync({
        beforePatch: async (name) => {
          if (name === target) await touchSet(cluster, name, { metadata: { labels: { 'faults.test/touched': String(++touch) } } });
        },
      });
      tally.add(run);
      const [error] = run.result.errors;
      ensure(run.result.errors.length === 1 && error?.sidecarSet === target && error.message.includes('kept changing'), restless, `expected one error: ${target} kept changing`, run.result);
      ensure(run.writer.conflicts === 4 && run.result.statusesWritten === SET_PLANS.length - 1, restless, `expected 4 conflicts on ${target} and the other statuses written`, run.result);
      await recordTrueThenConverge(cluster, recon, recorder, restless, tally);
    });
  }
  return tally.figures('write conflicts', repetitions, started);
}

/**
 * (d) The API server restarts mid-resync: between two pages (the resync waits;
 * its list continues on the new server or starts over), in the background
 * while the list runs (whatever fails is reported), stopped between two
 * status writes (the rest fail and are reported), restarted between two
 * writes (the rest are written). Never a partial status; the next resync
 * converges.
 */
export async function apiServerRestarts(cluster: FaultCluster, options: ScenarioOptions = {}): Promise<Figures> {
  const started = performance.now();
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const repetitions = options.repetitions ?? 1;
  const pages = pageCount(cluster, pageSize);
  const tally = startTally(cluster);
  const recon = reconciler(cluster.cp.kubeconfig('functions'), pageSize);
  for (let rep = 0; rep < repetitions; rep++) {
    const k = faultPage(pages, rep);
    const betweenPages = `API server restarts between pages ${k} and ${k + 1} of ${pages} (run ${rep + 1})`;
    await repetition(cluster, betweenPages, tally, async (recorder) => {
      const run = await recon.resync({
        betweenPages: async (page, attempt) => {
          if (attempt === 1 && page === k) await restartApiServer(cluster, recorder);
        },
      });
      tally.add(run);
      if (run.result.errors.length === 0) {
        ensure(run.result.statusesWritten === SET_PLANS.length && run.result.podsSeen === cluster.pods.length, betweenPages, 'the resync went on without an error, so every status must be written from every pod', run.result);
        await checkConverged(cluster, betweenPages);
        tally.bump('listSurvivedRestart');
      } else {
        ensure(listErrors(run.result).length === 1 && run.writer.patches === 0, betweenPages, 'a resync whose list failed must write nothing', run.result);
        tally.bump('listFailedAtRestart');
      }
      await recordTrueThenConverge(cluster, recon, recorder, betweenPages, tally);
    });

    const background = `API server restarts in the background from page ${k} of ${pages} (run ${rep + 1})`;
    await repetition(cluster, background, tally, async (recorder) => {
      let restarting: Promise<void> | undefined;
      const run = await recon.resync({
        betweenPages: (page, attempt) => {
          if (attempt === 1 && page === k) restarting = restartApiServer(cluster, recorder);
          return Promise.resolve();
        },
      });
      tally.add(run);
      await restarting;
      const written = run.result.statusesWritten;
      ensure(listErrors(run.result).length === 0 || written === 0, background, 'a resync whose list failed wrote statuses', run.result);
      tally.bump(run.result.errors.length === 0 ? 'resyncSurvivedBackgroundRestart' : 'resyncFailedAtBackgroundRestart');
      await recordTrueThenConverge(cluster, recon, recorder, background, tally);
    });

    for (const outage of ['stops', 'restarts'] as const) {
      await apiServerOutageBetweenWrites(cluster, recon, tally, outage, 1 + (rep % (SET_PLANS.length - 1)), rep);
    }
  }
  return tally.figures('API server restarts mid-resync', repetitions, started);
}

/**
 * One status write of (d): the API server stops, or restarts, after status
 * write `w` of a resync that writes one at a time. Stopped, the rest of the
 * writes fail and are reported; restarted, the rest are written. Either way
 * the resync writes nothing partial and the next resync converges.
 */
async function apiServerOutageBetweenWrites(cluster: FaultCluster, recon: Reconciler, tally: Tally, outage: 'stops' | 'restarts', w: number, rep: number): Promise<void> {
  const writes = SET_PLANS.length;
  const label = `API server ${outage} after status write ${w} of ${writes} (run ${rep + 1})`;
  // One at a time, so that "between two writes" is a point in time.
  const serialWrites: ResyncOptions = { writeConcurrency: 1 };
  await repetition(cluster, label, tally, async (recorder) => {
    const run = await recon.resync(
      {
        afterPatch: async (_name, call) => {
          if (call !== w) return;
          if (outage === 'stops') await stopApiServer(cluster, recorder);
          else await restartApiServer(cluster, recorder);
        },
      },
      serialWrites,
    );
    tally.add(run);
    if (outage === 'stops') {
      await startApiServer(cluster, recorder);
      const patchErrors = run.result.errors.filter((error) => error.operation === 'patch status');
      ensure(run.result.statusesWritten === w && patchErrors.length === writes - w, label, `expected ${w} statuses written and ${writes - w} write errors`, run.result);
    } else {
      ensure(run.result.errors.length === 0 && run.result.statusesWritten === writes, label, 'expected every status written, on both sides of the restart', run.result);
      await checkConverged(cluster, label);
    }
    await recordTrueThenConverge(cluster, recon, recorder, label, tally);
  });
}

/**
 * The checks can fail: a resync over a pod list cut short after page k (an
 * adapter that lost the continue token) writes statuses from part of the
 * pods, and the record check must say so.
 * @throws Error when the check let the partial statuses through.
 */
export async function partialStatusIsCaught(cluster: FaultCluster, options: ScenarioOptions = {}): Promise<Figures> {
  const started = performance.now();
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const pages = pageCount(cluster, pageSize);
  const k = faultPage(pages, 0);
  const label = `a pod list cut short after page ${k} of ${pages}`;
  const tally = startTally(cluster);
  await cluster.reset();
  const recorder = await recordSets(cluster.cp);
  let caught = '';
  try {
    const run = await reconciler(cluster.cp.kubeconfig('functions'), pageSize).resync({ cutShortAfter: k });
    tally.add(run);
    await recorder.caughtUp();
    checkRecord(cluster, recorder, label, tally);
  } catch (error) {
    caught = error instanceof Error ? error.message : String(error);
  } finally {
    await recorder.stop();
  }
  ensure(caught.includes('a status written from a partial list'), label, `the record check did not catch the statuses written from part of the pods${caught === '' ? '' : ` (it failed otherwise: ${caught})`}`);
  return { ...tally.figures('partial status is caught', 1, started), caught };
}
