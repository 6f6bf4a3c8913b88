/**
 * The server of the HTTP benchmark, run in its own process so that
 * autocannon does not share its event loop: the project's fastify app over
 * HTTPS on 127.0.0.1 serving `pod-inject` (in-memory cluster: 50
 * SidecarSets, 5 applying), plus the floor route. Prints `{"port":N,"answerBytes":N}`
 * and serves until its standard input closes.
 *
 * The floor is a static route at `/sidecarset-default/<secret>`: the app's
 * onRequest hook turns away any path that is not an admission function with
 * the caller's secret, so a path the hook admits is the only way onto the
 * same server, and it makes the floor pay the same authentication check.
 * The static route wins over the app's catch-all, so on this instance it
 * shadows the defaulting function and answers the fixed pod-inject answer.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { serveAdmission } from '../../lib/webhooks/http-handler.ts';
import { buildApp } from '../../functions/server/app.ts';
import { ensureServingTls } from '../../functions/server/tls.ts';
import { admissionRuntime } from '../../functions/shared/compose.ts';
import { SECRET } from '../../testkit/reviews.ts';
import { FLOOR_PATH } from './http-paths.ts';
import { doorRequest } from './admission-compute.ts';
import { benchBodies, benchNamespaces, clusterSidecarSets } from '../../testkit/bench/admission-inputs.ts';


const tlsDir = await mkdtemp(join(tmpdir(), 'sidecarset-bench-tls-'));
const tls = await ensureServingTls(tlsDir);
const sources = { sidecarSets: memorySidecarSetSource(clusterSidecarSets()), namespaces: memoryNamespaceSource(benchNamespaces()) };
const logger = jsonLogger({ function: 'pod-inject' }, () => undefined);
const runtimes = {
  'pod-inject': admissionRuntime('pod-inject', { current: SECRET }, sources, logger),
  'sidecarset-default': admissionRuntime('sidecarset-default', { current: SECRET }, undefined, logger),
};
// The fixed answer is the function's own, so the floor sends the same bytes.
const fixed = await serveAdmission(doorRequest(benchBodies().podInject), runtimes['pod-inject'].config, runtimes['pod-inject'].deps);
const app = buildApp({ runtimes, https: { cert: tls.certPem, key: tls.keyPem }, readiness: () => Promise.resolve({ ready: true, message: '' }) });
app.post(FLOOR_PATH, async (_request, reply) => reply.code(200).header('content-type', 'application/json').send(fixed.body));
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
if (address === null || typeof address !== 'object') throw new Error('the server has no address');
process.stdout.write(`${JSON.stringify({ port: address.port, answerBytes: Buffer.byteLength(fixed.body) })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void app.close().then(() => rm(tlsDir, { recursive: true, force: true }));
});
