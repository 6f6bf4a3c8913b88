/**
 * `npm start`: the three admission webhooks over HTTPS on 127.0.0.1, serving
 * the cluster of --kubeconfig / $KUBECONFIG, with the same paths and caller
 * authentication as the Lambda functions.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { callerSecretSource } from '../../lib/auth/caller-config.ts';
import { CallerSecretError } from '../../lib/auth/caller-auth.ts';
import { ADMISSION_FUNCTIONS } from '../../lib/webhooks/registry.ts';
import { clusterSources } from '../shared/cluster.ts';
import { admissionRuntime, loadCallerSecrets, warnIfInsecure } from '../shared/compose.ts';
import { buildApp } from './app.ts';
import { OptionsError, parseServerOptions, SERVER_USAGE } from './options.ts';
import { CA_FILE, ensureServingTls } from './tls.ts';

const SECRET_FILE = 'webhook-secret';
const logger = jsonLogger({ function: 'server' });

/** The local server's caller secret: configured, or generated once and kept beside the certificate. */
async function localSecretEnv(tlsDir: string, env: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> {
  try {
    callerSecretSource(env);
    return env;
  } catch (error) {
    if (!(error instanceof CallerSecretError) || !error.message.startsWith('no caller secret')) throw error;
  }
  const path = join(tlsDir, SECRET_FILE);
  let secret: string;
  try {
    secret = (await readFile(path, 'utf8')).trim();
  } catch {
    secret = randomBytes(32).toString('base64url');
    await mkdir(tlsDir, { recursive: true, mode: 0o700 });
    await writeFile(path, `${secret}\n`, { mode: 0o600 });
  }
  return { ...env, WEBHOOK_SECRET: secret };
}

async function main(): Promise<void> {
  const options = parseServerOptions(process.argv.slice(2), { tlsDir: resolve('.cache/local-server') });
  const env = await localSecretEnv(options.tlsDir, {
    ...process.env,
    ...(options.kubeconfig !== undefined ? { KUBECONFIG: options.kubeconfig, KUBECONFIG_CONTENT: '', KUBECONFIG_SECRET_ARN: '' } : {}),
  });
  const secrets = await loadCallerSecrets(env);
  warnIfInsecure(secrets, logger);
  const sources = await clusterSources(env, logger);
  const runtimes = Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, admissionRuntime(fn, secrets, sources, jsonLogger({ function: fn }))]));

  const tls =
    options.tlsCert !== undefined && options.tlsKey !== undefined
      ? { cert: await readFile(options.tlsCert, 'utf8'), key: await readFile(options.tlsKey, 'utf8'), caPath: undefined }
      : await ensureServingTls(options.tlsDir).then((t) => ({ cert: t.certPem, key: t.keyPem, caPath: join(options.tlsDir, CA_FILE) }));

  const app = buildApp({
    runtimes,
    https: { cert: tls.cert, key: tls.key },
    readiness: async () => {
      try {
        await sources.sidecarSets.list(AbortSignal.timeout(5000));
        return { ready: true, message: `SidecarSets readable from ${sources.server}` };
      } catch (error) {
        return { ready: false, message: (error as Error).message };
      }
    },
  });
  await app.listen({ host: '127.0.0.1', port: options.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const secretPath = secrets === 'insecure' ? '' : `/${secrets.current}`;
  logger.info('serving', {
    cluster: sources.server,
    urls: Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, `https://127.0.0.1:${port}/${fn}${secretPath}`])),
    ...(tls.caPath !== undefined ? { caBundleFile: tls.caPath } : {}),
  });

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) process.exit(1);
    closing = true;
    logger.info('shutting down', { signal });
    // close() stops accepting and waits for requests in flight.
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('shutdown failed', { error: (error as Error).message });
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => {
    shutdown('SIGINT');
  });
  process.once('SIGTERM', () => {
    shutdown('SIGTERM');
  });
}

main().catch((error: unknown) => {
  if (error instanceof OptionsError) process.stderr.write(`${error.message}\n${SERVER_USAGE}\n`);
  else process.stderr.write(`server: ${(error as Error).message}\n`);
  process.exitCode = 2;
});
