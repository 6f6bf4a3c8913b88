import { describe, expect, it } from '@jest/globals';
import { CallerSecretError, checkSecret, isAuthorizedCaller, MIN_SECRET_LENGTH, parseSecretValue, type CallerSecrets } from '../../lib/auth/caller-auth.ts';
import { fixedSecret } from '../../testkit/reviews.ts';

// 32 bytes in base64url, as the operator is told to generate them; fixed so failures reproduce.
const CURRENT = fixedSecret('caller-auth.test.ts a1');
const PREVIOUS = fixedSecret('caller-auth.test.ts b2');
const STRANGER = fixedSecret('caller-auth.test.ts c3');

const both: CallerSecrets = { current: CURRENT, previous: PREVIOUS };
const currentOnly: CallerSecrets = { current: CURRENT };

describe('isAuthorizedCaller', () => {
  it.each([
    { why: 'the current secret as the path', path: `/${CURRENT}`, authorization: undefined },
    { why: 'the previous secret as the path', path: `/${PREVIOUS}`, authorization: undefined },
    { why: 'the current secret as the path with a trailing slash', path: `/${CURRENT}/`, authorization: undefined },
    { why: 'the current secret as a Bearer token on /', path: '/', authorization: `Bearer ${CURRENT}` },
    { why: 'the previous secret as a Bearer token on /', path: '/', authorization: `Bearer ${PREVIOUS}` },
    { why: 'a Bearer token on an empty path', path: '', authorization: `Bearer ${CURRENT}` },
    { why: 'the scheme in lower case (schemes are case-insensitive)', path: '/', authorization: `bearer ${CURRENT}` },
    { why: 'several spaces after the scheme', path: '/', authorization: `Bearer   ${CURRENT}` },
    { why: 'the path secret, whatever the header says', path: `/${CURRENT}`, authorization: `Bearer ${STRANGER}` },
  ])('accepts $why', ({ path, authorization }) => {
    expect(isAuthorizedCaller({ path, authorization }, both)).toBe(true);
  });

  it.each([
    { why: 'no secret at all', path: '/', authorization: undefined },
    { why: 'an empty path and no header', path: '', authorization: undefined },
    { why: 'a wrong path secret', path: `/${STRANGER}`, authorization: undefined },
    { why: 'the secret with a character more', path: `/${CURRENT}x`, authorization: undefined },
    { why: 'the secret with a character less', path: `/${CURRENT.slice(0, -1)}`, authorization: undefined },
    { why: 'the secret in another case', path: `/${CURRENT.toUpperCase()}`, authorization: undefined },
    { why: 'a segment before the secret', path: `/x/${CURRENT}`, authorization: undefined },
    { why: 'a segment after the secret', path: `/${CURRENT}/extra`, authorization: undefined },
    { why: 'the secret twice', path: `/${CURRENT}/${CURRENT}`, authorization: undefined },
    { why: 'a wrong path segment with a right Bearer token', path: `/${STRANGER}`, authorization: `Bearer ${CURRENT}` },
    { why: 'an extra path segment with a right Bearer token', path: '/webhook', authorization: `Bearer ${CURRENT}` },
    { why: 'a wrong Bearer token', path: '/', authorization: `Bearer ${STRANGER}` },
    { why: 'an empty Bearer token', path: '/', authorization: 'Bearer ' },
    { why: 'the scheme alone', path: '/', authorization: 'Bearer' },
    { why: 'an empty header', path: '/', authorization: '' },
    { why: 'the secret without a scheme', path: '/', authorization: CURRENT },
    { why: 'the Basic scheme', path: '/', authorization: `Basic ${CURRENT}` },
    { why: 'a Token scheme', path: '/', authorization: `Token ${CURRENT}` },
    { why: 'a scheme glued to the token', path: '/', authorization: `Bearer${CURRENT}` },
    { why: 'two tokens', path: '/', authorization: `Bearer ${CURRENT} ${CURRENT}` },
  ])('rejects $why', ({ path, authorization }) => {
    expect(isAuthorizedCaller({ path, authorization }, both)).toBe(false);
  });

  it('rejects the previous secret once no previous secret is configured', () => {
    expect(isAuthorizedCaller({ path: `/${PREVIOUS}` }, currentOnly)).toBe(false);
    expect(isAuthorizedCaller({ path: '/', authorization: `Bearer ${PREVIOUS}` }, currentOnly)).toBe(false);
    expect(isAuthorizedCaller({ path: `/${CURRENT}` }, currentOnly)).toBe(true);
  });
});

