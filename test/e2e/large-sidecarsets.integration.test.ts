/**
 * 40 MiB of SidecarSets on a real kube-apiserver (issue 36, item 3): 40
 * valid sets of a mebibyte each that select no pod, and one small set that
 * selects pods. The SidecarSet lists are read in pages whose bytes are
 * bounded, so a cold pod-inject (a new Lambda instance, in a process of its
 * own) injects the small set's sidecar within the review's deadline, and a
 * status pass completes and counts the small set's pods. Each process's peak
 * RSS and kept heap are printed (docs/RELIABILITY.md, "40 MiB of
 * SidecarSets").
 *
 * Before: one unpaged list per read, refused past the client's 32 MiB cap:
 * the cold pod-inject answered 503 ("cannot list SidecarSets: the answer is
 * larger than 33554432 bytes; nothing cached") and the pass failed at its
 * SidecarSet list.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { forCreate, inParallel, SIDECARSETS_PATH } from '../../testkit/bench/cluster.ts';
import { createNamespace, createPod } from '../../testkit/cluster-pods.ts';
import { startRolloutCluster, type RolloutCluster } from '../../testkit/faults/rollout-fixture.ts';
import type { ColdFunctionReport } from '../../testkit/load/cold-function-child.ts';
import { podReview } from '../../testkit/reviews.ts';

const LARGE_SETS = 40;
const MIB = 1024 * 1024;
/** Each large set's env values: a mebibyte of text that does not compress (as real configuration would not). */
const BLOB_VALUES = 16;
const BLOB_VALUE_BYTES = MIB / BLOB_VALUES;
const NAMESPACE = 'shop';
const SMALL = 'small-agent';
/** The review's `?timeout=` (functionUrlEvent's): the API server's deadline for the webhook. */
const REVIEW_DEADLINE_MS = 10_000;

const CHILD = fileURLToPath(new URL('../../testkit/load/cold-function-child.ts', import.meta.url));

/** A valid SidecarSet of about a mebibyte that selects no pod. */
function largeSet(i: number): SidecarSet {
  const env = Array.from({ length: BLOB_VALUES }, (_, k) => ({ name: `BLOB_${k}`, value: randomBytes((BLOB_VALUE_BYTES * 3) / 4).toString('base64') }));
  return defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    // Listed before the small set (names sort): the small one is on the list's last page.
    metadata: { name: `bulk-${String(i).padStart(2, '0')}` },
    spec: { selector: { matchLabels: { never: `selected-${i}` } }, containers: [{ name: `bulk-${i}`, image: 'bulk:1', env }] },
  });
}

const webPod = (name: string): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NAMESPACE, labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } });

/** Runs one cold function in a process of its own and returns its report. */
function coldFunction(kubeconfig: string, what: 'pod-inject' | 'status-sync', review?: unknown): Promise<ColdFunctionReport> {
  return new Promise((resolve, reject) => {
    const child = fork(CHILD, [], {
      env: { ...process.env, KUBECONFIG_CONTENT: kubeconfig, COLD_FUNCTION: what, COLD_REVIEW: review === undefined ? '' : JSON.stringify(review) },
      execArgv: ['--no-warnings=ExperimentalWarning'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let told = false;
    child.on('message', (message: { report?: ColdFunctionReport; error?: string }) => {
      told = true;
      if (message.report !== undefined) resolve(message.report);
      else reject(new Error(`the ${what} child failed: ${message.error ?? JSON.stringify(message)}`));
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (!told) reject(new Error(`the ${what} child exited with ${String(code)} without a report`));
    });
  });
}

describeWithControlPlane('40 MiB of SidecarSets on a real API server', () => {
  let cluster: RolloutCluster;
  let storedBytes = 0;

  beforeAll(async () => {
    // The API server's watch cache serves the lists, as in a real cluster.
    cluster = await startRolloutCluster({ readyDelayMs: 300, listsFromEtcd: false });
    await inParallel(Array.from({ length: LARGE_SETS }, (_, i) => i), 4, async (i) => {
      const created = await cluster.cp.request('admin', 'POST', SIDECARSETS_PATH, forCreate(largeSet(i)));
      if (created.status !== 201) throw new Error(`creating bulk-${i}: ${created.status} ${created.body.slice(0, 300)}`);
    });
    const small = defaultSidecarSet({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: SMALL },
      spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'agent', image: 'agent:1.0' }] },
    });
    const created = await cluster.cp.request('admin', 'POST', SIDECARSETS_PATH, forCreate(small));
    expect(created.status).toBe(201);
    storedBytes = Buffer.byteLength((await cluster.cp.request('admin', 'GET', SIDECARSETS_PATH)).body);
    await createNamespace(cluster.cp, NAMESPACE);
  }, 30 * 60_000);

  afterAll(async () => {
    await cluster.stop();
  });

  it('a cold pod-inject reads every set and injects the small one within the review’s deadline', async () => {
    expect(storedBytes).toBeGreaterThan(LARGE_SETS * MIB);
    const pod = webPod('web-0');
    const report = await coldFunction(cluster.cp.kubeconfig('functions'), 'pod-inject', podReview('cold-0', pod));
    process.stdout.write(`cold pod-inject over ${(storedBytes / MIB).toFixed(1)} MiB of SidecarSets: ${JSON.stringify({ ...report, answer: undefined })}\n`);
    const answer = report.answer as { statusCode: number; body?: string };
    expect({ statusCode: answer.statusCode, body: answer.statusCode === 200 ? '' : answer.body }).toEqual({ statusCode: 200, body: '' });
    const { response } = JSON.parse(answer.body ?? '{}') as { response: { allowed: boolean; patch?: string } };
    expect(response.allowed).toBe(true);
    const injected = applyPatch(pod, decodePatch(response.patch ?? '')) as Pod;
    expect((injected.spec?.containers ?? []).map((c) => c.name)).toEqual(['agent', 'app']);
    expect(report.elapsedMs).toBeLessThan(REVIEW_DEADLINE_MS);
    // Injected pods for the pass below, as the webhook would have admitted them.
    for (let i = 0; i < 3; i++) await createPod(cluster.cp, { ...injected, metadata: { ...injected.metadata, name: `web-${i}` } });
  }, 5 * 60_000);

  it('a status pass completes and counts the small set’s pods', async () => {
    const report = await coldFunction(cluster.cp.kubeconfig('functions'), 'status-sync');
    const pass = report.answer as { errors: unknown[]; setsSeen: number; sets?: Record<string, { matchedPods: number; updatedPods: number }> };
    process.stdout.write(`status pass over ${(storedBytes / MIB).toFixed(1)} MiB of SidecarSets: ${JSON.stringify({ ...report, answer: { errors: pass.errors, setsSeen: pass.setsSeen } })}\n`);
    expect(pass.errors).toEqual([]);
    expect(pass.setsSeen).toBe(LARGE_SETS + 1);
    expect(pass.sets?.[SMALL]).toMatchObject({ matchedPods: 3, updatedPods: 3 });
  }, 5 * 60_000);
});
