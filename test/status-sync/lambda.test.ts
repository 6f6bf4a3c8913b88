/**
 * The status-sync Lambda as Lambda runs it: composed once from the
 * environment, invoked with EventBridge scheduled events, against a local
 * server speaking the Kubernetes API.
 */
import { describe, expect, it } from '@jest/globals';
import type { ScheduledEvent } from 'aws-lambda';
import { ConfigurationError } from '../../functions/shared/compose.ts';
import { statusSyncLambda } from '../../functions/status-sync/lambda.ts';
import { capturingLogger, fixedSecret } from '../../testkit/reviews.ts';
import { apiStatus } from '../adapters/fake-api-server.ts';
import { fakeOneSetCluster, isLeaseRequest } from './fake-cluster.ts';
import { hashOf, listedPod, storedSet } from '../../testkit/status-sync-objects.ts';
import { currentRevisionName } from '../../lib/sidecarset/revisions.ts';
import { emfRecorder } from '../../lib/metrics/emf-recorder.ts';
import { checkEmfDocument, extractedMetrics } from '../metrics/emf-check.ts';

const event: ScheduledEvent = {
  version: '0',
  id: '53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: '2026-11-30T12:00:00Z',
  region: 'eu-west-1',
  resources: ['arn:aws:events:eu-west-1:123456789012:rule/sidecarset-status-sync'],
  detail: {},
};
const context = { awsRequestId: 'req-1', getRemainingTimeInMillis: () => 60_000 };

const set = storedSet('log-agent');
const fake = fakeOneSetCluster(set, [listedPod({ name: 'a', injected: { 'log-agent': hashOf(set) } }), listedPod({ name: 'b', namespace: 'shop' })]);

