/**
 * The esbuild bundles as Lambda runs them: each loaded in a fresh Node 22
 * process and invoked with a real Function URL event. pod-inject reads a real
 * API server as the least-privilege identity.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, inflateRawSync } from 'node:zlib';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { stringify } from 'yaml';
import { appPod, functionUrlEvent, podReview as podReviewOf, podStatusReview, sidecarSetReview } from '../../testkit/reviews.ts';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { bundleFunctions, type BundleInfo } from '../../scripts/bundle.ts';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { crdPath, waitForCrd } from '../../functions/server/local-stack.ts';
import { checkEmfDocument, extractedMetrics } from '../metrics/emf-check.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// Inside the project so the bundles resolve the AWS SDK the way Lambda's runtime provides it.
const outdir = join(projectRoot, '.cache', `test-bundles-${process.pid}`);
const secret = randomBytes(32).toString('base64url');
let bundles: BundleInfo[];
let cp: ControlPlane;

/** Runs `handler(event)` of a bundle in a fresh Node process, as a cold start. */
function invokeBundle(file: string, event: LambdaFunctionURLEvent, env: Record<string, string>) {
  const runner = `const { handler } = await import(process.argv[1]); const chunks = []; for await (const c of process.stdin) chunks.push(c); process.stdout.write('\\n' + JSON.stringify(await handler(JSON.parse(Buffer.concat(chunks).toString()))) + '\\n');`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', runner, file], {
    input: JSON.stringify(event),
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', AWS_REGION: 'eu-west-1', ...env },
  });
  // The handler's own JSON log lines come first; the result is the last line.
  const lines = result.stdout.trim().split('\n');
  return { code: result.status, stdout: lines.at(-1) ?? '', logs: lines.slice(0, -1).filter((l) => l !== ''), stderr: result.stderr };
}

const podObject = appPod();
const podReview = podReviewOf('bundle-uid-1', podObject);


/** Reads a zip through its central directory, checking every CRC (an independent reader, not scripts/zip.ts). */
function readZip(buf: Buffer): { name: string; data: Buffer }[] {
  const end = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = buf.readUInt16LE(end + 10);
  let at = buf.readUInt32LE(end + 16);
  const out: { name: string; data: Buffer }[] = [];
  for (let i = 0; i < count; i++) {
    expect(buf.readUInt32LE(at)).toBe(0x02014b50);
    const crc = buf.readUInt32LE(at + 16);
    const size = buf.readUInt32LE(at + 20);
    const nameLength = buf.readUInt16LE(at + 28);
    const extra = buf.readUInt16LE(at + 30) + buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    const name = buf.subarray(at + 46, at + 46 + nameLength).toString();
    const dataStart = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const data = inflateRawSync(buf.subarray(dataStart, dataStart + size));
    expect(crc32(data)).toBe(crc);
    out.push({ name, data });
    at += 46 + nameLength + extra;
  }
  return out;
}

const bundle = (fn: string) => {
  const b = bundles.find((x) => x.fn === fn);
  if (!b) throw new Error(`no bundle for ${fn}`);
  return b.file;
};

