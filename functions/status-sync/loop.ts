/**
 * The reconciler as a loop, for `npm start`: a pass at once, then one every
 * `intervalMs` after the previous one ended, so passes never overlap. Passes
 * that change nothing are not logged, except as a heartbeat (pass-log.ts).
 */
import type { AdmittedSidecarSet, Logger } from '../../lib/ports.ts';
import { admittedQueue, type AdmittedQueue } from '../../lib/status-sync/admitted-queue.ts';
import type { PaceSummary } from '../../lib/status-sync/pace.ts';
import { passLog } from '../../lib/status-sync/pass-log.ts';
import type { PassResult } from '../../lib/status-sync/pass.ts';
import { followWasNews, logFollow, logPass } from './compose.ts';

export interface StatusLoopOptions {
  runPass: (signal: AbortSignal) => Promise<PassResult>;
  /** Follows in-flight rollouts and admitted changes after a pass (compose.ts); absent, passes only. */
  follow?: (names: readonly string[], signal: AbortSignal, queue: AdmittedQueue, budget?: AbortSignal) => Promise<PaceSummary>;
  intervalMs: number;
  logger: Logger;
  /** Longest time without a log line while passes change nothing (default 5 minutes; 0 logs every pass). */
  heartbeatMs?: number;
  /** A pass running longer is stopped (it writes nothing more). Default 2 minutes. */
  passTimeoutMs?: number;
  /** Told after every pass (tests wait on it). */
  onPass?: (result: PassResult) => void;
}

export interface StatusLoop {
  /** Stops the loop, cutting a running pass short, and waits for it. */
  stop(): Promise<void>;
  /**
   * A SidecarSet change the webhooks admitted: its pass runs at once (or, when
   * a pass or follow-up is running, as soon as that one looks at its queue).
   */
  admitted(change: AdmittedSidecarSet): void;
}


export function startStatusLoop(options: StatusLoopOptions): StatusLoop {
  const stopping = new AbortController();
  const passTimeoutMs = options.passTimeoutMs ?? 120_000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const log = passLog(options.heartbeatMs);

  const queue = admittedQueue();
  // Set when the loop runs only for admitted changes, so the full pass keeps its interval.
  let nextFullPassAt = 0;
  let failed = false;

  const follow = async (names: readonly string[]) => {
    if (options.follow === undefined || (names.length === 0 && queue.size() === 0)) return;
    // Following ends when the next full pass is due, so the schedule of full passes (and the secret rotation they carry) keeps its pace.
    // Whole milliseconds: AbortSignal.timeout refuses a fraction (performance.now() has them).
    const budgetMs = Math.ceil(Math.max(1_000, Math.min(passTimeoutMs, nextFullPassAt - performance.now())));
    // The budget ends following at a pass boundary; a pass running then finishes its writes within its own
    // deadline (a pass cut mid-round would report its revision and pod writes as failed).
    const summary = await options.follow(names, AbortSignal.any([stopping.signal, AbortSignal.timeout(budgetMs + passTimeoutMs)]), queue, AbortSignal.timeout(budgetMs));
    if (followWasNews(summary)) logFollow(options.logger, summary);
  };

  const tick = (): void => {
    timer = undefined;
    running = (async () => {
      if (performance.now() < nextFullPassAt) {
        await follow([]);
        return;
      }
      const result = await options.runPass(AbortSignal.any([stopping.signal, AbortSignal.timeout(passTimeoutMs)]));
      nextFullPassAt = performance.now() + options.intervalMs;
      const logged = log.decide(result);
      if (logged !== undefined) logPass(options.logger, result, { logged: logged.reason, quietPasses: logged.quietPasses });
      options.onPass?.(result);
      await follow(result.rollout?.inFlight ?? []);
    })()
      .catch((error: unknown) => {
        // runPass never throws; a throwing onPass or logger must not end the loop.
        failed = true;
        options.logger.error('status pass failed', { error: error instanceof Error ? error.message : String(error) });
      })
      .finally(() => {
        running = undefined;
        if (stopping.signal.aborted) return;
        // A change admitted while the loop was busy and not taken yet runs at once, unless this tick failed: then
        // it waits a second rather than fail again in a tight loop.
        const again = queue.size() > 0 ? (failed ? 1_000 : 0) : Math.max(0, nextFullPassAt - performance.now());
        failed = false;
        timer = setTimeout(tick, again);
      });
  };
  tick();

  return {
    admitted(change) {
      queue.push(change);
      // Idle until the next full pass: run the admitted change's pass now.
      if (running === undefined && timer !== undefined && !stopping.signal.aborted) {
        clearTimeout(timer);
        timer = setTimeout(tick, 0);
      }
    },
    async stop() {
      stopping.abort(new Error('the status loop is stopping'));
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
}
