import { describe, expect, it } from '@jest/globals';
import { CallerSecretError } from '../../lib/auth/caller-auth.ts';
import { callerSecretSource } from '../../lib/auth/caller-config.ts';
import { fixedSecret } from '../../testkit/reviews.ts';

const CURRENT = fixedSecret('caller-config.test.ts 11');
const PREVIOUS = fixedSecret('caller-config.test.ts 22');
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:webhook-caller-AbCdEf';

describe('callerSecretSource', () => {
  it.each([
    { why: 'the current secret', env: { WEBHOOK_SECRET: CURRENT }, source: { kind: 'env', secrets: { current: CURRENT } } },
    {
      why: 'the current and previous secrets',
      env: { WEBHOOK_SECRET: CURRENT, WEBHOOK_SECRET_PREVIOUS: PREVIOUS },
      source: { kind: 'env', secrets: { current: CURRENT, previous: PREVIOUS } },
    },
    {
      why: 'an empty previous secret as none',
      env: { WEBHOOK_SECRET: CURRENT, WEBHOOK_SECRET_PREVIOUS: '' },
      source: { kind: 'env', secrets: { current: CURRENT } },
    },
    { why: 'a Secrets Manager ARN', env: { WEBHOOK_SECRET_ARN: ARN }, source: { kind: 'secrets-manager', secretId: ARN } },
    { why: 'an empty secret beside an ARN as unset', env: { WEBHOOK_SECRET: '', WEBHOOK_SECRET_ARN: ARN }, source: { kind: 'secrets-manager', secretId: ARN } },
    { why: 'the insecure flag', env: { ALLOW_UNAUTHENTICATED_CALLERS: 'true' }, source: { kind: 'insecure' } },
    {
      why: 'a configured secret over the insecure flag',
      env: { WEBHOOK_SECRET: CURRENT, ALLOW_UNAUTHENTICATED_CALLERS: 'true' },
      source: { kind: 'env', secrets: { current: CURRENT } },
    },
    {
      why: 'a secret with the flag explicitly false',
      env: { WEBHOOK_SECRET: CURRENT, ALLOW_UNAUTHENTICATED_CALLERS: 'false' },
      source: { kind: 'env', secrets: { current: CURRENT } },
    },
  ])('uses $why', ({ env, source }) => {
    expect(callerSecretSource(env)).toEqual(source);
  });

  const noSecret =
    'no caller secret is configured: set WEBHOOK_SECRET or WEBHOOK_SECRET_ARN (or ALLOW_UNAUTHENTICATED_CALLERS=true, for local development only)';

  it.each([
    { why: 'nothing is set', env: {}, message: noSecret },
    { why: 'every variable is empty', env: { WEBHOOK_SECRET: '', WEBHOOK_SECRET_ARN: '', ALLOW_UNAUTHENTICATED_CALLERS: '' }, message: noSecret },
    { why: 'the insecure flag is false', env: { ALLOW_UNAUTHENTICATED_CALLERS: 'false' }, message: noSecret },
    { why: 'both a secret and an ARN are set', env: { WEBHOOK_SECRET: CURRENT, WEBHOOK_SECRET_ARN: ARN }, message: 'set either WEBHOOK_SECRET or WEBHOOK_SECRET_ARN, not both' },
    { why: 'a previous secret is set without a current one', env: { WEBHOOK_SECRET_PREVIOUS: PREVIOUS }, message: 'WEBHOOK_SECRET_PREVIOUS is set without WEBHOOK_SECRET' },
    {
      why: 'a previous secret is set beside an ARN',
      env: { WEBHOOK_SECRET_PREVIOUS: PREVIOUS, WEBHOOK_SECRET_ARN: ARN },
      message: 'WEBHOOK_SECRET_PREVIOUS is set without WEBHOOK_SECRET',
    },
    { why: 'the flag is "yes"', env: { ALLOW_UNAUTHENTICATED_CALLERS: 'yes' }, message: 'ALLOW_UNAUTHENTICATED_CALLERS must be "true" or "false", not "yes"' },
    { why: 'the flag is "1"', env: { ALLOW_UNAUTHENTICATED_CALLERS: '1' }, message: 'ALLOW_UNAUTHENTICATED_CALLERS must be "true" or "false", not "1"' },
    {
      why: 'the flag is "TRUE", even beside a secret',
      env: { WEBHOOK_SECRET: CURRENT, ALLOW_UNAUTHENTICATED_CALLERS: 'TRUE' },
      message: 'ALLOW_UNAUTHENTICATED_CALLERS must be "true" or "false", not "TRUE"',
    },
    { why: 'the secret is weak', env: { WEBHOOK_SECRET: 'changeme' }, message: 'WEBHOOK_SECRET is 8 characters; it must be at least 43' },
    { why: 'the secret is plain base64', env: { WEBHOOK_SECRET: `${CURRENT.slice(1)}+` }, message: 'WEBHOOK_SECRET must be base64url' },
    { why: 'the previous secret is weak', env: { WEBHOOK_SECRET: CURRENT, WEBHOOK_SECRET_PREVIOUS: 'oldpassword' }, message: 'WEBHOOK_SECRET_PREVIOUS is 11 characters' },
    {
      why: 'the previous secret is not base64url',
      env: { WEBHOOK_SECRET: CURRENT, WEBHOOK_SECRET_PREVIOUS: `${PREVIOUS}=` },
      message: 'WEBHOOK_SECRET_PREVIOUS must be base64url',
    },
  ])('refuses to start when $why', ({ env, message }) => {
    expect(() => callerSecretSource(env)).toThrow(CallerSecretError);
    expect(() => callerSecretSource(env)).toThrow(message);
  });

  it.each([
    { why: 'the runtime names the Lambda function', env: { ALLOW_UNAUTHENTICATED_CALLERS: 'true', AWS_LAMBDA_FUNCTION_NAME: 'pod-inject' }, platform: 'local' as const },
    { why: 'the Lambda entry point composes', env: { ALLOW_UNAUTHENTICATED_CALLERS: 'true' }, platform: 'lambda' as const },
    { why: 'a secret is configured beside it', env: { ALLOW_UNAUTHENTICATED_CALLERS: 'true', WEBHOOK_SECRET: CURRENT }, platform: 'lambda' as const },
  ])('refuses ALLOW_UNAUTHENTICATED_CALLERS=true on Lambda when $why', ({ env, platform }) => {
    expect(() => callerSecretSource(env, platform)).toThrow('ALLOW_UNAUTHENTICATED_CALLERS=true is refused on Lambda: a Function URL is public');
  });

  it('keeps ALLOW_UNAUTHENTICATED_CALLERS=true for the local server, and "false" on Lambda', () => {
    expect(callerSecretSource({ ALLOW_UNAUTHENTICATED_CALLERS: 'true' }, 'local')).toEqual({ kind: 'insecure' });
    expect(callerSecretSource({ ALLOW_UNAUTHENTICATED_CALLERS: 'false', WEBHOOK_SECRET: CURRENT }, 'lambda')).toEqual({ kind: 'env', secrets: { current: CURRENT } });
  });

  it('never quotes a weak secret in its message', () => {
    expect(() => callerSecretSource({ WEBHOOK_SECRET: 'changeme' })).not.toThrow(/changeme/);
    expect(() => callerSecretSource({ WEBHOOK_SECRET: CURRENT, WEBHOOK_SECRET_PREVIOUS: 'oldpassword' })).not.toThrow(/oldpassword/);
  });
});
