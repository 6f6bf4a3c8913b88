/**
 * The webhook server as `npm start` runs it against a cluster (the three
 * functions over HTTPS on 127.0.0.1, reading the cluster through
 * KUBECONFIG_CONTENT), in a process of its own so that the load generator
 * neither shares its event loop nor its memory figures. Started by
 * https-soak.ts with fork(): it reports its address on the IPC channel and
 * answers every "sample" message with a memory sample taken after a full
 * collection.
 */
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { ADMISSION_FUNCTIONS } from '../../lib/webhooks/registry.ts';
import { buildApp } from '../../functions/server/app.ts';
import { generateServingTls } from '../../functions/server/tls.ts';
import { clusterSources } from '../../functions/shared/cluster.ts';
import { admissionRuntime, loadCallerAccess } from '../../functions/shared/compose.ts';
import { sampleMemory } from './memory.ts';

const send = (message: unknown): void => {
  process.send?.(message);
};

try {
  // Every request logs a line; the lines would only measure the pipe.
  const logger = jsonLogger({ function: 'server' }, () => undefined);
  const { secrets } = await loadCallerAccess(process.env, jsonLogger({ function: 'server' }, () => undefined));
  const sources = await clusterSources(process.env, logger);
  const runtimes = Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, admissionRuntime(fn, secrets, sources, jsonLogger({ function: fn }, () => undefined))]));
  const tls = generateServingTls();
  const app = buildApp({ runtimes, https: { cert: tls.certPem, key: tls.keyPem }, readiness: () => Promise.resolve({ ready: true, message: '' }) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address !== 'object') throw new Error('the server has no address');
  process.on('message', (message: unknown) => {
    if (message === 'sample') send({ sample: sampleMemory(process.uptime()) });
    if (message === 'stop') void app.close().then(() => { process.disconnect(); });
  });
  send({ url: `https://127.0.0.1:${address.port}`, caPem: tls.caPem });
} catch (error) {
  send({ error: error instanceof Error ? error.message : String(error) });
  process.exitCode = 1;
  process.disconnect();
}
