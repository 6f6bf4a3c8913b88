/**
 * Kruise's SidecarSet and pod webhooks, answered by Kruise's own handler
 * code (the conformance reference) behind a TLS server the API server
 * calls, and Kruise's two webhook configurations as its manager keeps them
 * (the entries in `webhooks` and a copy in the `template` annotation it
 * rebuilds them from). With these installed, a cluster holds what Kruise's
 * webhooks wrote, and the migration steps that add or remove webhook
 * entries (docs/MIGRATION.md, steps 4 and 5) run against the API server's
 * real admission chain: its mutating configurations are called in name
 * order, Kruise's before this project's `serverless-sidecarset`.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { generateServingTls } from '../../functions/server/tls.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { KRUISE_MUTATING_CONFIGURATION, KRUISE_VALIDATING_CONFIGURATION } from '../../lib/migrate/webhook-entries.ts';
import type { KruiseReference } from '../../testkit/conformance/kruise-reference.ts';
import type { ReferenceRequest } from '../../testkit/conformance/reference-protocol.ts';

/** Kruise's handler paths (its kubebuilder markers) and what the reference runs for each. */
const ROUTES: Readonly<Record<string, 'inject' | 'default' | 'validate'>> = {
  '/mutate-pod': 'inject',
  '/mutate-apps-kruise-io-sidecarset': 'default',
  '/validate-apps-kruise-io-sidecarset': 'validate',
};

/** An object as Kruise's fake client takes it: what only a server sets is left out. */
export function forKruise<T>(object: T): T {
  const copy = structuredClone(object) as T & { metadata?: Record<string, unknown> };
  if (copy.metadata !== undefined) {
    delete copy.metadata.resourceVersion;
    delete copy.metadata.managedFields;
  }
  return copy;
}

export interface KruiseWebhooks {
  /** Kruise's two configurations, as its manager writes them, pointing at this server. */
  configurations(): { mutating: JsonObject; validating: JsonObject };
  /** Requests answered, by handler (what the API server actually called). */
  calls: Record<'inject' | 'default' | 'validate', number>;
  close(): Promise<void>;
}

/**
 * Serves Kruise's handlers: each AdmissionReview is answered by the
 * reference with the cluster's SidecarSets (read in `setsPath`'s version,
 * the one the Kruise release reads) and Namespaces as the API server holds
 * them now, as Kruise's manager answers from its informers.
 */
export async function startKruiseWebhooks(cp: ControlPlane, kruise: KruiseReference, setsPath: string): Promise<KruiseWebhooks> {
  const tls = generateServingTls();
  const calls = { inject: 0, default: 0, validate: 0 };
  const list = async (path: string): Promise<JsonObject[]> => {
    const res = await cp.request('admin', 'GET', path);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.body.slice(0, 300)}`);
    return (JSON.parse(res.body) as { items: JsonObject[] }).items.map(forKruise);
  };
  const answer = async (op: 'inject' | 'default' | 'validate', request: JsonObject): Promise<JsonObject> => {
    const operation = request.operation as 'CREATE' | 'UPDATE';
    let asked: ReferenceRequest;
    if (op === 'inject') {
      asked = { op, operation: 'CREATE', namespace: typeof request.namespace === 'string' ? request.namespace : '', object: request.object, cluster: { sidecarSets: await list(setsPath), namespaces: await list('/api/v1/namespaces') } };
    } else {
      const name = (request.object as { metadata?: { name?: string } } | undefined)?.metadata?.name;
      const others = op === 'validate' ? (await list(setsPath)).filter((s) => (s.metadata as { name?: string }).name !== name) : [];
      asked = { op, operation, object: request.object, ...(request.oldObject ? { oldObject: request.oldObject } : {}), cluster: { sidecarSets: others, namespaces: await list('/api/v1/namespaces') } };
    }
    const got = await kruise.ask(asked);
    if (got.error !== undefined) throw new Error(`Kruise's ${op} handler failed: ${got.error}`);
    calls[op]++;
    const response: JsonObject = { uid: request.uid, allowed: got.allowed === true };
    if (got.allowed !== true) response.status = { code: got.code ?? 403, message: got.message ?? '' };
    if (got.patch !== undefined && got.patch.length > 0) {
      response.patchType = 'JSONPatch';
      response.patch = Buffer.from(JSON.stringify(got.patch)).toString('base64');
    }
    return response;
  };
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const op = ROUTES[(req.url ?? '').split('?')[0] ?? ''];
      void (async () => {
        if (op === undefined) throw new Error(`no Kruise handler at ${req.url ?? ''}`);
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: JsonObject };
        const response = await answer(op, review.request);
        return JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response });
      })().then(
        (body) => {
          res.writeHead(200, { 'content-type': 'application/json' }).end(body);
        },
        (error: unknown) => {
          // The API server reports a webhook's 500 as the call's failure: the test sees it.
          res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const caBundle = Buffer.from(tls.caPem).toString('base64');
  const entry = (name: string, path: string, rules: JsonObject[]): JsonObject => ({
    name,
    admissionReviewVersions: ['v1', 'v1beta1'],
    clientConfig: { url: `${base}${path}`, caBundle },
    failurePolicy: 'Fail',
    sideEffects: 'None',
    timeoutSeconds: 30,
    rules,
  });
  const sidecarSetRule = { apiGroups: ['apps.kruise.io'], apiVersions: ['v1alpha1', 'v1beta1'], operations: ['CREATE', 'UPDATE'], resources: ['sidecarsets'] };
  const withTemplate = (kind: string, name: string, webhooks: JsonObject[]): JsonObject => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata: { name, annotations: { template: JSON.stringify(webhooks) } },
    webhooks,
  });
  return {
    calls,
    configurations: () => ({
      mutating: withTemplate('MutatingWebhookConfiguration', KRUISE_MUTATING_CONFIGURATION, [
        // Not a SidecarSet entry: the migration leaves it (no CloneSet CRD here, so it is never called).
        entry('mcloneset.kb.io', '/mutate-apps-kruise-io-v1alpha1-cloneset', [{ apiGroups: ['apps.kruise.io'], apiVersions: ['v1alpha1'], operations: ['CREATE', 'UPDATE'], resources: ['clonesets'] }]),
        entry('mpod.kb.io', '/mutate-pod', [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }]),
        entry('msidecarset.kb.io', '/mutate-apps-kruise-io-sidecarset', [sidecarSetRule]),
      ]),
      validating: withTemplate('ValidatingWebhookConfiguration', KRUISE_VALIDATING_CONFIGURATION, [entry('vsidecarset.kb.io', '/validate-apps-kruise-io-sidecarset', [sidecarSetRule])]),
    }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
