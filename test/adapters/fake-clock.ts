/** A cache clock for tests: time moves only when the test says so. */
import type { CacheClock } from '../../lib/adapters/cached-list.ts';

/** A clock that moves only when told to, firing due timers as it passes them. */
export function fakeClock() {
  let now = 0;
  const timers = new Set<{ at: number; fire: () => void }>();
  const clock: CacheClock = {
    nowMs: () => now,
    setTimer(ms, fire) {
      const timer = { at: now + ms, fire };
      timers.add(timer);
      return () => {
        timers.delete(timer);
      };
    },
  };
  return {
    clock,
    /** Moves time on, fires what fell due, and lets the promise callbacks run. */
    async advance(ms: number) {
      now += ms;
      for (const timer of [...timers].sort((a, b) => a.at - b.at)) {
        if (timer.at <= now) {
          timers.delete(timer);
          timer.fire();
        }
      }
      await settle();
    },
    pendingTimers: () => timers.size,
  };
}

/** Lets every queued promise callback run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

