/**
 * A real cluster with this project installed, for end-to-end tests: the
 * control plane, the project's CRD and RBAC, the fastify webhook server
 * (HTTPS on 127.0.0.1, the functions reading the cluster as the
 * least-privilege identity) and the webhook configurations pointing at it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { renderWebhookConfigurations } from '../../lib/manifests/webhook-configurations.ts';
import type { Logger } from '../../lib/ports.ts';
import { ADMISSION_FUNCTIONS } from '../../lib/webhooks/registry.ts';
import { buildApp } from '../../functions/server/app.ts';
import { clusterSources } from '../../functions/shared/cluster.ts';
import { admissionRuntime } from '../../functions/shared/compose.ts';
import { ensureServingTls } from '../../functions/server/tls.ts';
import { startControlPlane, type ControlPlane } from '../control-plane/harness.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const crdPath = join(projectRoot, 'infra', 'k8s', 'crd.yaml');

export interface LocalStack {
  cp: ControlPlane;
  /** https://127.0.0.1:<port> of the webhook server. */
  serverUrl: string;
  secret: string;
  caPem: string;
  /** Lines the webhook server logged. */
  logs: string[];
  stop(): Promise<void>;
}

/** Waits until the CRD is Established, as kubectl wait does. */
export async function waitForCrd(cp: ControlPlane, name: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await cp.request('admin', 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    if (res.status === 200) {
      const crd = JSON.parse(res.body) as { status?: { conditions?: { type: string; status: string }[] } };
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    }
    if (Date.now() > deadline) throw new Error(`CRD ${name} not established after ${timeoutMs} ms: ${res.status} ${res.body}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function startLocalStack(options: { podFailurePolicy?: 'Fail' | 'Ignore' } = {}): Promise<LocalStack> {
  const cp = await startControlPlane();
  const tlsDir = await mkdtemp(join(tmpdir(), 'sidecarset-tls-'));
  const logs: string[] = [];
  try {
    await cp.apply(await readFile(crdPath, 'utf8'));
    await waitForCrd(cp, 'sidecarsets.apps.kruise.io');
    const tls = await ensureServingTls(tlsDir);
    const secret = randomBytes(32).toString('base64url');
    const sink = (line: string) => {
      logs.push(line);
    };
    const logger: Logger = jsonLogger({ function: 'server' }, sink);
    // No list cache: each step sees the previous one at once (the 2 s default
    // lifetime is covered by the source's own tests).
    const sources = await clusterSources({ KUBECONFIG_CONTENT: cp.kubeconfig('functions'), SIDECARSET_CACHE_TTL_MS: '0' }, logger);
    const runtimes = Object.fromEntries(
      ADMISSION_FUNCTIONS.map((fn) => [fn, admissionRuntime(fn, { current: secret }, sources, jsonLogger({ function: fn }, sink))]),
    );
    const app = buildApp({ runtimes, https: { cert: tls.certPem, key: tls.keyPem }, readiness: () => Promise.resolve({ ready: true, message: '' }) });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    if (address === null || typeof address !== 'object') throw new Error('server has no address');
    const serverUrl = `https://127.0.0.1:${address.port}`;
    const targets = Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, { url: `${serverUrl}/${fn}/${secret}` }])) as Record<(typeof ADMISSION_FUNCTIONS)[number], { url: string }>;
    const manifests = renderWebhookConfigurations({ targets, caPem: tls.caPem, ...(options.podFailurePolicy ? { podFailurePolicy: options.podFailurePolicy } : {}) });
    await cp.apply(manifests.map((m) => stringify(m)).join('---\n'));
    return {
      cp,
      serverUrl,
      secret,
      caPem: tls.caPem,
      logs,
      stop: async () => {
        await app.close();
        await cp.stop();
        await rm(tlsDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await cp.stop();
    await rm(tlsDir, { recursive: true, force: true });
    throw error;
  }
}
