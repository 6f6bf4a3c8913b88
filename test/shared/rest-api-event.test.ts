/**
 * The admission functions behind the private REST API (`webhookIngress=private`):
 * API Gateway's proxy events (payload 1.0, typed by @types/aws-lambda) are
 * answered byte for byte as the same call through the Function URL, for
 * every outcome the HTTP handler has: a patch, an allow, the secret checks, the
 * refused method, media type and body.
 */
import { describe, expect, it } from '@jest/globals';
import { admissionLambda, type FunctionUrlHandler } from '../../functions/shared/admission-lambda.ts';
import { httpRequestFromRestEvent } from '../../functions/shared/lambda-event.ts';
import { capturingLogger, functionUrlEvent, podReview, PREVIOUS_SECRET, restApiEvent, SECRET, sidecarSetReview, STRANGER_SECRET, type EventOptions } from '../../testkit/reviews.ts';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { AdmissionFunctionName } from '../../lib/webhooks/registry.ts';

const NOW = new Date('2026-11-30T12:00:00Z');
const env = { WEBHOOK_SECRET: SECRET, WEBHOOK_SECRET_PREVIOUS: PREVIOUS_SECRET };
const set = defaultSidecarSet({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'log-agent' },
  spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'log-agent', image: 'fluent-bit:3.1' }] },
});

async function handlerFor(fn: AdmissionFunctionName): Promise<FunctionUrlHandler> {
  return admissionLambda(fn, {
    env,
    overrides: { logger: capturingLogger().logger, clock: { now: () => NOW } },
    cluster: () => Promise.resolve({ sidecarSets: memorySidecarSetSource([set]), namespaces: memoryNamespaceSource([]), server: 'memory' }),
  });
}

/** Header names as Go's net/http sends them (canonical case), as a REST API event keeps them. */
function canonical(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  if (headers === undefined) return undefined;
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => `${dash}${c.toUpperCase()}`), value]));
}

const podBody = JSON.stringify(podReview('0d3c2b1a-pod'));
const setBody = JSON.stringify(sidecarSetReview('0d3c2b1a-set'));

/** One call as the Function URL sees it (path after the host) and as the REST API sees it (path after the stage). */
interface Call {
  why: string;
  fn: AdmissionFunctionName;
  /** The Function URL path: `/<secret>` or another. */
  path: string;
  options: Omit<EventOptions, 'path'>;
}

const calls: Call[] = [
  { why: 'a pod injected (a patch)', fn: 'pod-inject', path: `/${SECRET}`, options: { body: podBody } },
  { why: 'a SidecarSet defaulted, plain body', fn: 'sidecarset-default', path: `/${SECRET}`, options: { body: setBody, base64: false } },
  { why: 'a SidecarSet validated', fn: 'sidecarset-validate', path: `/${SECRET}`, options: { body: setBody } },
  { why: 'the previous secret', fn: 'pod-inject', path: `/${PREVIOUS_SECRET}`, options: { body: podBody } },
  { why: 'the secret as a Bearer token', fn: 'pod-inject', path: '/', options: { body: podBody, headers: { authorization: `Bearer ${SECRET}` } } },
  { why: 'a wrong secret', fn: 'pod-inject', path: `/${STRANGER_SECRET}`, options: { body: podBody } },
  { why: 'the secret below another segment', fn: 'pod-inject', path: `/hooks/${SECRET}`, options: { body: podBody } },
  { why: 'a GET', fn: 'pod-inject', path: `/${SECRET}`, options: { method: 'GET', body: '' } },
  { why: 'a text/plain body', fn: 'pod-inject', path: `/${SECRET}`, options: { body: podBody, headers: { 'content-type': 'text/plain' } } },
  { why: 'a body that is not JSON', fn: 'pod-inject', path: `/${SECRET}`, options: { body: 'not json' } },
];

describe('an admission function behind the private REST API', () => {
  it.each(calls.map((c) => [c.why, c] as const))('answers %s byte for byte as through the Function URL', async (_why, call) => {
    const handler = await handlerFor(call.fn);
    const viaUrl = await handler(functionUrlEvent({ ...call.options, path: call.path }));
    const headers = canonical(call.options.headers);
    const viaRest = await handler(restApiEvent(call.fn, { ...call.options, ...(headers === undefined ? {} : { headers }), path: `/${call.fn}${call.path}` }));
    expect(viaRest).toEqual(viaUrl);
    // Not two identical failures: the table covers answers and refusals.
    expect(typeof viaUrl === 'object' ? viaUrl.statusCode : 0).toBe(
      call.why.startsWith('a wrong') || call.why.includes('below') ? 404 : call.why === 'a GET' ? 405 : call.why.includes('text/plain') ? 415 : call.why.includes('not JSON') ? 400 : 200,
    );
  });

  it('reads the path after the function\'s resource, the folded headers, the query, the body and the caller\'s VPC address', () => {
    const event = restApiEvent('pod-inject', { body: '{"a":1}', headers: { Authorization: 'Bearer x' }, sourceIp: '10.1.2.3', query: 'timeout=7s' });
    event.multiValueHeaders['X-Forwarded-For'] = ['10.9.9.9', '10.1.2.3'];
    const request = httpRequestFromRestEvent(event);
    expect(request).toMatchObject({ method: 'POST', path: `/${SECRET}`, timeout: '7s', sourceIp: '10.1.2.3', requestId: 'c1b6d3a0-6f0e-4b4e-9a53-3f4b9f0d2a11' });
    expect(request.headers).toMatchObject({ authorization: 'Bearer x', 'content-type': 'application/json', 'x-forwarded-for': '10.9.9.9, 10.1.2.3' });
    expect(request.body).toBe('{"a":1}');
    expect(request.bodyBytes).toBe(7);
    // A path outside the function's resource has no secret segment.
    expect(httpRequestFromRestEvent({ ...event, path: `/sidecarset-default/${SECRET}` }).path).toBe('/');
  });
});
