/**
 * Where the caller secret comes from, read from the environment once per cold
 * start. Running without a secret is refused unless explicitly allowed.
 */
import { CallerSecretError, checkSecret, type CallerSecrets } from './caller-auth.ts';

export const ENV_SECRET = 'WEBHOOK_SECRET';
export const ENV_SECRET_PREVIOUS = 'WEBHOOK_SECRET_PREVIOUS';
export const ENV_SECRET_ARN = 'WEBHOOK_SECRET_ARN';
export const ENV_ALLOW_UNAUTHENTICATED = 'ALLOW_UNAUTHENTICATED_CALLERS';

export type CallerSecretSource =
  | { kind: 'env'; secrets: CallerSecrets }
  | { kind: 'secrets-manager'; secretId: string }
  | { kind: 'insecure' };

type Env = Readonly<Record<string, string | undefined>>;

function nonEmpty(env: Env, key: string): string | undefined {
  const v = env[key];
  return v === undefined || v === '' ? undefined : v;
}

/**
 * The configured source of the caller secret.
 * @throws CallerSecretError when none, or more than one, is configured, or a secret is weak.
 */
export function callerSecretSource(env: Env): CallerSecretSource {
  const current = nonEmpty(env, ENV_SECRET);
  const previous = nonEmpty(env, ENV_SECRET_PREVIOUS);
  const arn = nonEmpty(env, ENV_SECRET_ARN);
  const insecure = nonEmpty(env, ENV_ALLOW_UNAUTHENTICATED);
  if (insecure !== undefined && insecure !== 'true' && insecure !== 'false') {
    throw new CallerSecretError(`${ENV_ALLOW_UNAUTHENTICATED} must be "true" or "false", not ${JSON.stringify(insecure)}`);
  }
  if (current !== undefined && arn !== undefined) {
    throw new CallerSecretError(`set either ${ENV_SECRET} or ${ENV_SECRET_ARN}, not both`);
  }
  if (previous !== undefined && current === undefined) {
    throw new CallerSecretError(`${ENV_SECRET_PREVIOUS} is set without ${ENV_SECRET}`);
  }
  if (current !== undefined) {
    checkSecret(current, ENV_SECRET);
    if (previous !== undefined) checkSecret(previous, ENV_SECRET_PREVIOUS);
    return { kind: 'env', secrets: previous === undefined ? { current } : { current, previous } };
  }
  if (arn !== undefined) return { kind: 'secrets-manager', secretId: arn };
  if (insecure === 'true') return { kind: 'insecure' };
  throw new CallerSecretError(
    `no caller secret is configured: set ${ENV_SECRET} or ${ENV_SECRET_ARN} (or ${ENV_ALLOW_UNAUTHENTICATED}=true, for local development only)`,
  );
}