describe('the status-sync Lambda', () => {
  it('runs one resync per scheduled event, returns its result and logs it as one JSON line', async () => {
    const { logger, entries } = capturingLogger();
    const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger } });
    const result = await handler(event, context);
    expect(result).toMatchObject({ setsSeen: 1, podsSeen: 2, statusesWritten: 1, errors: [], notInjected: { 'log-agent': 1 } });
    const revision = currentRevisionName(set);
    expect(fake.seen.filter((r) => r.method === 'PATCH').map((r) => r.body)).toEqual([
      { metadata: { resourceVersion: '1' }, status: { observedGeneration: 1, matchedPods: 1, updatedPods: 1, readyPods: 1, updatedReadyPods: 1, latestRevision: revision, collisionCount: 0 } },
    ]);
    // The first revision, then the Events about the uninjected pod: on the set (in default), and on the pod in its
    // namespace (a finished rollout at first sight is nothing new).
    expect(fake.seen.filter((r) => r.method === 'POST' && !isLeaseRequest(r)).map((r) => {
      const body = r.body as { reason?: string; metadata?: { name?: string } };
      return body.reason === undefined ? body.metadata?.name : `${r.url.split('/')[4] ?? ''} ${body.reason}`;
    })).toEqual([revision, 'default PodsNotInjected', 'shop PodNotInjected']);
    // Each set's counts are metrics, not part of the line.
    const logged: Partial<typeof result> = { ...result };
    delete logged.sets;
    expect(entries()).toEqual([{ ...logged, time: expect.any(String), level: 'info', message: 'resync', requestId: 'req-1', scheduledAt: '2026-11-30T12:00:00Z' }]);
  });

  it("writes the resync's metrics and each set's as EMF lines, counting the requests the resync sent", async () => {
    const lines: string[] = [];
    const metrics = emfRecorder({ namespace: 'ServerlessSidecarSet', write: (line) => lines.push(line) });
    const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger: capturingLogger().logger, metrics } });
    await handler(event, context);
    for (const line of lines) expect(checkEmfDocument(line)).toEqual([]);
    const values = lines.map((line) => Object.fromEntries(extractedMetrics(line).map((m) => [`${Object.values(m.dimensions).join('/')} ${m.name}`, m.value])));
    expect(values).toEqual([
      {
        'status-sync ResyncDuration': expect.any(Number),
        // As the stand-in saw them: which version of SidecarSets is served, the sets, the pods, the revisions, the revision created, the status, the two Events.
        'status-sync ApiRequests': fake.seen.filter((r) => !isLeaseRequest(r)).length,
        'status-sync StatusesWritten': 1,
        'status-sync PodsUpdated': 0,
        'status-sync PodsFlipped': 0,
        // No set asks for repair: no request was made for it either.
        'status-sync PodsEvicted': 0,
        'status-sync PodsNotInjected': 1,
        'status-sync ResyncErrors': 0,
        'status-sync WebhooksRepointed': 0,
        'status-sync WebhooksNotDeployed': 0,
        // The deprecated names, for one release.
        'status-sync PassDuration': expect.any(Number),
        'status-sync PassErrors': 0,
      },
      {
        'log-agent MatchedPods': 1,
        'log-agent UpdatedPods': 1,
        'log-agent ReadyPods': 1,
        'log-agent UpdatedReadyPods': 1,
        'log-agent NotInjectedPods': 1,
        'log-agent/Finished RolloutState': 1,
      },
    ]);
    expect(values[0]?.['status-sync PassDuration']).toBe(values[0]?.['status-sync ResyncDuration']);
    // The heartbeat Lease is renewed after the reconcile, outside its count.
    expect(fake.seen.filter((r) => !isLeaseRequest(r))).toHaveLength(8);
    // The stand-in serves no v1beta1 (a Kruise 1.8 CRD): the sets are read, and their status written, as v1alpha1.
    expect(fake.seen.filter((r) => r.url.startsWith('/apis/apps.kruise.io/')).map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /apis/apps.kruise.io/v1beta1',
      'GET /apis/apps.kruise.io/v1alpha1/sidecarsets?limit=4',
      'PATCH /apis/apps.kruise.io/v1alpha1/sidecarsets/log-agent/status',
    ]);
  });

  it('renews the heartbeat Lease after each scheduled resync, held by the function, valid three schedule intervals; not after an admitted change\'s reconcile', async () => {
    const env = { KUBECONFIG_CONTENT: fake.kubeconfig(), AWS_LAMBDA_FUNCTION_NAME: 'stack-StatusSync-1', STATUS_SYNC_INTERVAL_MS: '60000' };
    const handler = await statusSyncLambda({ env, overrides: { logger: capturingLogger().logger }, continueWith: () => Promise.resolve() });
    await handler(event, context);
    await handler(event, context);
    await handler({ kind: 'SidecarSetAdmitted', sidecarSet: 'log-agent', uid: '', operation: 'UPDATE', resourceVersion: '0' }, context);
    const leases = fake.seen.filter(isLeaseRequest);
    expect(leases.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /apis/coordination.k8s.io/v1/namespaces/kruise-system/leases/serverless-sidecarset-status-sync',
      'POST /apis/coordination.k8s.io/v1/namespaces/kruise-system/leases',
      'GET /apis/coordination.k8s.io/v1/namespaces/kruise-system/leases/serverless-sidecarset-status-sync',
      'PUT /apis/coordination.k8s.io/v1/namespaces/kruise-system/leases/serverless-sidecarset-status-sync',
    ]);
    expect(leases.at(-1)?.body).toMatchObject({ metadata: { name: 'serverless-sidecarset-status-sync', namespace: 'kruise-system' }, spec: { holderIdentity: 'stack-StatusSync-1', leaseDurationSeconds: 180, renewTime: expect.stringMatching(/^\d{4}-.*\.\d{6}Z$/) } });
  });

  it('logs a heartbeat Lease it cannot renew as a warning, and the resync as it went', async () => {
    const { logger, entries } = capturingLogger();
    const route = fake.route;
    fake.route = (req) => (isLeaseRequest(req) && req.method === 'POST' ? apiStatus(403, 'Forbidden', 'leases is forbidden') : route(req));
    const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger } });
    const result = await handler(event, context);
    expect(result.errors).toEqual([]);
    expect(entries().map((e) => [e.level, e.message, e.failuresInARow])).toEqual([['warn', 'the heartbeat Lease was not renewed', 1], ['info', 'resync', undefined]]);
    await handler(event, context);
    expect(entries().filter((e) => e.level === 'warn').map((e) => [e.failuresInARow, e.error])).toEqual([
      [1, expect.stringContaining('leases is forbidden')],
      [2, expect.stringContaining('leases is forbidden')],
    ]);
  });

  it('runs the admitted set\'s reconcile at once for a SidecarSetAdmitted event, after seeing the change stored', async () => {
    const { logger, entries } = capturingLogger();
    const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger } });
    const result = await handler({ kind: 'SidecarSetAdmitted', sidecarSet: 'log-agent', uid: '', operation: 'UPDATE', resourceVersion: '0' }, context);
    expect(result.controller).toMatchObject({ reconciles: 1, errors: [], unfinished: [] });
    const urls = fake.seen.map((r) => `${r.method} ${r.url.split('?')[0] ?? ''}`);
    // One set's reconcile: no list of every SidecarSet, and pods listed by the set's selector.
    expect(urls).not.toContain('GET /apis/apps.kruise.io/v1alpha1/sidecarsets');
    expect(fake.seen.some((r) => r.url.startsWith('/api/v1/pods?') && r.url.includes('labelSelector=app%3Dweb'))).toBe(true);
    expect(entries()).toEqual([expect.objectContaining({ level: 'info', message: 'controller', admitted: expect.objectContaining({ sidecarSet: 'log-agent' }) })]);
  });

  it('logs and drops a malformed SidecarSetAdmitted event without calling the API server', async () => {
    const { logger, entries } = capturingLogger();
    const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger } });
    fake.seen.length = 0;
    expect(await handler({ kind: 'SidecarSetAdmitted', operation: 'DELETE' } as unknown as Parameters<typeof handler>[0], context)).toEqual({});
    expect(fake.seen).toEqual([]);
    expect(entries()).toEqual([expect.objectContaining({ level: 'error', message: 'status-sync event refused', error: expect.stringContaining('sidecarSet') })]);
  });

  it('logs a resync that could not list pods at error level and still returns its result', async () => {
    const { logger, entries } = capturingLogger();
    const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger } });
    const list = fake.route;
    fake.route = (req) => (req.url.startsWith('/api/v1/pods') ? apiStatus(403, 'Forbidden', 'pods is forbidden') : list(req));
    const result = await handler(event, context);
    expect(result.errors).toEqual([{ operation: 'list pods', message: 'the API server answered 403: pods is forbidden; no status is written this resync' }]);
    expect(fake.seen.some((r) => r.method === 'PATCH')).toBe(false);
    expect(entries()).toEqual([expect.objectContaining({ level: 'error', message: 'resync' })]);
  });

  it('fails its cold start without cluster credentials', async () => {
    const start = statusSyncLambda({ env: {}, overrides: { logger: capturingLogger().logger } });
    await expect(start).rejects.toThrow(ConfigurationError);
    await expect(statusSyncLambda({ env: {} })).rejects.toThrow(/no cluster credentials/);
  });

  it('starts with the deprecated ROLLOUT_PACE_MS and REPAIR_MAX_EVICTIONS_PER_PASS, one warning each at the cold start naming the new name', async () => {
    const { logger, entries } = capturingLogger();
    await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig(), ROLLOUT_PACE_MS: '500', REPAIR_MAX_EVICTIONS_PER_PASS: '2' }, overrides: { logger } });
    expect(entries().map((e) => [e.level, e.variable, e.replacement])).toEqual([
      ['warn', 'ROLLOUT_PACE_MS', 'REQUEUE_AFTER_MS'],
      ['warn', 'REPAIR_MAX_EVICTIONS_PER_PASS', 'REPAIR_MAX_EVICTIONS_PER_RESYNC'],
    ]);
  });

  it('refuses to start with a renamed variable set under both names to different values, naming both', async () => {
    const start = statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig(), REQUEUE_AFTER_MS: '500', ROLLOUT_PACE_MS: '1000' }, overrides: { logger: capturingLogger().logger } });
    await expect(start).rejects.toThrow('REQUEUE_AFTER_MS is "500" but ROLLOUT_PACE_MS, its deprecated name, is "1000": unset ROLLOUT_PACE_MS');
  });
});

