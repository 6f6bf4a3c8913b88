/**
 * One golden set of AdmissionReviews through the three entry points: the core
 * (runReview), the Lambda handler with real Function URL events, and the
 * fastify server over real HTTPS. All three must give the same response, and
 * the reviews under reviews/ must give the recorded one
 * (UPDATE_GOLDEN=1 rewrites `<name>.response.json`).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { isObject } from '../../lib/kube/json.ts';
import { parseObjects, parseSingleObject } from '../../lib/kube/yaml-objects.ts';
import type { JsonObject, Namespace } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { ADMISSION_FUNCTIONS, isAdmissionFunction, runReview, type AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { buildApp } from '../../functions/server/app.ts';
import { ensureServingTls } from '../../functions/server/tls.ts';
import { admissionLambda, type FunctionUrlHandler } from '../../functions/shared/admission-lambda.ts';
import { admissionRuntime } from '../../functions/shared/compose.ts';
import { functionUrlEvent } from '../../testkit/reviews.ts';

const here = dirname(fileURLToPath(import.meta.url));
const NOW = new Date('2026-11-30T12:00:00Z');
const clock = { now: () => NOW };
const secret = randomBytes(32).toString('base64url');
const silent = jsonLogger({}, () => undefined);
const update = process.env.UPDATE_GOLDEN === '1';

interface Case {
  name: string;
  fn: AdmissionFunctionName;
  review: JsonObject;
  sets: SidecarSet[];
  namespaces: Namespace[];
  /** Where the recorded response lives, for cases that record one. */
  responseFile?: string;
}

function envelope(request: unknown): JsonObject {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request };
}

function loadCases(): Case[] {
  const cases: Case[] = [];
  const reviews = join(here, 'reviews');
  for (const file of readdirSync(reviews).filter((f) => f.endsWith('.yaml')).sort()) {
    const doc = parseSingleObject(readFileSync(join(reviews, file), 'utf8'), file);
    const fn = String(doc.function);
    if (!isAdmissionFunction(fn)) throw new Error(`${file}: unknown function ${fn}`);
    const name = file.replace(/\.yaml$/, '');
    cases.push({
      name,
      fn,
      review: envelope(doc.request),
      sets: (Array.isArray(doc.sidecarsets) ? doc.sidecarsets : []).map((s) => defaultSidecarSet(s as SidecarSet)),
      namespaces: (Array.isArray(doc.namespaces) ? doc.namespaces : []) as Namespace[],
      responseFile: join(reviews, `${name}.response.json`),
    });
  }
  const inject = join(here, 'inject');
  for (const dir of readdirSync(inject).sort()) {
    const read = (f: string) => readFileSync(join(inject, dir, f), 'utf8');
    const pod = parseSingleObject(read('pod.yaml'), 'pod.yaml');
    const namespace = isObject(pod.metadata) && typeof pod.metadata.namespace === 'string' ? pod.metadata.namespace : 'default';
    cases.push({
      name: `inject/${dir}`,
      fn: 'pod-inject',
      review: envelope({ uid: `uid-${dir}`, kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, namespace, operation: 'CREATE', object: pod }),
      sets: parseObjects(read('sidecarsets.yaml'), 'sidecarsets.yaml').map((s) => defaultSidecarSet(s as SidecarSet)),
      namespaces: existsSync(join(inject, dir, 'namespaces.yaml')) ? (parseObjects(read('namespaces.yaml'), 'namespaces.yaml')) : [],
    });
  }
  return cases;
}

const cases = loadCases();
const sourcesOf = (c: Case) => ({ sidecarSets: memorySidecarSetSource(c.sets), namespaces: memoryNamespaceSource(c.namespaces), server: 'memory' });

async function viaLambda(c: Case): Promise<unknown> {
  const handler: FunctionUrlHandler = await admissionLambda(c.fn, {
    env: { WEBHOOK_SECRET: secret },
    overrides: { clock, logger: silent },
    cluster: () => Promise.resolve(sourcesOf(c)),
  });
  const result = await handler(functionUrlEvent({ body: JSON.stringify(c.review), secret }));
  expect(result.statusCode).toBe(200);
  return JSON.parse(result.body ?? '');
}

/** One server per case, since each case sees its own cluster. */
async function viaHttps(c: Case, tls: { caPem: string; certPem: string; keyPem: string }): Promise<unknown> {
  const runtimes = Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, admissionRuntime(fn, { current: secret }, sourcesOf(c), silent, clock)]));
  const app: FastifyInstance = buildApp({ runtimes, https: { cert: tls.certPem, key: tls.keyPem }, readiness: () => Promise.resolve({ ready: true, message: '' }) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const body = JSON.stringify(c.review);
    const text = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest(
        { host: '127.0.0.1', port, method: 'POST', path: `/${c.fn}/${secret}?timeout=10s`, ca: tls.caPem, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => {
            if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}: ${Buffer.concat(chunks).toString()}`));
            else resolve(Buffer.concat(chunks).toString());
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    return JSON.parse(text);
  } finally {
    await app.close();
  }
}

let tlsDir: string;
let tls: { caPem: string; certPem: string; keyPem: string };

beforeAll(async () => {
  tlsDir = await mkdtemp(join(tmpdir(), 'handlers-tls-'));
  tls = await ensureServingTls(tlsDir);
});

afterAll(async () => {
  await rm(tlsDir, { recursive: true, force: true });
});

describe('the same review through the core, Lambda and HTTPS', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const core = await runReview(c.fn, c.review, { ...sourcesOf(c), clock });
    if (core.kind !== 'review') throw new Error(`core did not answer a review: ${JSON.stringify(core)}`);
    const lambda = await viaLambda(c);
    const https = await viaHttps(c, tls);
    expect(lambda).toEqual(core.review);
    expect(https).toEqual(core.review);
    expect(core.review.response.uid).toBe((c.review.request as { uid: string }).uid);
    if (c.fn === 'sidecarset-validate') expect(core.review.response).not.toHaveProperty('patch');
    if (c.responseFile !== undefined) {
      if (update) writeFileSync(c.responseFile, `${JSON.stringify(core.review, null, 2)}\n`);
      expect(core.review).toEqual(JSON.parse(readFileSync(c.responseFile, 'utf8')));
    }
  });
});
