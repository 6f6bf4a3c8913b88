/**
 * Freshness on a real kube-apiserver: a pod created right after a
 * SidecarSet's CREATE or UPDATE has returned is admitted against that
 * version of the set, and a SidecarSet created right after another is
 * checked against it. No pause anywhere: each request is sent the moment the
 * previous one returned, as `kubectl apply -f set.yaml && kubectl apply -f
 * pod.yaml` does. Both entry points: the HTTPS server the API server calls, and the
 * Lambda handler composed as on AWS, each reading as the functions identity.
 *
 * Before the fix (a SidecarSet list reused for 2 s) the first round missed.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import { admissionLambda, type FunctionUrlHandler } from '../../functions/shared/admission-lambda.ts';
import { clusterSources } from '../../functions/shared/cluster.ts';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { functionUrlEvent, podReview, SECRET } from '../../testkit/reviews.ts';

const SETS = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
const NAMESPACE = 'shop';
const ROUNDS = 50;

let stack: LocalStack;
let lambda: FunctionUrlHandler;

const sidecarSet = (name: string, selector: Record<string, string>, container: string, image: string): SidecarSet => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name },
  spec: { selector: { matchLabels: selector }, containers: [{ name: container, image }] },
});

const pod = (name: string, labels: Record<string, string>): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NAMESPACE, labels },
  spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
});

async function request(method: string, path: string, body: unknown, contentType?: string): Promise<{ status: number; object: Record<string, unknown> }> {
  const res = await stack.cp.request('admin', method, path, body, contentType);
  return { status: res.status, object: JSON.parse(res.body) as Record<string, unknown> };
}

/** `name=image` of each container, in order. */
function containersOf(object: Pod): string[] {
  return (object.spec?.containers ?? []).map((c) => `${c.name}=${c.image ?? ''}`);
}

/** Creates a pod through the API server (which calls the HTTPS server) and returns its containers as stored. */
async function createPod(name: string, labels: Record<string, string>): Promise<string[]> {
  const res = await request('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, pod(name, labels));
  if (res.status !== 201) throw new Error(`creating pod ${name}: ${res.status} ${JSON.stringify(res.object).slice(0, 500)}`);
  return containersOf(res.object);
}

/** Asks the Lambda handler to inject a pod and returns its containers as the patch leaves them. */
async function injectThroughLambda(uid: string, labels: Record<string, string>): Promise<string[]> {
  const original = pod(uid, labels);
  const answer = await lambda(functionUrlEvent({ body: JSON.stringify(podReview(uid, original)), secret: SECRET }));
  if (answer.statusCode !== 200) throw new Error(`the Lambda handler answered ${answer.statusCode}: ${answer.body ?? ''}`);
  const { response } = JSON.parse(answer.body ?? '{}') as { response: { allowed: boolean; patch?: string } };
  if (!response.allowed) throw new Error(`the Lambda handler denied pod ${uid}: ${answer.body ?? ''}`);
  return containersOf(response.patch === undefined ? original : (applyPatch(original, decodePatch(response.patch)) as Pod));
}

async function createSet(set: SidecarSet): Promise<void> {
  const res = await request('POST', SETS, set);
  if (res.status !== 201) throw new Error(`creating SidecarSet ${set.metadata?.name ?? ''}: ${res.status} ${JSON.stringify(res.object).slice(0, 500)}`);
}

async function setImage(name: string, image: string): Promise<void> {
  const res = await request('PATCH', `${SETS}/${name}`, [{ op: 'replace', path: '/spec/containers/0/image', value: image }], 'application/json-patch+json');
  if (res.status !== 200) throw new Error(`updating SidecarSet ${name}: ${res.status} ${JSON.stringify(res.object).slice(0, 500)}`);
}

describeWithControlPlane('freshness: what returned before a request is what the request is admitted against', () => {
  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    // pod-inject's reads are what this guarantee is about: the policy path sees a new set only once the API server's param cache has it (docs/INJECTION-POLICY.md).
    stack = await startLocalStack({ injection: 'webhook' });
    const ns = await request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    expect(ns.status).toBe(201);
    // Composed as functions/pod-inject/handler.ts does on a cold start; its log lines are dropped.
    lambda = await admissionLambda('pod-inject', {
      env: { KUBECONFIG_CONTENT: stack.cp.kubeconfig('functions'), WEBHOOK_SECRET: SECRET },
      overrides: { logger: jsonLogger({ function: 'pod-inject' }, () => undefined) },
      cluster: clusterSources,
    });
    // A set every pod below matches: each pod must get it and the new one (the report's "one sidecar of two").
    await createSet(sidecarSet('base', { fresh: 'yes' }, 'base-agent', 'base:1'));
  }, 30 * 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  it(`injects a SidecarSet created just before the pod, ${ROUNDS} times in a row, through the API server and the Lambda handler`, async () => {
    const misses: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const labels = { fresh: 'yes', round: `r${i}` };
      await createSet(sidecarSet(`new-${i}`, { round: `r${i}` }, `agent-${i}`, `agent:${i}`));
      // Sidecars in the order of their sets' names (base before new-*), before the app container.
      const expected = ['base-agent=base:1', `agent-${i}=agent:${i}`, 'app=nginx:1.27'];
      const viaServer = await createPod(`created-${i}`, labels);
      if (viaServer.join() !== expected.join()) misses.push(`round ${i}, HTTPS server: [${viaServer.join(', ')}]`);
      // A set created after the previous request, then the Lambda handler at once.
      await createSet(sidecarSet(`new-lambda-${i}`, { round: `l${i}` }, `lambda-agent-${i}`, `agent:${i}`));
      const viaLambda = await injectThroughLambda(`lambda-${i}`, { fresh: 'yes', round: `l${i}` });
      const expectedLambda = ['base-agent=base:1', `lambda-agent-${i}=agent:${i}`, 'app=nginx:1.27'];
      if (viaLambda.join() !== expectedLambda.join()) misses.push(`round ${i}, Lambda handler: [${viaLambda.join(', ')}]`);
    }
    expect(misses).toEqual([]);
  }, 10 * 60_000);

  it(`injects the image a SidecarSet was updated to just before the pod, ${ROUNDS} times in a row, through both entry points`, async () => {
    const misses: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await setImage('base', `base:u${i}`);
      const viaServer = await createPod(`updated-${i}`, { fresh: 'yes' });
      if (!viaServer.includes(`base-agent=base:u${i}`)) misses.push(`round ${i}, HTTPS server: [${viaServer.join(', ')}]`);
      await setImage('base', `base:l${i}`);
      const viaLambda = await injectThroughLambda(`updated-lambda-${i}`, { fresh: 'yes' });
      if (!viaLambda.includes(`base-agent=base:l${i}`)) misses.push(`round ${i}, Lambda handler: [${viaLambda.join(', ')}]`);
    }
    expect(misses).toEqual([]);
  }, 10 * 60_000);

  it(`refuses a SidecarSet that conflicts with one created just before it, ${ROUNDS} times in a row`, async () => {
    const misses: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const selector = { conflict: `c${i}` };
      await createSet(sidecarSet(`first-${i}`, selector, `shared-${i}`, 'a:1'));
      const second = await request('POST', SETS, sidecarSet(`second-${i}`, selector, `shared-${i}`, 'b:1'));
      const message = typeof second.object.message === 'string' ? second.object.message : '';
      if (second.status !== 422 || !message.includes(`container shared-${i} already exist in first-${i}`)) {
        misses.push(`round ${i}: ${second.status} ${message.slice(0, 300)}`);
      }
    }
    expect(misses).toEqual([]);
  }, 10 * 60_000);
});
