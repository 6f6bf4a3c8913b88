/**
 * functions/shared/cluster.ts: the functions that read the cluster refuse
 * to start without one set of credentials, and read the Kubernetes API (a
 * local server on 127.0.0.1 speaking its protocol) as the API server answers.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { CallerSecretError } from '../../lib/auth/caller-auth.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { admissionLambda } from '../../functions/shared/admission-lambda.ts';
import { clusterSources } from '../../functions/shared/cluster.ts';
import { ConfigurationError } from '../../functions/shared/compose.ts';
import { newRevision } from '../../lib/sidecarset/revisions.ts';
import { sidecar, sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { appPod, capturingLogger, functionUrlEvent, podReview, sidecarSetReview, userSidecarSet } from '../../testkit/reviews.ts';
import { apiStatus, startFakeApiServer, type FakeApiServer, type Route } from '../adapters/fake-api-server.ts';
import { secretEnv, structured } from './function-url-result.ts';

describe('the functions that read the cluster', () => {
  it.each(['pod-inject', 'sidecarset-validate'] as const)('%s refuses to start without cluster credentials, naming the variables', async (fn) => {
    const start = admissionLambda(fn, { env: secretEnv, overrides: { logger: capturingLogger().logger }, cluster: clusterSources });
    await expect(start).rejects.toThrow(ConfigurationError);
    await expect(start).rejects.toThrow(
      'no cluster credentials: set KUBECONFIG (a file), KUBECONFIG_CONTENT (its YAML) or KUBECONFIG_SECRET_ARN (a Secrets Manager secret)',
    );
  });

  it.each(['pod-inject', 'sidecarset-validate'] as const)('%s refuses to start with two sources of credentials', async (fn) => {
    const start = admissionLambda(fn, {
      env: { ...secretEnv, KUBECONFIG: '/kube/config', KUBECONFIG_CONTENT: 'apiVersion: v1' },
      overrides: { logger: capturingLogger().logger },
      cluster: clusterSources,
    });
    await expect(start).rejects.toThrow('set only one of KUBECONFIG, KUBECONFIG_CONTENT');
  });

  it('pod-inject refuses to start when its kubeconfig file does not exist, naming it', async () => {
    const start = admissionLambda('pod-inject', {
      env: { ...secretEnv, KUBECONFIG: '/nonexistent/kubeconfig.yaml' },
      overrides: { logger: capturingLogger().logger },
      cluster: clusterSources,
    });
    await expect(start).rejects.toThrow('kubeconfig from file /nonexistent/kubeconfig.yaml: the file cannot be read');
  });

  it.each(['pod-inject', 'sidecarset-validate'] as const)('%s refuses to start with a revision namespace that is not a namespace name, naming the variable', async (fn) => {
    const start = admissionLambda(fn, {
      env: { ...secretEnv, KUBECONFIG_CONTENT: 'apiVersion: v1', SIDECARSET_REVISION_NAMESPACE: 'Kruise_System' },
      overrides: { logger: capturingLogger().logger },
      cluster: clusterSources,
    });
    await expect(start).rejects.toThrow(/^SIDECARSET_REVISION_NAMESPACE must be a namespace name .*; got "Kruise_System"$/);
  });

  it('checks the caller secret before the cluster credentials', async () => {
    await expect(admissionLambda('pod-inject', { env: {}, cluster: clusterSources })).rejects.toThrow(CallerSecretError);
  });
});

const sidecarSetList = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSetList', metadata: { resourceVersion: '7' }, items: [sidecarSet('log-agent')] };

describe('pod-inject and sidecarset-validate against a stand-in API server', () => {
  let answer: () => ReturnType<Route> = () => ({ status: 200, body: sidecarSetList });
  let api: FakeApiServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    api = await startFakeApiServer();
    // The Kubernetes API answering the one call the functions make: list SidecarSets.
    api.route = (req) => (req.url.startsWith('/apis/apps.kruise.io/v1alpha1/sidecarsets') ? answer() : apiStatus(404, 'NotFound', 'not found'));
    env = { ...secretEnv, KUBECONFIG_CONTENT: api.kubeconfig(), SIDECARSET_CACHE_MAX_STALENESS_MS: '0' };
  });
  afterEach(() => {
    api.dropConnections();
    api.seen.length = 0;
  });
  afterAll(async () => {
    await api.close();
  });

  it('pod-inject injects the sidecars the API server lists', async () => {
    answer = () => ({ status: 200, body: sidecarSetList });
    const { logger, entries } = capturingLogger();
    const handler = await admissionLambda('pod-inject', { env, overrides: { logger }, cluster: clusterSources });
    const result = structured(await handler(functionUrlEvent({ body: JSON.stringify(podReview('uid-inject')) })));
    expect(result.statusCode).toBe(200);
    expect(result.json.response).toMatchObject({ uid: 'uid-inject', allowed: true, patchType: 'JSONPatch' });
    const pod = applyPatch(appPod(), decodePatch(result.json.response.patch)) as { spec: { containers: { name: string }[] } };
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['log-agent-sidecar', 'app']);
    // Which version is served first (the stand-in serves v1alpha1 alone, as a Kruise 1.8 CRD), then the list in it.
    expect(api.seen.map((req) => `${req.method} ${req.url}`)).toEqual(['GET /apis/apps.kruise.io/v1beta1', 'GET /apis/apps.kruise.io/v1alpha1/sidecarsets?limit=4']);
    expect(entries()).toEqual([expect.objectContaining({ function: 'pod-inject', uid: 'uid-inject', outcome: 'patched' })]);
  });

  it('pod-inject reads the sets as v1beta1 when the API server serves it (Kruise 1.9\'s CRD), never the v1alpha1 path, and injects from them', async () => {
    const beta = sidecarSet('log-agent');
    const betaList = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSetList', metadata: { resourceVersion: '9' }, items: [{ ...beta, apiVersion: 'apps.kruise.io/v1beta1' }] };
    const route = api.route;
    api.route = (req) => {
      if (req.url === '/apis/apps.kruise.io/v1beta1') return { status: 200, body: { kind: 'APIResourceList', groupVersion: 'apps.kruise.io/v1beta1', resources: [{ name: 'sidecarsets', kind: 'SidecarSet' }, { name: 'sidecarsets/status', kind: 'SidecarSet' }] } };
      if (req.url === '/apis/apps.kruise.io/v1beta1/sidecarsets?limit=4') return { status: 200, body: betaList };
      return apiStatus(404, 'NotFound', 'not found');
    };
    try {
      const handler = await admissionLambda('pod-inject', { env, overrides: { logger: capturingLogger().logger }, cluster: clusterSources });
      const result = structured(await handler(functionUrlEvent({ body: JSON.stringify(podReview('uid-beta')) })));
      const pod = applyPatch(appPod(), decodePatch(result.json.response.patch)) as { spec: { containers: { name: string }[] } };
      expect(pod.spec.containers.map((c) => c.name)).toEqual(['log-agent-sidecar', 'app']);
      expect(api.seen.map((req) => `${req.method} ${req.url}`)).toEqual(['GET /apis/apps.kruise.io/v1beta1', 'GET /apis/apps.kruise.io/v1beta1/sidecarsets?limit=4']);
    } finally {
      api.route = route;
    }
  });

  it.each([
    { fn: 'pod-inject' as const, review: podReview('uid-503') },
    { fn: 'sidecarset-validate' as const, review: sidecarSetReview('uid-503', defaultSidecarSet(userSidecarSet() as SidecarSet)) },
  ])('$fn answers 503, not a denial, when the API server fails', async ({ fn, review }) => {
    answer = () => apiStatus(500, 'InternalError', 'etcd is down');
    const { logger, entries } = capturingLogger();
    const handler = await admissionLambda(fn, { env, overrides: { logger }, cluster: clusterSources });
    const result = structured(await handler(functionUrlEvent({ body: JSON.stringify(review) })));
    expect(result.statusCode).toBe(503);
    expect(result.json).not.toHaveProperty('response');
    expect(result.json.message).toContain('etcd is down');
    expect(entries()).toEqual([expect.objectContaining({ level: 'error', function: fn, uid: 'uid-503', outcome: 'failed', statusCode: 503 })]);
  });

  it('pod-inject injects a pinned revision read from SIDECARSET_REVISION_NAMESPACE, one GET, composed as on Lambda', async () => {
    const revision = newRevision(sidecarSet('log-agent', { containers: [sidecar('log-agent-sidecar', { image: 'log-agent:0.9' })] }), 'sidecarset-history', 1, 0);
    const name = revision.metadata?.name ?? '';
    const pinning = sidecarSet('log-agent', { injectionStrategy: { revision: { revisionName: name } } });
    const route = api.route;
    api.route = (req) => {
      if (req.url.startsWith('/apis/apps.kruise.io/v1alpha1/sidecarsets')) return { status: 200, body: { ...sidecarSetList, items: [pinning] } };
      if (req.url === `/apis/apps/v1/namespaces/sidecarset-history/controllerrevisions/${name}`) return { status: 200, body: revision };
      return apiStatus(404, 'NotFound', 'not found');
    };
    try {
      const handler = await admissionLambda('pod-inject', { env: { ...env, SIDECARSET_REVISION_NAMESPACE: 'sidecarset-history' }, overrides: { logger: capturingLogger().logger }, cluster: clusterSources });
      const result = structured(await handler(functionUrlEvent({ body: JSON.stringify(podReview('uid-pinned')) })));
      expect(result.statusCode).toBe(200);
      const pod = applyPatch(appPod(), decodePatch(result.json.response.patch)) as { spec: { containers: { name: string; image: string }[] } };
      expect(pod.spec.containers[0]).toMatchObject({ name: 'log-agent-sidecar', image: 'log-agent:0.9' });
      expect(api.seen.map((req) => `${req.method} ${req.url}`)).toEqual([
        'GET /apis/apps.kruise.io/v1beta1',
        'GET /apis/apps.kruise.io/v1alpha1/sidecarsets?limit=4',
        `GET /apis/apps/v1/namespaces/sidecarset-history/controllerrevisions/${name}`,
      ]);
    } finally {
      api.route = route;
    }
  });

  it('pod-inject answers 503 inside the ?timeout= deadline when the API server hangs', async () => {
    answer = () => 'no answer';
    const handler = await admissionLambda('pod-inject', { env, overrides: { logger: capturingLogger().logger }, cluster: clusterSources });
    const started = performance.now();
    const result = structured(await handler(functionUrlEvent({ body: JSON.stringify(podReview('uid-hang')), query: 'timeout=2s' })));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(result.statusCode).toBe(503);
  });
});
