/**
 * Where the caller secret comes from, read from the environment once per cold
 * start. Running without a secret is refused unless explicitly allowed.
 */
import { CallerSecretError, checkSecret, type CallerSecrets } from './caller-auth.ts';
import { parseCallerNetworks, type CallerNetworks } from './caller-network.ts';
import { DEFAULT_ROTATION_MARGIN_MS, DEFAULT_ROTATION_PERIOD_MS, type RotationSettings } from './rotation-settings.ts';
import { DEFAULT_SECRET_REFRESH_MS } from './secret-refresh.ts';

export const ENV_SECRET = 'WEBHOOK_SECRET';
export const ENV_SECRET_PREVIOUS = 'WEBHOOK_SECRET_PREVIOUS';
export const ENV_SECRET_ARN = 'WEBHOOK_SECRET_ARN';
export const ENV_ALLOW_UNAUTHENTICATED = 'ALLOW_UNAUTHENTICATED_CALLERS';
/** Comma-separated addresses and CIDR blocks that may call the webhooks at all (unset: any). */
export const ENV_ALLOWED_CALLER_CIDRS = 'ALLOWED_CALLER_CIDRS';
/** How often a function re-reads a stored secret (WEBHOOK_SECRET_ARN, the local server's file). */
export const ENV_SECRET_REFRESH_MS = 'WEBHOOK_SECRET_REFRESH_MS';
/** How often the resync rotates a stored secret (0: never). */
export const ENV_ROTATION_PERIOD_MS = 'WEBHOOK_SECRET_ROTATION_PERIOD_MS';
/** Added to each of the rotation's waits. */
export const ENV_ROTATION_MARGIN_MS = 'WEBHOOK_SECRET_ROTATION_MARGIN_MS';
/** Set by the Lambda runtime in every function's environment. */
export const ENV_LAMBDA_FUNCTION_NAME = 'AWS_LAMBDA_FUNCTION_NAME';

/** Where the functions run: a Function URL is reachable by anyone, the local server only on 127.0.0.1. */
export type Platform = 'lambda' | 'local';

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
 * The configured source of the caller secret. On Lambda (the Lambda entry
 * point says so, or the runtime's AWS_LAMBDA_FUNCTION_NAME is set)
 * unauthenticated callers are never allowed: a Function URL is public.
 * @throws CallerSecretError when none, or more than one, is configured, or a secret is weak.
 */
export function callerSecretSource(env: Env, platform: Platform = 'local'): CallerSecretSource {
  const current = nonEmpty(env, ENV_SECRET);
  const previous = nonEmpty(env, ENV_SECRET_PREVIOUS);
  const arn = nonEmpty(env, ENV_SECRET_ARN);
  const insecure = nonEmpty(env, ENV_ALLOW_UNAUTHENTICATED);
  if (insecure !== undefined && insecure !== 'true' && insecure !== 'false') {
    throw new CallerSecretError(`${ENV_ALLOW_UNAUTHENTICATED} must be "true" or "false", not ${JSON.stringify(insecure)}`);
  }
  if (insecure === 'true' && (platform === 'lambda' || nonEmpty(env, ENV_LAMBDA_FUNCTION_NAME) !== undefined)) {
    throw new CallerSecretError(
      `${ENV_ALLOW_UNAUTHENTICATED}=true is refused on Lambda: a Function URL is public, so anyone could call the webhooks; set ${ENV_SECRET_ARN} (it is for the local server and invoke only)`,
    );
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

/**
 * The caller network allowlist from ALLOWED_CALLER_CIDRS; undefined when unset.
 * @throws CallerNetworkError naming the first bad entry.
 */
export function callerNetworksFromEnv(env: Env): CallerNetworks | undefined {
  return parseCallerNetworks(env[ENV_ALLOWED_CALLER_CIDRS], ENV_ALLOWED_CALLER_CIDRS);
}

/**
 * How often a stored secret is re-read, from WEBHOOK_SECRET_REFRESH_MS
 * (default 60000). The rotator waits this long (plus a margin) before
 * pointing the webhooks at a new secret, so both sides must agree on it.
 * @throws CallerSecretError when it is not whole milliseconds from 1000 to 3600000.
 */
export function secretRefreshMsFromEnv(env: Env): number {
  return milliseconds(env, ENV_SECRET_REFRESH_MS, DEFAULT_SECRET_REFRESH_MS, 1000, 3_600_000);
}

function milliseconds(env: Env, key: string, fallback: number, min: number, max: number, orZero = false): number {
  const text = nonEmpty(env, key);
  if (text === undefined) return fallback;
  const value = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!((value >= min && value <= max) || (orZero && value === 0))) {
    throw new CallerSecretError(`${key} must be whole milliseconds from ${min} to ${max}${orZero ? ', or 0 (off)' : ''}; got ${JSON.stringify(text)}`);
  }
  return value;
}

/**
 * The rotation's settings: WEBHOOK_SECRET_ROTATION_PERIOD_MS (default 24 h,
 * 0 turns rotation off), WEBHOOK_SECRET_ROTATION_MARGIN_MS (default 60 s) and
 * the functions' re-read interval.
 * @throws CallerSecretError naming a bad value.
 */
export function rotationSettingsFromEnv(env: Env): RotationSettings {
  const refreshMs = secretRefreshMsFromEnv(env);
  const marginMs = milliseconds(env, ENV_ROTATION_MARGIN_MS, DEFAULT_ROTATION_MARGIN_MS, 100, 3_600_000);
  // A rotation takes the re-read interval plus two margins; a shorter period would start the next before it ends.
  const minPeriod = refreshMs + 2 * marginMs;
  const periodMs = milliseconds(env, ENV_ROTATION_PERIOD_MS, DEFAULT_ROTATION_PERIOD_MS, minPeriod, 366 * 24 * 3_600_000, true);
  return { periodMs, refreshMs, marginMs };
}

/**
 * The webhook URL prefixes the deployment made (origin and path up to the
 * secret, each ending in `/`), comma-separated: the only URLs rotation
 * writes a secret into (rotation.ts). `npm start` sets it to its server's
 * URLs; on AWS the stack's schedule hands them to each resync in
 * the event (`detail.deployedWebhookUrls`) instead.
 */
export const ENV_DEPLOYED_WEBHOOK_URLS = 'DEPLOYED_WEBHOOK_URLS';

/**
 * Checks deployed webhook URL prefixes as the API server checks a
 * webhook's URL (https, no query, fragment or user info), each ending in `/`.
 * @throws CallerSecretError naming the bad entry and where it came from.
 */
export function parseDeployedWebhookUrls(values: readonly unknown[], where: string): string[] {
  return values.map((value) => {
    if (typeof value !== 'string') throw new CallerSecretError(`${where}: each deployed webhook URL must be a string; got ${JSON.stringify(value)}`);
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
    if (url?.protocol !== 'https:' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '' || !value.endsWith('/') || url.pathname === '') {
      throw new CallerSecretError(`${where}: ${JSON.stringify(value)} is not a deployed webhook URL prefix (https://host/path/, ending in /, without query, fragment or user info)`);
    }
    return value;
  });
}

/** The deployed webhook URL prefixes from DEPLOYED_WEBHOOK_URLS; undefined when unset. */
export function deployedWebhookUrlsFromEnv(env: Env): string[] | undefined {
  const text = nonEmpty(env, ENV_DEPLOYED_WEBHOOK_URLS);
  return text === undefined ? undefined : parseDeployedWebhookUrls(text.split(',').map((s) => s.trim()), ENV_DEPLOYED_WEBHOOK_URLS);
}
