/**
 * The status reconciler against a real kube-apiserver, as a user sees it:
 * pods created through the webhook, their status set as a kubelet would,
 * then `kubectl get sidecarsets` (the same Table request kubectl makes)
 * shows MATCHED, UPDATED and READY. The reconciles run as status-sync's own
 * identity of infra/k8s/rbac.yaml (sidecarset-status-sync, under its
 * pod-writes policy), so a missing permission or a refused write fails here.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { request as httpsRequest } from 'node:https';
import type { Pod } from '../../lib/kube/types.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import type { ResyncResult } from '../../lib/status-sync/resync.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import { currentRevisionName } from '../../lib/sidecarset/revisions.ts';
import { composeStatusSync, type StatusSyncRuntime } from '../../functions/status-sync/compose.ts';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { capturingLogger } from '../../testkit/reviews.ts';
import { emfRecorder } from '../../lib/metrics/emf-recorder.ts';
import { countRequests } from '../../scripts/bench/api-requests.ts';
import { checkEmfDocument, extractedMetrics } from '../metrics/emf-check.ts';

const SETS = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
const PODS = '/api/v1/namespaces/shop/pods';
let stack: LocalStack;
let statusSync: StatusSyncRuntime;
/** The EMF lines the reconciles wrote, as the Lambda writes them to standard output. */
const metricLines: string[] = [];