describe('the status-sync Lambda rotating the webhook secret', () => {
  const secret = fixedSecret('status-sync rotation');
  const memoryStore = (text: string) => {
    const store = { text, read: () => Promise.resolve(store.text), write: (next: string) => { store.text = next; return Promise.resolve(); } };
    return store;
  };

  it('runs a rotation step after the resync and reports it: not installed is a skip, not an error', async () => {
    const { logger, entries } = capturingLogger();
    const store = memoryStore(JSON.stringify({ current: secret }));
    const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger, secretStore: store } });
    const result = await handler({ ...event, detail: { deployedWebhookUrls: ['https://aaa.lambda-url.eu-west-1.on.aws/'] } }, context);
    expect(result.secretRotation).toEqual({ step: 'skipped', detail: 'the webhook configurations are not installed' });
    expect(result.errors).toEqual([]);
    expect(fake.seen.map((r) => `${r.method} ${r.url}`)).toContain('GET /apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/serverless-sidecarset');
    expect(store.text).toBe(JSON.stringify({ current: secret }));
    expect(entries().at(-1)).toMatchObject({ level: 'info', message: 'resync', secretRotation: { step: 'skipped' } });
  });

  it('writes no secret on a scheduled event without the deployed URLs, and refuses a malformed list with a clear line', async () => {
    const { logger, entries } = capturingLogger();
    const store = memoryStore(JSON.stringify({ current: secret }));
    const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger, secretStore: store } });
    expect((await handler(event, context)).secretRotation).toEqual({ step: 'waiting', detail: 'the deployed webhook URLs are not known to this resync: no secret is written' });
    const malformed = await handler({ ...event, detail: { deployedWebhookUrls: ['http://evil.example/x'] } }, context);
    expect(malformed.secretRotation?.step).toBe('waiting');
    expect(entries().find((e) => e.message === "the scheduled event's deployed webhook URLs refused")).toMatchObject({
      level: 'error',
      error: 'the scheduled event\'s detail.deployedWebhookUrls: "http://evil.example/x" is not a deployed webhook URL prefix (https://host/path/, ending in /, without query, fragment or user info)',
    });
    expect(store.text).toBe(JSON.stringify({ current: secret }));
  });

  it('counts a failed step among the resync errors, so the line is logged at error level, without the secret', async () => {
    const { logger, entries } = capturingLogger();
    const store = { read: () => Promise.reject(new Error('AccessDeniedException: not authorized')), write: () => Promise.resolve() };
    const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger, secretStore: store } });
    const result = await handler(event, context);
    expect(result.errors).toEqual([{ operation: 'rotate the webhook secret', message: 'AccessDeniedException: not authorized' }]);
    expect(entries().at(-1)).toMatchObject({ level: 'error', message: 'resync' });
  });

  it('does not rotate when rotation is off or the secret is not stored', async () => {
    const off = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig(), WEBHOOK_SECRET_ROTATION_PERIOD_MS: '0' }, overrides: { logger: capturingLogger().logger, secretStore: memoryStore(secret) } });
    expect((await off(event, context)).secretRotation).toBeUndefined();
    const unstored = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger: capturingLogger().logger } });
    expect((await unstored(event, context)).secretRotation).toBeUndefined();
  });

  it('refuses to start with a rotation period shorter than a rotation, naming the variable', async () => {
    await expect(statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig(), WEBHOOK_SECRET_ROTATION_PERIOD_MS: '60000' }, overrides: { secretStore: memoryStore(secret) } })).rejects.toThrow(
      'WEBHOOK_SECRET_ROTATION_PERIOD_MS must be whole milliseconds from 180000 to 31622400000, or 0 (off); got "60000"',
    );
  });
});
