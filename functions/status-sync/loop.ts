/**
 * The reconciler as a loop, for `npm start`: a resync at once, then one every
 * `intervalMs` after the previous one ended, so resyncs never overlap. Resyncs
 * that change nothing are not logged, except as a heartbeat (resync-log.ts).
 */
import type { AdmittedSidecarSet, Logger } from '../../lib/ports.ts';
import { admittedQueue, type AdmittedQueue } from '../../lib/status-sync/admitted-queue.ts';
import type { ControllerSummary } from '../../lib/status-sync/run-controller.ts';
import { resyncLog, type ResyncLog } from '../../lib/status-sync/resync-log.ts';
import type { ResyncResult } from '../../lib/status-sync/resync.ts';
import { controllerDidAnything, logControllerSummary, logResync } from './compose.ts';

export interface StatusLoopOptions {
  resync: (signal: AbortSignal) => Promise<ResyncResult>;
  /** Runs the controller on in-flight rollouts and admitted changes after a resync (compose.ts); absent, resyncs only. */
  runController?: (names: readonly string[], signal: AbortSignal, queue: AdmittedQueue, budget?: AbortSignal) => Promise<ControllerSummary>;
  intervalMs: number;
  logger: Logger;
  /** Longest time without a log line while resyncs change nothing (default 5 minutes; 0 logs every resync). */
  heartbeatMs?: number;
  /** A resync running longer is stopped (it writes nothing more). Default 2 minutes. */
  resyncTimeoutMs?: number;
  /** Told after every resync (tests wait on it). */
  onResync?: (result: ResyncResult) => void;
}

export interface StatusLoop {
  /** Stops the loop, cutting a running resync or reconcile short, and waits for it. */
  stop(): Promise<void>;
  /**
   * A SidecarSet change the webhooks admitted: its reconcile runs at once (or, when
   * a resync or requeue is running, as soon as that one looks at its queue).
   */
  admitted(change: AdmittedSidecarSet): void;
}


export function startStatusLoop(options: StatusLoopOptions): StatusLoop {
  const loop = new StatusLoopRunner(options);
  loop.tick();
  return { admitted: (change) => { loop.admitted(change); }, stop: () => loop.stop() };
}

class StatusLoopRunner {
  private readonly options: StatusLoopOptions;
  private readonly stopping = new AbortController();
  private readonly resyncTimeoutMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly log: ResyncLog;
  private readonly queue = admittedQueue();
  // Set when the loop runs only for admitted changes, so the resync keeps its interval.
  private nextResyncAt = 0;
  private failed = false;

  constructor(options: StatusLoopOptions) {
    this.options = options;
    this.resyncTimeoutMs = options.resyncTimeoutMs ?? 120_000;
    this.log = resyncLog(options.heartbeatMs);
  }

  admitted(change: AdmittedSidecarSet): void {
    this.queue.push(change);
    // Idle until the next resync: run the admitted change's reconcile now.
    if (this.running === undefined && this.timer !== undefined && !this.stopping.signal.aborted) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => { this.tick(); }, 0);
    }
  }

  async stop(): Promise<void> {
    this.stopping.abort(new Error('the status loop is stopping'));
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
  }

  tick(): void {
    this.timer = undefined;
    this.running = this.turn()
      .catch((error: unknown) => {
        // resync never throws; a throwing onResync or logger must not end the loop.
        this.failed = true;
        this.options.logger.error('resync failed', { error: error instanceof Error ? error.message : String(error) });
      })
      .finally(() => {
        this.running = undefined;
        if (this.stopping.signal.aborted) return;
        // A change admitted while the loop was busy and not taken yet runs at once, unless this tick failed: then
        // it waits a second rather than fail again in a tight loop.
        const again = this.queue.size() > 0 ? (this.failed ? 1_000 : 0) : Math.max(0, this.nextResyncAt - performance.now());
        this.failed = false;
        this.timer = setTimeout(() => { this.tick(); }, again);
      });
  }

  /** A resync when one is due, then requeuing what it left in flight; otherwise only the admitted changes. */
  private async turn(): Promise<void> {
    if (performance.now() < this.nextResyncAt) {
      await this.requeueInFlight([]);
      return;
    }
    const result = await this.options.resync(AbortSignal.any([this.stopping.signal, AbortSignal.timeout(this.resyncTimeoutMs)]));
    this.nextResyncAt = performance.now() + this.options.intervalMs;
    const logged = this.log.decide(result);
    if (logged !== undefined) logResync(this.options.logger, result, { logged: logged.reason, quietResyncs: logged.quietResyncs });
    this.options.onResync?.(result);
    await this.requeueInFlight(result.rollout?.inFlight ?? []);
  }

  private async requeueInFlight(names: readonly string[]): Promise<void> {
    const { runController } = this.options;
    if (runController === undefined || (names.length === 0 && this.queue.size() === 0)) return;
    // The controller stops when the next resync is due, so the schedule of resyncs (and the secret rotation they carry) keeps its period.
    // Whole milliseconds: AbortSignal.timeout refuses a fraction (performance.now() has them).
    const budgetMs = Math.ceil(Math.max(1_000, Math.min(this.resyncTimeoutMs, this.nextResyncAt - performance.now())));
    // The budget stops the controller at a resync boundary; a resync running then finishes its writes within its own
    // deadline (a resync cut mid-batch would report its revision and pod writes as failed).
    const summary = await runController(names, AbortSignal.any([this.stopping.signal, AbortSignal.timeout(budgetMs + this.resyncTimeoutMs)]), this.queue, AbortSignal.timeout(budgetMs));
    if (controllerDidAnything(summary)) logControllerSummary(this.options.logger, summary);
  }
}
