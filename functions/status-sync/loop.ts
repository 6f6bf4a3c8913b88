/**
 * The reconciler as a loop, for `npm start`: a pass at once, then one every
 * `intervalMs` after the previous one ended, so passes never overlap. Passes
 * that change nothing are not logged, except as a heartbeat (pass-log.ts).
 */
import type { Logger } from '../../lib/ports.ts';
import { passLog } from '../../lib/status-sync/pass-log.ts';
import type { PassResult } from '../../lib/status-sync/pass.ts';
import { logPass } from './compose.ts';

export interface StatusLoopOptions {
  runPass: (signal: AbortSignal) => Promise<PassResult>;
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
}

export function startStatusLoop(options: StatusLoopOptions): StatusLoop {
  const stopping = new AbortController();
  const passTimeoutMs = options.passTimeoutMs ?? 120_000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const log = passLog(options.heartbeatMs);

  const tick = (): void => {
    timer = undefined;
    running = (async () => {
      const result = await options.runPass(AbortSignal.any([stopping.signal, AbortSignal.timeout(passTimeoutMs)]));
      const logged = log.decide(result);
      if (logged !== undefined) logPass(options.logger, result, { logged: logged.reason, quietPasses: logged.quietPasses });
      options.onPass?.(result);
    })()
      .catch((error: unknown) => {
        // runPass never throws; a throwing onPass or logger must not end the loop.
        options.logger.error('status pass failed', { error: error instanceof Error ? error.message : String(error) });
      })
      .finally(() => {
        running = undefined;
        if (!stopping.signal.aborted) timer = setTimeout(tick, options.intervalMs);
      });
  };
  tick();

  return {
    async stop() {
      stopping.abort(new Error('the status loop is stopping'));
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
}
