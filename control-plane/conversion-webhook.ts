/**
 * The SidecarSet CRD's conversion webhook for every control plane the tests
 * start: the project's own HTTP handler for sidecarset-convert (lib/webhooks/
 * http-handler.ts: caller check by secret path, request decoding, the conversion, its
 * log line), served over real TLS on 127.0.0.1 by a child process
 * (conversion-webhook-child.ts). It serves with the API server's own
 * serving certificate (issued for 127.0.0.1 by the API server's CA, which
 * the harness already trusts), so the CRD's caBundle is that CA. The
 * harness points any SidecarSet CRD it applies with the placeholder
 * conversion URL (infra/k8s/crd.yaml's) at this webhook, so every suite
 * that installs the CRD stores v1beta1 and converts through the project's
 * function.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { SIDECARSET_CONVERT } from '../lib/webhooks/descriptors.ts';

const CHILD = fileURLToPath(new URL('./conversion-webhook-child.ts', import.meta.url));

/** How many of the webhook's log lines are kept (for a failing test's message). */
const KEPT_LINES = 200;
const START_TIMEOUT_MS = 30_000;

export interface ConversionWebhook {
  /** https://127.0.0.1:<port>/sidecarset-convert/<secret>: what the CRD's clientConfig.url names. */
  url: string;
  /** The CA that signed the serving certificate, as PEM. */
  caPem: string;
  /** How many ConversionReviews it answered with HTTP 200 (converted or failed). */
  readonly reviews: number;
  /** Its last log lines (the HTTP handler's one line per request), newest last. */
  readonly logs: readonly string[];
  /** The child's pid (it exits with its parent: the IPC channel closing stops it). */
  pid: number;
  stop(): Promise<void>;
}

/** Starts the webhook on a free port of 127.0.0.1, serving with the certificate (a chain) and key in these files. */
export async function startConversionWebhook(tls: { certFile: string; keyFile: string; caPem: string }): Promise<ConversionWebhook> {
  const secret = randomBytes(32).toString('base64url');
  const child: ChildProcess = fork(CHILD, [], {
    env: { PATH: process.env.PATH ?? '', CONVERSION_WEBHOOK_SECRET: secret, CONVERSION_WEBHOOK_CERT: tls.certFile, CONVERSION_WEBHOOK_KEY: tls.keyFile },
    // Not jest's flags: a plain Node process running the project's TypeScript.
    execArgv: ['--no-warnings=ExperimentalWarning'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const logs: string[] = [];
  let reviews = 0;
  const exited = new Promise<void>((resolve) => child.once('exit', () => { resolve(); }));
  child.on('message', (message: unknown) => {
    if (typeof message !== 'object' || message === null || !('line' in message) || typeof message.line !== 'string') return;
    logs.push(message.line);
    if (logs.length > KEPT_LINES) logs.shift();
    if (message.line.includes('"statusCode":200')) reviews++;
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      if (child.connected) child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
  };
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`the conversion webhook process reported no port within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    child.on('message', (message: unknown) => {
      if (typeof message !== 'object' || message === null) return;
      if ('port' in message && typeof message.port === 'number') {
        clearTimeout(timer);
        resolve(message.port);
      } else if ('error' in message) {
        clearTimeout(timer);
        reject(new Error(`the conversion webhook process failed: ${String(message.error)}`));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the conversion webhook process exited (${String(code)}) before serving`));
    });
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return {
    url: `https://127.0.0.1:${port}/${SIDECARSET_CONVERT.name}/${secret}`,
    caPem: tls.caPem,
    get reviews() {
      return reviews;
    },
    get logs() {
      return logs;
    },
    pid: child.pid ?? 0,
    stop,
  };
}
