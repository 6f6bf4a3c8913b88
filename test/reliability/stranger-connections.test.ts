import { describe, expect, it } from '@jest/globals';
import { QUICK_TIMEOUTS, strangerConnections } from '../../testkit/reliability/stranger-connections.ts';

describe('connections before authentication, against the local server over TLS', () => {
  it('closes every stranger\'s at once and cuts off every slow client (short timeouts), holding none afterwards', async () => {
    const rows = await strangerConnections({ strangers: 200, slowClients: 5, timeouts: QUICK_TIMEOUTS });
    expect(rows.map((r) => [r.connections, r.closed, r.openOnServerAfter])).toEqual([
      [200, 200, 0],
      [5, 5, 0],
      [5, 5, 0],
      [5, 5, 0],
      [5, 5, 0],
    ]);
  }, 60_000);
});