describe('checkSecret', () => {
  it('accepts 32 random bytes in base64url', () => {
    expect(() => {
      checkSecret(CURRENT, 'WEBHOOK_SECRET');
    }).not.toThrow();
    expect(CURRENT).toHaveLength(MIN_SECRET_LENGTH);
  });

  it.each([
    { why: 'one character short', secret: CURRENT.slice(1), message: `WEBHOOK_SECRET is 42 characters; it must be at least ${MIN_SECRET_LENGTH}` },
    { why: 'empty', secret: '', message: 'WEBHOOK_SECRET is 0 characters' },
    { why: 'a password', secret: 'hunter2', message: 'WEBHOOK_SECRET is 7 characters' },
    { why: 'plain base64 with "+" and "/"', secret: `${CURRENT.slice(2)}+/`, message: "WEBHOOK_SECRET must be base64url (A-Z, a-z, 0-9, '-', '_')" },
    { why: 'padded base64', secret: `${CURRENT}=`, message: 'WEBHOOK_SECRET must be base64url' },
    { why: 'a space inside', secret: `${CURRENT.slice(0, 20)} ${CURRENT.slice(20)}`, message: 'WEBHOOK_SECRET must be base64url' },
    { why: 'a trailing newline', secret: `${CURRENT}\n`, message: 'WEBHOOK_SECRET must be base64url' },
    { why: 'a dot', secret: `${CURRENT}.`, message: 'WEBHOOK_SECRET must be base64url' },
  ])('refuses a secret that is $why, naming the setting and not the value', ({ secret, message }) => {
    const check = () => {
      checkSecret(secret, 'WEBHOOK_SECRET');
    };
    expect(check).toThrow(CallerSecretError);
    expect(check).toThrow(message);
    try {
      check();
    } catch (error) {
      if (secret.length > 0) expect((error as Error).message).not.toContain(secret.trim());
    }
  });
});

describe('parseSecretValue', () => {
  it.each([
    { form: 'a bare secret', text: CURRENT, expected: { current: CURRENT } },
    { form: 'a bare secret with a trailing newline', text: `${CURRENT}\n`, expected: { current: CURRENT } },
    { form: 'JSON with current only', text: JSON.stringify({ current: CURRENT }), expected: { current: CURRENT } },
    { form: 'JSON with current and previous', text: JSON.stringify({ current: CURRENT, previous: PREVIOUS }), expected: both },
    { form: 'JSON with a null previous', text: JSON.stringify({ current: CURRENT, previous: null }), expected: { current: CURRENT } },
    { form: 'JSON with an empty previous', text: JSON.stringify({ current: CURRENT, previous: '' }), expected: { current: CURRENT } },
    { form: 'indented JSON with surrounding white space', text: `\n  ${JSON.stringify({ current: CURRENT }, null, 2)}\n`, expected: { current: CURRENT } },
  ])('reads $form', ({ text, expected }) => {
    expect(parseSecretValue(text, 'secret s')).toEqual(expected);
  });

  it.each([
    { why: 'JSON that does not parse', text: `{"current": "${CURRENT}"`, message: 'secret s is not valid JSON' },
    { why: 'JSON without current', text: JSON.stringify({ previous: PREVIOUS }), message: 'secret s has no string "current"' },
    { why: 'JSON with a numeric current', text: JSON.stringify({ current: 42 }), message: 'secret s has no string "current"' },
    { why: 'JSON with a numeric previous', text: JSON.stringify({ current: CURRENT, previous: 7 }), message: 'secret s has a "previous" that is not a string' },
    { why: 'JSON with a weak current', text: JSON.stringify({ current: 'short-secret' }), message: 'secret s (current) is 12 characters' },
    { why: 'JSON with a weak previous', text: JSON.stringify({ current: CURRENT, previous: 'old-short-secret' }), message: 'secret s (previous) is 16 characters' },
    { why: 'a bare weak secret', text: 'short-secret', message: 'secret s (current) is 12 characters' },
    { why: 'a bare secret that is not base64url', text: `${CURRENT}+`, message: 'secret s (current) must be base64url' },
    { why: 'empty', text: '   ', message: 'secret s (current) is 0 characters' },
  ])('refuses $why with a message that does not quote it', ({ text, message }) => {
    expect(() => parseSecretValue(text, 'secret s')).toThrow(CallerSecretError);
    expect(() => parseSecretValue(text, 'secret s')).toThrow(message);
    try {
      parseSecretValue(text, 'secret s');
    } catch (error) {
      expect((error as Error).message).not.toMatch(/short-secret|hunter/);
      expect((error as Error).message).not.toContain(CURRENT);
    }
  });
});