/** A GET as the admin with the Accept header kubectl sends for `get` (a server-side Table). */
function getTable(path: string): Promise<{ columns: { name: string; priority?: number }[]; rows: unknown[][] }> {
  const url = new URL(`${stack.cp.url}${path}`);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      { ca: stack.cp.caCert, headers: { authorization: `Bearer ${stack.cp.adminToken}`, accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const table = JSON.parse(Buffer.concat(chunks).toString()) as { kind: string; columnDefinitions: { name: string; priority?: number }[]; rows: { cells: unknown[] }[] };
          if (table.kind !== 'Table') reject(new Error(`not a Table: ${JSON.stringify(table)}`));
          resolve({ columns: table.columnDefinitions, rows: table.rows.map((r) => r.cells) });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** What `kubectl get sidecarsets` shows, without AGE: kubectl hides columns of priority above 0 unless `-o wide`. */
async function kubectlGetSidecarSets(): Promise<Record<string, unknown>[]> {
  const { columns, rows } = await getTable(SETS);
  const shown = (c: { name: string; priority?: number }): boolean => (c.priority ?? 0) === 0 && c.name !== 'Age' && c.name !== 'AGE';
  return rows.map((cells) => Object.fromEntries(columns.flatMap((c, i) => (shown(c) ? [[c.name, cells[i]]] : []))));
}

async function admin(method: string, path: string, body?: unknown, contentType?: string): Promise<unknown> {
  const res = await stack.cp.request('admin', method, path, body, contentType);
  // The webhook server's last lines say why an admission failed.
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body}\nwebhook log:\n${stack.logs.slice(-5).join('\n')}`);
  return JSON.parse(res.body);
}

const webPod = (name: string): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } });

/** Sets the pod's status as a kubelet would on the pods/status subresource: Running, and Ready or not. */
async function kubeletReports(name: string, ready: boolean): Promise<void> {
  const pod = (await admin('GET', `${PODS}/${name}`)) as Pod;
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const containerStatuses = (pod.spec?.containers ?? []).map((c) => ({ name: c.name, image: c.image, imageID: '', ready, restartCount: 0, started: true, state: { running: { startedAt: now } } }));
  const status = { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: now }], containerStatuses };
  await admin('PATCH', `${PODS}/${name}/status`, { status }, 'application/merge-patch+json');
}

const WEBHOOKS = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/serverless-sidecarset';

/**
 * Creates `pod` after the SidecarSet, as if the pod-inject webhook were down
 * (failurePolicy Ignore): the webhook is taken out of the configuration, the
 * pod is created once a dry run shows the API server no longer calls it (it
 * picks up configuration changes within moments), and the webhook is put back.
 */
async function createWhilePodInjectIsDown(pod: Pod): Promise<void> {
  // Timestamps have one-second resolution: the pod must be created in a later second than the set.
  await new Promise((r) => setTimeout(r, 1100));
  const original = (await admin('GET', WEBHOOKS)) as { webhooks: { name: string }[] };
  const index = original.webhooks.findIndex((w) => w.name.startsWith('pod-inject.'));
  await admin('PATCH', WEBHOOKS, [{ op: 'test', path: `/webhooks/${index}/name`, value: original.webhooks[index]?.name }, { op: 'remove', path: `/webhooks/${index}` }], 'application/json-patch+json');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const dry = (await admin('POST', `${PODS}?dryRun=All`, pod)) as Pod;
    if (dry.spec?.containers.length === 1) break;
    if (Date.now() > deadline) throw new Error('the API server still calls the pod-inject webhook 30 s after it was removed');
    await new Promise((r) => setTimeout(r, 100));
  }
  await admin('POST', PODS, pod);
  const current = (await admin('GET', WEBHOOKS)) as { webhooks: unknown[] };
  await admin('PUT', WEBHOOKS, { ...current, webhooks: original.webhooks });
}

async function storedSet(): Promise<SidecarSet> {
  return (await admin('GET', `${SETS}/log-agent`)) as SidecarSet;
}

describeWithControlPlane('the status reconciler on a real API server', () => {
  let first: ResyncResult;

  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    // The webhook path: every pod through pod-inject, which createWhilePodInjectIsDown takes out to make a pod it missed.
    stack = await startLocalStack({ injection: 'webhook' });
    await admin('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
    // Created before the SidecarSet exists: not the set's to inject, and never reported (spec section 8).
    await admin('POST', PODS, webPod('early'));
    await admin('POST', SETS, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'log-agent' },
      spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'log-agent', image: 'fluent-bit:3.1' }] },
    });
    for (const name of ['web-1', 'web-2']) {
      const pod = (await admin('POST', PODS, webPod(name))) as Pod;
      expect(pod.spec?.containers.map((c) => c.name)).toEqual(['log-agent', 'app']);
    }
    await kubeletReports('web-1', true);
    await kubeletReports('web-2', false);
    await createWhilePodInjectIsDown(webPod('late'));
    const metrics = emfRecorder({ namespace: 'ServerlessSidecarSet', write: (line) => metricLines.push(line) });
    statusSync = await composeStatusSync({ KUBECONFIG_CONTENT: stack.cp.kubeconfig('status-sync') }, { logger: capturingLogger().logger, metrics });
    first = await statusSync.resync();
  }, 30 * 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  it('writes the status as the functions identity, without an error', () => {
    expect(first).toMatchObject({ setsSeen: 1, podsSeen: 4, statusesWritten: 1, podListAttempts: 1, errors: [] });
  });

  it('shows MATCHED, UPDATED and READY in kubectl get sidecarsets', async () => {
    expect(await kubectlGetSidecarSets()).toEqual([{ Name: 'log-agent', MATCHED: 2, UPDATED: 2, READY: 1 }]);
    const stored = await storedSet();
    // The revision registered in this reconcile (rollout.md §2.1) is the one the spec names.
    expect(stored.status).toEqual({ observedGeneration: 1, matchedPods: 2, updatedPods: 2, readyPods: 1, updatedReadyPods: 1, latestRevision: currentRevisionName(stored), collisionCount: 0 });
  });

  it('reports the pod created after the set that it never injected, not the one from before the set, in the result, as a Warning event on the SidecarSet and one on the pod', async () => {
    expect(first.notInjected).toEqual({ 'log-agent': 1 });
    const uid = (await storedSet()).metadata?.uid;
    const events = (await admin('GET', `/api/v1/events?fieldSelector=${encodeURIComponent('involvedObject.kind=SidecarSet,involvedObject.name=log-agent')}`)) as {
      items: { type: string; reason: string; message: string; involvedObject: { uid: string }; source: { component: string } }[];
    };
    // Every pod is updated (injected with the current sidecars) but one is not ready (no kubelet runs here): not
    // finished, but a process that first finds a set so has seen no change, so it tells no RolloutProgressing
    // (ROLLOUT.md: a cold start would otherwise post one per such set). The metrics below still say Progressing.
    expect(events.items.map((event) => event.reason).sort()).toEqual(['PodsNotInjected']);
    const notInjected = events.items.filter((event) => event.reason === 'PodsNotInjected');
    expect(notInjected).toEqual([
      expect.objectContaining({ type: 'Warning', reason: 'PodsNotInjected', involvedObject: expect.objectContaining({ uid }), source: { component: 'sidecarset-status-sync' } }),
    ]);
    expect(notInjected[0]?.message).toMatch(/^1 pod matches this SidecarSet but was created without its sidecars .*, in 1 namespace; recreate them to inject\. /);
    // Named only in its own namespace, on the pod itself.
    const inShop = (await admin('GET', `/api/v1/namespaces/shop/events?fieldSelector=${encodeURIComponent('reason=PodNotInjected')}`)) as { items: { message: string; involvedObject: { name: string } }[] };
    expect(inShop.items.map((e) => [e.involvedObject.name, e.message])).toEqual([['late', expect.stringMatching(/^1 pod in this namespace matches SidecarSet log-agent .*: late$/)]]);
  });

  it("writes the resync's metrics and the set's as EMF lines CloudWatch accepts", () => {
    expect(metricLines).toHaveLength(3);
    for (const line of metricLines) expect(checkEmfDocument(line)).toEqual([]);
    const [resyncLine, setLine, unavailableLine] = metricLines.map((line) => Object.fromEntries(extractedMetrics(line).map((m) => [`${Object.values(m.dimensions).join('/')} ${m.name}`, m.value])));
    expect(resyncLine).toMatchObject({ 'status-sync StatusesWritten': 1, 'status-sync PodsNotInjected': 1, 'status-sync PodsUpdated': 0, 'status-sync ResyncErrors': 0, 'status-sync PassErrors': 0 });
    expect(resyncLine?.['status-sync ApiRequests']).toBeGreaterThanOrEqual(4);
    expect(resyncLine?.['status-sync ResyncDuration']).toBeGreaterThan(0);
    // The deprecated name, for one release, with the same value.
    expect(resyncLine?.['status-sync PassDuration']).toBe(resyncLine?.['status-sync ResyncDuration']);
    // Every pod updated, one not ready: not finished (finished is updated and ready), and why, by the kubelet's reason.
    expect(setLine).toEqual({
      'log-agent MatchedPods': 2,
      'log-agent UpdatedPods': 2,
      'log-agent ReadyPods': 1,
      'log-agent UpdatedReadyPods': 1,
      'log-agent NotInjectedPods': 1,
      'log-agent/Progressing RolloutState': 1,
    });
    expect(unavailableLine).toEqual({ 'log-agent/Restarting UnavailablePods': 1 });
  });

  it('counts the API requests of a resync as the API server counts them', async () => {
    metricLines.length = 0;
    const { requests } = await countRequests(stack.cp, () => statusSync.resync());
    const served = requests.reduce((sum, [, n]) => sum + n, 0);
    const apiRequests = extractedMetrics(metricLines[0] ?? '').find((m) => m.name === 'ApiRequests')?.value;
    expect(served).toBeGreaterThan(0);
    expect(apiRequests).toBe(served);
  });

  it('writes nothing on a second resync: the resourceVersion does not change', async () => {
    const before = (await storedSet()).metadata?.resourceVersion;
    const second = await statusSync.resync();
    expect(second).toMatchObject({ statusesWritten: 0, statusesUnchanged: 1, errors: [] });
    expect((await storedSet()).metadata?.resourceVersion).toBe(before);
  });

  it('counts a pod that becomes ready on the next resync', async () => {
    await kubeletReports('web-2', true);
    expect(await statusSync.resync()).toMatchObject({ statusesWritten: 1, errors: [] });
    expect(await kubectlGetSidecarSets()).toEqual([{ Name: 'log-agent', MATCHED: 2, UPDATED: 2, READY: 2 }]);
  });

  it('drops UPDATED after the sidecar image changes, and records the new generation', async () => {
    await admin('PATCH', `${SETS}/log-agent`, [{ op: 'replace', path: '/spec/containers/0/image', value: 'fluent-bit:3.2' }], 'application/json-patch+json');
    expect(await statusSync.resync()).toMatchObject({ statusesWritten: 1, errors: [] });
    expect(await kubectlGetSidecarSets()).toEqual([{ Name: 'log-agent', MATCHED: 2, UPDATED: 0, READY: 2 }]);
    expect((await storedSet()).status).toMatchObject({ observedGeneration: 2, updatedReadyPods: 0 });
  });
});
