/**
 * Authenticating the caller before anything else: nothing about the request but
 * who sent it is looked at, so a stranger learns nothing, not even which methods exist.
 */
import { isAuthorizedCaller, type CallerSecrets } from '../auth/caller-auth.ts';
import type { CallerNetworks } from '../auth/caller-network.ts';

/** Who may call a function. */
export interface CallerAuthConfig {
  /** `insecure` only when the operator explicitly allowed unauthenticated callers (local development). */
  secrets: CallerSecrets | 'insecure';
  /** Source addresses that may call at all; undefined allows any (the secret still decides). */
  callerNetworks?: CallerNetworks | undefined;
  /** Re-reads `secrets` when due (see lib/auth/secret-refresh.ts); never rejects. */
  refreshSecrets?: (() => Promise<void>) | undefined;
}

/** What a caller presents for authentication. */
export interface CallerPresented {
  path: string;
  authorization: string | undefined;
  sourceIp: string | undefined;
}

/**
 * Whether the caller may be served: its source address is in the allowlist
 * (when there is one), checked first, then it presented the secret (always
 * true when unauthenticated callers are explicitly allowed). The secrets are
 * re-read first when due.
 */
export async function callerAllowed(config: CallerAuthConfig, caller: CallerPresented): Promise<boolean> {
  if (config.callerNetworks !== undefined && !config.callerNetworks.allows(caller.sourceIp)) return false;
  if (config.refreshSecrets !== undefined) await config.refreshSecrets();
  return config.secrets === 'insecure' || isAuthorizedCaller(caller, config.secrets);
}
