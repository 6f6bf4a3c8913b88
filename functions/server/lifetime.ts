/**
 * How `npm start` ends: however its parent goes away, the server stops
 * cleanly and removes what it started (the embedded cluster's etcd and
 * kube-apiserver, the kubeconfig that points at them).
 *
 * - SIGINT, SIGTERM and SIGHUP stop it gracefully. `npm start` runs the
 *   server with `exec` (package.json), so npm's forwarding of SIGINT and
 *   SIGTERM reaches this process rather than a `sh -c` that ignores them.
 * - npm does not forward SIGHUP and cannot forward SIGKILL: when it dies, this
 *   process is re-parented. Node has no PR_SET_PDEATHSIG, so the parent pid is
 *   polled every second and a change stops the server the same way.
 * - Any exit (a second signal, an uncaught error, process.exit) runs the
 *   synchronous cleanup; the control plane harness kills its processes on
 *   exit too, and its watchdog does so even when this process is SIGKILLed.
 * - Ctrl-C in a terminal signals the whole process group, so SIGINT arrives
 *   from the terminal and again from npm: a repeated signal within a second
 *   of the first is the same request. A later one exits at once.
 */
import type { Logger } from '../../lib/ports.ts';

export interface LifetimeOptions {
  /** Stops everything gracefully. */
  stop: () => Promise<void>;
  /** Removes files left for the user (synchronous: it also runs on exit). */
  cleanupSync?: () => void;
  logger: Logger;
  /** How often the parent pid is checked (default 1000 ms). */
  parentPollMs?: number;
  /** A graceful stop taking longer exits anyway (default 30 s). */
  stopTimeoutMs?: number;
}

export const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Signals within this long of the first are duplicates of it (terminal and npm both deliver Ctrl-C). */
const DUPLICATE_SIGNAL_MS = 1000;

/** Installs the handlers; call once, as early as possible (a signal during the boot stops it too). */
export function watchLifetime(options: LifetimeOptions): void {
  const parentPid = process.ppid;
  let closingSince: number | undefined;
  const cleanup = () => {
    try {
      options.cleanupSync?.();
    } catch {
      // Exiting anyway; the files are only the user's convenience.
    }
  };
  process.on('exit', cleanup);

  const shutdown = (reason: string) => {
    if (closingSince !== undefined) {
      if (performance.now() - closingSince < DUPLICATE_SIGNAL_MS) return;
      options.logger.warn('stopping at once', { reason });
      process.exit(1);
    }
    closingSince = performance.now();
    clearInterval(parentWatch);
    // Whoever read our output may be gone (a closed terminal, a killed pipe
    // reader): a failed write must not turn the shutdown into a crash.
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
    options.logger.info('shutting down', { reason });
    const deadline = setTimeout(() => {
      options.logger.error('shutdown took too long; exiting', { timeoutMs: options.stopTimeoutMs ?? 30_000 });
      process.exit(1);
    }, options.stopTimeoutMs ?? 30_000);
    deadline.unref();
    options.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        options.logger.error('shutdown failed', { error: error instanceof Error ? error.message : String(error) });
        process.exit(1);
      },
    );
  };

  for (const signal of SHUTDOWN_SIGNALS) {
    process.on(signal, () => {
      shutdown(signal);
    });
  }
  const parentWatch = setInterval(() => {
    if (process.ppid !== parentPid) shutdown(`the parent process ${parentPid} exited`);
  }, options.parentPollMs ?? 1000);
  parentWatch.unref();
}
