/**
 * An admitted SidecarSet change starts the set's reconcile at once, and a
 * dry run does not: a real kube-apiserver calls the local server's webhooks
 * (the validating one declared `sideEffects: NoneOnDryRun`), and the local
 * trigger hands each admitted change to the listener the stack was given.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import type { AdmittedSidecarSet } from '../../lib/ports.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

const SETS = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
let stack: LocalStack;
const admitted: AdmittedSidecarSet[] = [];

const logAgent = (image: string): SidecarSet => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'log-agent' },
  spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'log-agent', image }] },
});

/** How many reviews the validating webhook answered "allowed", from the server's log. */
function validateAllowed(): number {
  return stack.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.function === 'sidecarset-validate' && line.outcome === 'allowed').length;
}

async function send(method: string, path: string, body: unknown): Promise<{ status: number; object: SidecarSet }> {
  const res = await stack.cp.request('admin', method, path, body);
  return { status: res.status, object: JSON.parse(res.body) as SidecarSet };
}

describeWithControlPlane('an admitted SidecarSet change triggers a reconcile, a dry run does not', () => {
  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    stack = await startLocalStack({
      admitted: {
        admitted(change) {
          admitted.push(change);
        },
      },
    });
  }, 30 * 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  beforeEach(() => {
    admitted.length = 0;
  });

  let stored: SidecarSet;

  it('the API server calls the validating webhook on a dry-run create (NoneOnDryRun), which admits it without a trigger', async () => {
    const before = validateAllowed();
    const res = await send('POST', `${SETS}?dryRun=All`, logAgent('fluent-bit:3.1'));
    expect(res.status).toBe(201);
    expect(validateAllowed()).toBe(before + 1);
    // Defaulted by the mutating webhook, so the webhooks did run.
    expect(res.object.spec?.updateStrategy).toMatchObject({ type: 'RollingUpdate' });
    expect((await stack.cp.request('admin', 'GET', `${SETS}/log-agent`)).status).toBe(404);
    expect(admitted).toEqual([]);
  });

  it('a real create triggers once, with the stored uid, before the API server answers', async () => {
    const res = await send('POST', SETS, logAgent('fluent-bit:3.1'));
    expect(res.status).toBe(201);
    stored = res.object;
    expect(admitted).toEqual([{ sidecarSet: 'log-agent', uid: stored.metadata?.uid, operation: 'CREATE', resourceVersion: '' }]);
  });

  it('a dry-run update does not trigger; a real one does, with the resourceVersion it replaces', async () => {
    const changed = { ...stored, spec: { ...stored.spec, containers: [{ ...stored.spec?.containers?.[0], image: 'fluent-bit:3.2' }] } };
    const dry = await send('PUT', `${SETS}/log-agent?dryRun=All`, changed);
    expect(dry.status).toBe(200);
    expect(admitted).toEqual([]);
    const real = await send('PUT', `${SETS}/log-agent`, changed);
    expect(real.status).toBe(200);
    expect(real.object.metadata?.resourceVersion).not.toBe(stored.metadata?.resourceVersion);
    expect(admitted).toEqual([{ sidecarSet: 'log-agent', uid: stored.metadata?.uid, operation: 'UPDATE', resourceVersion: stored.metadata?.resourceVersion }]);
  });

  it('a change the webhook denies does not trigger', async () => {
    const res = await send('POST', SETS, { ...logAgent('fluent-bit:3.1'), metadata: { name: 'broken' }, spec: { selector: { matchLabels: { app: 'x' } }, containers: [{ name: 'Bad_Name', image: 'x:1' }] } });
    expect(res.status).toBe(422);
    expect(admitted).toEqual([]);
  });
});
