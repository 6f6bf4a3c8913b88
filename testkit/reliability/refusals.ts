/**
 * The refusals a stranger or a broken caller gets, through both handlers (the
 * Lambda handler on real Function URL events, the fastify server over real
 * HTTPS): the documented status, fast, and an answer that says nothing
 * useful to an attacker (no stack, no path, no versions, no hint of which
 * part of a secret was wrong).
 */
import { DEFAULT_MAX_BODY_BYTES } from '../../lib/webhooks/http-handler.ts';
import { median } from '../bench/stats.ts';
import { ClusterView, httpsHandler, lambdaHandler, type WebhookHandler, type HandlerAnswer, type HandlerRequest } from '../fuzz/handlers.ts';
import { podReview, SECRET, STRANGER_SECRET } from '../reviews.ts';
import type { Figures } from './figures.ts';


interface Refusal {
  what: string;
  request: HandlerRequest;
  status: number;
  /** The whole answer, when it is fixed. */
  body?: string;
}

const review = Buffer.from(JSON.stringify(podReview('refusal')));
/** A real review padded past the limit: what a caller with the secret could send at most. */
const oversized = Buffer.concat([review.subarray(0, -1), Buffer.from(`,"padding":"${'p'.repeat(DEFAULT_MAX_BODY_BYTES)}"}`)]);
const NOT_FOUND = '{"message":"Not Found"}';

const REFUSALS: readonly Refusal[] = [
  { what: 'stranger: wrong secret in the path, 6 MB body', request: { fn: 'pod-inject', path: `/${STRANGER_SECRET}`, body: oversized.subarray(0, DEFAULT_MAX_BODY_BYTES) }, status: 404, body: NOT_FOUND },
  { what: 'stranger: no secret at all', request: { fn: 'pod-inject', path: '/', body: review }, status: 404, body: NOT_FOUND },
  { what: 'stranger: wrong Bearer token', request: { fn: 'sidecarset-validate', path: '/', headers: { authorization: `Bearer ${STRANGER_SECRET}` }, body: review }, status: 404, body: NOT_FOUND },
  { what: 'stranger: the secret with one character changed', request: { fn: 'pod-inject', path: `/${SECRET.slice(0, -1)}${SECRET.endsWith('A') ? 'B' : 'A'}`, body: review }, status: 404, body: NOT_FOUND },
  { what: 'stranger: a PUT with a text body', request: { fn: 'sidecarset-default', path: `/${STRANGER_SECRET}`, method: 'PUT', headers: { 'content-type': 'text/plain' }, body: review }, status: 404, body: NOT_FOUND },
  { what: 'caller: GET', request: { fn: 'pod-inject', method: 'GET', body: Buffer.alloc(0) }, status: 405, body: '{"message":"only POST is accepted"}' },
  { what: 'caller: text/plain body', request: { fn: 'pod-inject', headers: { 'content-type': 'text/plain' }, body: review }, status: 415, body: '{"message":"the body must be application/json"}' },
  { what: 'caller: body over 6 MiB', request: { fn: 'pod-inject', body: oversized }, status: 413 },
  { what: 'caller: body that is not JSON', request: { fn: 'pod-inject', body: review.subarray(0, 200) }, status: 400 },
  { what: 'caller: JSON that is not an AdmissionReview', request: { fn: 'sidecarset-validate', body: Buffer.from('{"kind":"Pod"}') }, status: 400 },
];

/** What an answer must never carry. */
const LEAKS: readonly [RegExp, string][] = [
  [/\bat \S+ \(|\n\s+at /, 'a stack trace'],
  [/\/(?:work|home|root|tmp|var|opt)\//, 'a file path'],
  [/node_modules|fastify|undici|v\d+\.\d+\.\d+/i, 'a component or version'],
  [new RegExp(SECRET.slice(0, 12)), 'part of the secret'],
];

function leakIn(body: string): string | undefined {
  return LEAKS.find(([pattern]) => pattern.test(body))?.[1];
}

async function check(handler: WebhookHandler, refusal: Refusal, repetitions: number): Promise<{ answer: HandlerAnswer; medianMs: number }> {
  const times: number[] = [];
  let answer: HandlerAnswer | undefined;
  for (let i = 0; i < repetitions; i++) {
    answer = await handler.send(refusal.request);
    times.push(answer.ms);
    const where = `${handler.name}: ${refusal.what}`;
    if (answer.status !== refusal.status) throw new Error(`${where}: answered ${answer.status}, documented ${refusal.status}: ${answer.body.slice(0, 200)}`);
    if (refusal.body !== undefined && answer.body !== refusal.body) throw new Error(`${where}: answered ${answer.body.slice(0, 200)}, documented ${refusal.body}`);
    if (answer.body.length > 300) throw new Error(`${where}: a ${answer.body.length}-byte answer, where a short message is documented`);
    const leak = leakIn(answer.body);
    if (leak !== undefined) throw new Error(`${where}: the answer carries ${leak}: ${answer.body}`);
    if (refusal.status === 405 && answer.allow !== 'POST') throw new Error(`${where}: a 405 without "Allow: POST"`);
  }
  if (answer === undefined) throw new Error('no repetitions');
  return { answer, medianMs: median(times) };
}

/**
 * Sends every refusal `repetitions` times through both handlers.
 * @throws Error naming the first answer that is not as documented.
 */
export async function checkRefusals(repetitions = 5): Promise<Figures[]> {
  const view = new ClusterView();
  const https = await httpsHandler(view);
  try {
    const lambda = await lambdaHandler(view);
    const rows: Figures[] = [];
    for (const refusal of REFUSALS) {
      const viaLambda = await check(lambda, refusal, repetitions);
      const viaHttps = await check(https, refusal, repetitions);
      rows.push({
        request: refusal.what,
        status: refusal.status,
        answer: viaLambda.answer.body === viaHttps.answer.body ? viaLambda.answer.body : `${viaLambda.answer.body} / ${viaHttps.answer.body}`,
        lambdaMedianMs: Number(viaLambda.medianMs.toFixed(2)),
        httpsMedianMs: Number(viaHttps.medianMs.toFixed(2)),
      });
    }
    return rows;
  } finally {
    await https.close();
  }
}
