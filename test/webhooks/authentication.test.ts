/**
 * Authenticating the caller: the source address first (without re-reading the
 * secrets), then the secret in the path or a Bearer token.
 */
import { describe, expect, it } from '@jest/globals';
import { parseCallerNetworks } from '../../lib/auth/caller-network.ts';
import { callerAllowed, type CallerAuthConfig } from '../../lib/webhooks/authentication.ts';
import { PREVIOUS_SECRET, SECRET, STRANGER_SECRET } from '../../testkit/reviews.ts';

const secrets = { current: SECRET, previous: PREVIOUS_SECRET };
const loopback = parseCallerNetworks('127.0.0.0/8', 'test');

function caller(path: string, sourceIp = '127.0.0.1', authorization?: string) {
  return { path, authorization, sourceIp };
}

describe('callerAllowed', () => {
  it.each([
    ['the current secret in the path', caller(`/${SECRET}`), true],
    ['the previous secret in the path', caller(`/${PREVIOUS_SECRET}`), true],
    ['the secret as a Bearer token', caller('/', '127.0.0.1', `Bearer ${SECRET}`), true],
    ['a wrong secret', caller(`/${STRANGER_SECRET}`), false],
    ['no secret', caller('/'), false],
    ['the secret from outside the allowlist', caller(`/${SECRET}`, '10.0.0.1'), false],
    ['the secret from no known address', { path: `/${SECRET}`, authorization: undefined, sourceIp: undefined }, false],
  ])('%s: %s', async (_why, presented, expected) => {
    await expect(callerAllowed({ secrets, callerNetworks: loopback }, presented)).resolves.toBe(expected);
  });

  it('lets anyone in from an allowed address when unauthenticated callers are explicitly allowed, and no one from elsewhere', async () => {
    await expect(callerAllowed({ secrets: 'insecure', callerNetworks: loopback }, caller('/'))).resolves.toBe(true);
    await expect(callerAllowed({ secrets: 'insecure', callerNetworks: loopback }, caller('/', '192.0.2.1'))).resolves.toBe(false);
  });

  it('re-reads the secrets before comparing, but not for an address outside the allowlist', async () => {
    const config: CallerAuthConfig = { secrets: { current: STRANGER_SECRET }, callerNetworks: loopback };
    let refreshes = 0;
    config.refreshSecrets = () => {
      refreshes += 1;
      config.secrets = secrets;
      return Promise.resolve();
    };
    await expect(callerAllowed(config, caller(`/${SECRET}`, '10.0.0.1'))).resolves.toBe(false);
    expect(refreshes).toBe(0);
    await expect(callerAllowed(config, caller(`/${SECRET}`))).resolves.toBe(true);
    expect(refreshes).toBe(1);
  });
});
