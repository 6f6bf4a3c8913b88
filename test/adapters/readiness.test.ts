import { describe, expect, it } from '@jest/globals';
import { memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { cachedReadiness, READINESS_MAX_CHECK_MS, READINESS_TTL_MS, sidecarSetReadiness } from '../../lib/adapters/readiness.ts';
import type { SidecarSetSource } from '../../lib/ports.ts';
import { capturingLogger } from '../../testkit/reviews.ts';
import { fakeClock, settle } from './fake-clock.ts';

/** A SidecarSet source that counts its lists, each failing while `down` says so. */
function countingSource(state: { down: string | undefined }) {
  const inner = memorySidecarSetSource([]);
  let lists = 0;
  const source: SidecarSetSource = {
    list: async (signal) => {
      lists++;
      if (state.down !== undefined) throw new Error(state.down);
      return inner.list(signal);
    },
  };
  return { source, lists: () => lists };
}

describe('sidecarSetReadiness', () => {
  const server = 'https://10.0.0.1:6443';

  it('lists once for a flood of probes within its lifetime, then once more', async () => {
    const time = fakeClock();
    const state = { down: undefined as string | undefined };
    const counted = countingSource(state);
    const probe = sidecarSetReadiness(counted.source, server, capturingLogger().logger, { clock: time.clock });
    const answers = await Promise.all(Array.from({ length: 1000 }, () => probe()));
    expect(new Set(answers.map((a) => a.ready))).toEqual(new Set([true]));
    for (let i = 0; i < 100; i++) await probe();
    expect(counted.lists()).toBe(1);
    await time.advance(READINESS_TTL_MS);
    await Promise.all(Array.from({ length: 100 }, () => probe()));
    expect(counted.lists()).toBe(2);
  });

  it('caches not ready too: an API server that is down is not asked once per probe', async () => {
    const time = fakeClock();
    const state = { down: 'connect ECONNREFUSED 10.0.0.1:6443' as string | undefined };
    const counted = countingSource(state);
    const probe = sidecarSetReadiness(counted.source, server, capturingLogger().logger, { clock: time.clock });
    const answers = await Promise.all(Array.from({ length: 500 }, () => probe()));
    expect(new Set(answers.map((a) => a.ready))).toEqual(new Set([false]));
    expect(counted.lists()).toBe(1);
  });

  it('logs why, with the API server, once per change of state rather than per probe', async () => {
    const time = fakeClock();
    const state = { down: 'connect ECONNREFUSED 10.0.0.1:6443' as string | undefined };
    const captured = capturingLogger();
    const probe = sidecarSetReadiness(countingSource(state).source, server, captured.logger, { clock: time.clock });
    for (let step = 0; step < 3; step++) {
      for (let i = 0; i < 10; i++) await probe();
      await time.advance(READINESS_TTL_MS);
    }
    state.down = undefined;
    for (let step = 0; step < 3; step++) {
      for (let i = 0; i < 10; i++) await probe();
      await time.advance(READINESS_TTL_MS);
    }
    expect(captured.entries().map((e) => [e.level, e.message, e.reason])).toEqual([
      ['warn', 'not ready', `cannot list SidecarSets from ${server}: connect ECONNREFUSED 10.0.0.1:6443`],
      ['info', 'ready', `SidecarSets readable from ${server}`],
    ]);
  });
});

describe('cachedReadiness', () => {
  it('counts a check that hangs as not ready after its bound, and one probe waits for one check', async () => {
    const time = fakeClock();
    let checks = 0;
    const probe = cachedReadiness({
      clock: time.clock,
      logger: capturingLogger().logger,
      check: (signal) => {
        checks++;
        return new Promise<string>((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            reject(signal.reason as Error);
          });
        });
      },
    });
    const pending = Promise.all([probe(), probe(), probe()]);
    await settle();
    await time.advance(READINESS_MAX_CHECK_MS);
    const answers = await pending;
    expect(answers.map((a) => a.ready)).toEqual([false, false, false]);
    expect(answers[0].message).toMatch(new RegExp(`did not answer within ${READINESS_MAX_CHECK_MS} ms`));
    expect(checks).toBe(1);
  });
});
