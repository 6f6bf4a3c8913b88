/**
 * Reads a secret's string value from AWS Secrets Manager (at cold start and
 * on the caller's re-read interval), and writes one (secret rotation).
 *
 * The SDK is imported when the first secret is read, not with this module:
 * loading it adds some 130 ms to every cold start, and a function given its
 * secret in the environment never needs it.
 */

/** The secret could not be read; start-up stops with this message. */
export class SecretReadError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SecretReadError';
  }
}

export interface SecretsManagerOptions {
  /** Overrides the service endpoint (tests point it at a local server). */
  endpoint?: string;
  region?: string;
}

/** Returns a reader bound to one client, so a cold start builds the client once. */
export function secretsManagerReader(options: SecretsManagerOptions = {}): (secretId: string) => Promise<string> {
  let sdk: Promise<{ client: import('@aws-sdk/client-secrets-manager').SecretsManagerClient; Command: typeof import('@aws-sdk/client-secrets-manager').GetSecretValueCommand }> | undefined;
  const load = () =>
    (sdk ??= import('@aws-sdk/client-secrets-manager').then(({ SecretsManagerClient, GetSecretValueCommand }) => ({
      client: new SecretsManagerClient({
        ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
        ...(options.region !== undefined ? { region: options.region } : {}),
        maxAttempts: 3,
      }),
      Command: GetSecretValueCommand,
    })));
  return async (secretId) => {
    let value;
    try {
      const { client, Command } = await load();
      value = await client.send(new Command({ SecretId: secretId }));
    } catch (error) {
      throw new SecretReadError(`cannot read secret ${secretId}: ${(error as Error).message}`, { cause: error });
    }
    if (typeof value.SecretString !== 'string') {
      throw new SecretReadError(`secret ${secretId} has no string value (binary secrets are not supported)`);
    }
    return value.SecretString;
  };
}

/**
 * The webhook secret as a store the rotation reads and writes: GetSecretValue
 * and PutSecretValue on one secret (the status reconciler's role may do both
 * on that secret only).
 */
export function secretsManagerStore(secretId: string, options: SecretsManagerOptions = {}): import('../auth/rotation.ts').SecretStore {
  const read = secretsManagerReader(options);
  let sdk: Promise<{ client: import('@aws-sdk/client-secrets-manager').SecretsManagerClient; Command: typeof import('@aws-sdk/client-secrets-manager').PutSecretValueCommand }> | undefined;
  const load = () =>
    (sdk ??= import('@aws-sdk/client-secrets-manager').then(({ SecretsManagerClient, PutSecretValueCommand }) => ({
      client: new SecretsManagerClient({
        ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
        ...(options.region !== undefined ? { region: options.region } : {}),
        maxAttempts: 3,
      }),
      Command: PutSecretValueCommand,
    })));
  return {
    read: () => read(secretId),
    async write(text, signal) {
      try {
        const { client, Command } = await load();
        await client.send(new Command({ SecretId: secretId, SecretString: text }), signal === undefined ? {} : { abortSignal: signal });
      } catch (error) {
        throw new SecretReadError(`cannot write secret ${secretId}: ${(error as Error).message}`, { cause: error });
      }
    },
  };
}
