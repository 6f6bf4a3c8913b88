import { describe, expect, it } from '@jest/globals';
import { checkRefusals } from '../../testkit/reliability/refusals.ts';

describe('refusals through the Lambda handler and the HTTPS server', () => {
  it('give every stranger and broken caller its documented status and a short answer that leaks nothing', async () => {
    const rows = await checkRefusals(2);
    expect(rows.map((row) => row.status)).toEqual([404, 404, 404, 404, 404, 405, 415, 413, 400, 400]);
    for (const row of rows) {
      const answer = JSON.parse(String(row.answer));
      expect(Object.keys(answer)).toEqual(['message']);
      expect(answer.message.length).toBeLessThan(200);
    }
  }, 60_000);
});