describeWithControlPlane('the Lambda bundles', () => {
  beforeAll(async () => {
    bundles = await bundleFunctions(outdir);
    await ensureControlPlaneBinaries();
    cp = await startControlPlane();
    await cp.apply(await readFile(crdPath, 'utf8'));
    await waitForCrd(cp, 'sidecarsets.apps.kruise.io');
    const set = defaultSidecarSet({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'mesh' },
      spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'mesh', image: 'envoy:1.31' }] },
    });
    const res = await cp.request('admin', 'POST', '/apis/apps.kruise.io/v1alpha1/sidecarsets', set);
    expect(res.status).toBe(201);
  }, 30 * 60_000);

  afterAll(async () => {
    await cp.stop();
    await rm(outdir, { recursive: true, force: true });
  });

  it('keeps client-node out of what the webhooks load at a cold start', () => {
    const clientNode = (inputs: string[] | undefined) => inputs?.some((i) => i.includes('node_modules/@kubernetes/client-node/'));
    const info = (fn: string) => {
      const b = bundles.find((x) => x.fn === fn);
      if (b === undefined) throw new Error(`no bundle for ${fn}`);
      return b;
    };
    expect(clientNode(info('sidecarset-default').inputs)).toBe(false);
    for (const fn of ['pod-inject', 'sidecarset-validate']) {
      // In a chunk of its own, loaded only for a kubeconfig that needs it.
      expect(clientNode(info(fn).startupInputs)).toBe(false);
      expect(clientNode(info(fn).inputs)).toBe(true);
      expect(info(fn).startupBytes).toBeLessThan(400 * 1024);
    }
    // The reconciler keeps using client-node from the start.
    expect(clientNode(info('status-sync').startupInputs)).toBe(true);
    expect(info('sidecarset-default').bytes).toBeLessThan(200 * 1024);
  });

  it('keeps the secret-guessing dictionaries (zxcvbn-ts) in status-sync only: the admission functions check a secret\'s form', () => {
    const zxcvbn = (fn: string) => (bundles.find((x) => x.fn === fn)?.inputs ?? []).some((i) => i.includes('node_modules/@zxcvbn-ts/'));
    for (const fn of ['pod-inject', 'sidecarset-validate', 'sidecarset-default', 'sidecarset-convert']) expect(zxcvbn(fn)).toBe(false);
    // Rotation judges the stored secret on every resync it runs.
    expect(zxcvbn('status-sync')).toBe(true);
  });

  it('packs each bundle, its chunks and source maps into a zip that reads back intact', async () => {
    for (const b of bundles) {
      const entries = readZip(await readFile(b.zipFile));
      expect(entries.map((e) => e.name).slice(0, 2)).toEqual(['index.mjs', 'index.mjs.map']);
      for (const entry of entries) expect(entry.data.equals(await readFile(join(dirname(b.file), entry.name)))).toBe(true);
      const names = new Set(entries.map((e) => e.name));
      for (const chunk of b.chunks) expect(names.has(relative(dirname(b.file), chunk.file))).toBe(true);
      expect(JSON.parse(entries[1]?.data.toString() ?? '').version).toBe(3);
    }
  });

  it('sidecarset-default answers a Function URL event with the defaulting patch', () => {
    const object = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'dns' }, spec: { selector: { matchLabels: { a: 'b' } }, containers: [{ name: 'dns-f', image: 'dns:1.0' }] } };
    const review = sidecarSetReview('default-uid', object);
    const r = invokeBundle(bundle('sidecarset-default'), functionUrlEvent({ body: JSON.stringify(review), secret }), { WEBHOOK_SECRET: secret });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as { statusCode: number; body: string };
    expect(result.statusCode).toBe(200);
    const { response } = JSON.parse(result.body);
    expect(response.uid).toBe('default-uid');
    const defaulted = applyPatch(object, decodePatch(response.patch)) as { metadata: { annotations: Record<string, string> } };
    expect(defaulted.metadata.annotations['kruise.io/sidecarset-hash']).toBe('6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684');
  });

  it('pod-inject lists SidecarSets from the real API server as the functions identity and injects', () => {
    const r = invokeBundle(bundle('pod-inject'), functionUrlEvent({ body: JSON.stringify(podReview), secret, requestId: 'req-1' }), { WEBHOOK_SECRET: secret, KUBECONFIG_CONTENT: cp.kubeconfig('functions') });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as { statusCode: number; body: string };
    expect(result.statusCode).toBe(200);
    const { response } = JSON.parse(result.body);
    const pod = applyPatch(podObject, decodePatch(response.patch)) as { spec: { containers: { name: string }[] } };
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['mesh', 'app']);
    expect(r.logs.map((l): unknown => JSON.parse(l))).toContainEqual(expect.objectContaining({ function: 'pod-inject', uid: 'bundle-uid-1', outcome: 'patched', requestId: 'req-1' }));
    expect(r.logs.join('') + r.stderr).not.toContain(secret);
    // Its metrics: one EMF line on standard output, as CloudWatch Logs extracts them.
    const metricLines = r.logs.filter((l) => l.startsWith('{"_aws"'));
    expect(metricLines).toHaveLength(1);
    expect(checkEmfDocument(metricLines[0] ?? '')).toEqual([]);
    expect(extractedMetrics(metricLines[0] ?? '').map((m) => `${Object.values(m.dimensions).join('/')} ${m.name}`)).toEqual([
      'pod-inject/Patched Reviews',
      'pod-inject AnswerLatency',
      'pod-inject SidecarSetListLatency',
    ]);
  });

  it('pod-inject loads client-node for a kubeconfig with an exec plugin, and injects', async () => {
    // A real plugin process printing an ExecCredential with the functions token.
    const plugin = join(outdir, 'credential-plugin.mjs');
    await writeFile(plugin, `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: ${JSON.stringify(cp.functionsToken)} } }));\n`);
    const kubeconfig = stringify({
      clusters: [{ name: 'c', cluster: { server: cp.url, 'certificate-authority-data': Buffer.from(cp.caCert).toString('base64') } }],
      users: [{ name: 'fn', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [plugin], interactiveMode: 'Never' } } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'fn' } }],
      'current-context': 'x',
    });
    const r = invokeBundle(bundle('pod-inject'), functionUrlEvent({ body: JSON.stringify(podReview), secret }), { WEBHOOK_SECRET: secret, KUBECONFIG_CONTENT: kubeconfig });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as { statusCode: number; body: string };
    expect(result.statusCode).toBe(200);
    const pod = applyPatch(podObject, decodePatch(JSON.parse(result.body).response.patch)) as { spec: { containers: { name: string }[] } };
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['mesh', 'app']);
    expect(r.logs.map((l): unknown => JSON.parse(l))).toContainEqual(expect.objectContaining({ message: 'reading the cluster through client-node', needs: 'users[].user.exec' }));
  });

  it('pod-inject answers a stranger 404', () => {
    const r = invokeBundle(bundle('pod-inject'), functionUrlEvent({ body: JSON.stringify(podReview), path: '/not-the-secret' }), { WEBHOOK_SECRET: secret, KUBECONFIG_CONTENT: cp.kubeconfig('functions') });
    expect(JSON.parse(r.stdout)).toMatchObject({ statusCode: 404, body: '{"message":"Not Found"}' });
  });

  it('status-sync runs a resync for a scheduled event, as the functions identity, logs it as one line and writes its metrics', () => {
    const runner = `const { handler } = await import(process.argv[1]); const result = await handler(JSON.parse(process.argv[2]), { awsRequestId: 'req-s', getRemainingTimeInMillis: () => 60000 }); process.stdout.write('\\n' + JSON.stringify(result) + '\\n');`;
    const event = { version: '0', id: 'e-1', 'detail-type': 'Scheduled Event', source: 'aws.events', account: '1', time: '2026-11-30T12:00:00Z', region: 'eu-west-1', resources: [], detail: {} };
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', runner, bundle('status-sync'), JSON.stringify(event)], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', AWS_REGION: 'eu-west-1', KUBECONFIG_CONTENT: cp.kubeconfig('functions') },
    });
    expect(r.stderr).toBe('');
    const lines = r.stdout.trim().split('\n');
    const result = JSON.parse(lines.at(-1) ?? '');
    expect(result).toMatchObject({ setsSeen: 1, statusesWritten: 1, errors: [] });
    const written = lines.slice(0, -1).filter((l) => l !== '');
    // The resync's metrics and the one set's as EMF lines (written as the resync ends), then its log line.
    expect(written.map((l): unknown => JSON.parse(l))).toEqual([
      expect.objectContaining({ _aws: expect.anything(), Function: 'status-sync', StatusesWritten: 1 }),
      expect.objectContaining({ _aws: expect.anything(), SidecarSet: expect.any(String), MatchedPods: expect.any(Number) }),
      expect.objectContaining({ function: 'status-sync', message: 'resync', requestId: 'req-s', setsSeen: 1 }),
    ]);
    for (const line of written.slice(0, 2)) expect(checkEmfDocument(line)).toEqual([]);
  });

  it('sidecarset-convert is small, loads no cluster client and no admission handler, and converts a ConversionReview from a Function URL event', () => {
    const info = bundles.find((b) => b.fn === 'sidecarset-convert');
    expect(info).toBeDefined();
    expect((info?.inputs ?? []).some((i) => i.includes('node_modules/@kubernetes/client-node/'))).toBe(false);
    // What a cold start loads: the conversion, not the admission handlers (their chunks exist, never loaded).
    expect((info?.startupInputs ?? []).some((i) => /lib\/webhooks\/(pod-inject|sidecarset-validate|sidecarset-default)\.ts$/.test(i))).toBe(false);
    expect(info?.bytes).toBeLessThan(200 * 1024);
    expect(info?.startupBytes).toBeLessThan(200 * 1024);
    process.stdout.write(`sidecarset-convert bundle: ${info?.bytes} bytes, ${info?.startupBytes} at a cold start\n`);
    const review = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'convert-uid', desiredAPIVersion: 'apps.kruise.io/v1beta1', objects: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'a' }, spec: { namespace: 'shop' } }] },
    };
    const r = invokeBundle(bundle('sidecarset-convert'), functionUrlEvent({ body: JSON.stringify(review), secret }), { WEBHOOK_SECRET: secret });
    expect([r.code, r.stderr]).toEqual([0, '']);
    const result = JSON.parse(r.stdout) as { statusCode: number; body: string };
    expect(result.statusCode).toBe(200);
    const { response } = JSON.parse(result.body) as { response: { uid: string; result: { status: string }; convertedObjects: { apiVersion: string; spec: unknown }[] } };
    expect([response.uid, response.result.status]).toEqual(['convert-uid', 'Success']);
    expect(response.convertedObjects[0]?.spec).toEqual({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'shop' } } });
    expect(r.logs.map((l) => JSON.parse(l) as Record<string, unknown>)).toContainEqual(expect.objectContaining({ function: 'sidecarset-convert', outcome: 'allowed', statusCode: 200 }));
    const stranger = invokeBundle(bundle('sidecarset-convert'), functionUrlEvent({ body: JSON.stringify(review), secret: 'x'.repeat(43) }), { WEBHOOK_SECRET: secret });
    expect((JSON.parse(stranger.stdout) as { statusCode: number }).statusCode).toBe(404);
  });

  it('pod-change reads the SidecarSets from the real API server, as the functions identity, and goes on only for a set that selects the pod', () => {
    const pod = (names: string, ready: string) => ({ ...podObject, metadata: { ...(podObject.metadata as Record<string, unknown>), name: 'web-0', annotations: { 'kruise.io/sidecarset-injected-list': names } }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready }] } });
    const outcomes = (['mesh,other', 'other'] as const).map((names, i) => {
      const review = podStatusReview(`bundle-change-${i}`, pod(names, 'False'), pod(names, 'True'));
      const r = invokeBundle(bundle('pod-change'), functionUrlEvent({ body: JSON.stringify(review), secret }), { WEBHOOK_SECRET: secret, KUBECONFIG_CONTENT: cp.kubeconfig('functions') });
      expect(r.code).toBe(0);
      expect(JSON.parse((JSON.parse(r.stdout) as { body: string }).body)).toMatchObject({ response: { allowed: true } });
      return (r.logs.map((l) => JSON.parse(l) as { function?: string; outcome?: string }).find((l) => l.function === 'pod-change' && l.outcome !== undefined))?.outcome;
    });
    // 'mesh' selects the pod (a trigger, had a queue been configured); 'other' is no stored set: nothing to trigger.
    expect(outcomes).toEqual(['allowed', 'skipped']);
  });

  it('sidecarset-validate refuses to start without cluster credentials', () => {
    const r = invokeBundle(bundle('sidecarset-validate'), functionUrlEvent({ body: JSON.stringify(podReview), secret }), { WEBHOOK_SECRET: secret });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('no cluster credentials');
  });

  it('every bundle refuses to start without a caller secret', () => {
    for (const fn of ['sidecarset-default', 'pod-inject']) {
      const r = invokeBundle(bundle(fn), functionUrlEvent({ body: JSON.stringify(podReview), secret }), { KUBECONFIG_CONTENT: cp.kubeconfig('functions') });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('no caller secret is configured');
    }
  });
});
