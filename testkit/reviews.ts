/**
 * Shared by tests, benchmarks and reliability runs: AdmissionReviews shaped
 * as the API server sends them (and read back from text), Function URL
 * events, the caller secrets, and a logger that keeps its lines.
 */
import { createHash } from 'node:crypto';
import type { APIGatewayProxyEvent, LambdaFunctionURLEvent } from 'aws-lambda';
import { jsonLogger } from '../lib/adapters/json-logger.ts';
import { decodeReview, InvalidReviewError, type AdmissionRequest } from '../lib/admission/review.ts';
import type { Logger } from '../lib/ports.ts';

/**
 * 32 random-looking bytes in base64url, as operators generate them, derived
 * from a label so that failures reproduce (a repeated byte would be refused
 * as too predictable).
 */
export function fixedSecret(label: string): string {
  return createHash('sha256').update(`serverless-sidecarset test secret: ${label}`).digest('base64url');
}

export const SECRET = fixedSecret('current');
export const PREVIOUS_SECRET = fixedSecret('previous');
export const STRANGER_SECRET = fixedSecret('stranger');

/** A SidecarSet as a user applies it: nothing defaulted yet. */
export function userSidecarSet(name = 'dns'): Record<string, unknown> {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: {
      name,
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"kind":"SidecarSet"}\n' },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: 'apps.kruise.io/v1alpha1',
          time: '2026-11-30T12:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { '.': {}, 'f:containers': {} } },
        },
      ],
    },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'dns-f', image: 'dns:1.0' }],
    },
  };
}

/** A SidecarSet CREATE review as kube-apiserver 1.3x sends it (cluster-scoped: no namespace). */
export function sidecarSetReview(uid: string, object: unknown = userSidecarSet()): Record<string, unknown> {
  return {
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: {
      uid,
      kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'SidecarSet' },
      resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'sidecarsets' },
      requestKind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'SidecarSet' },
      requestResource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'sidecarsets' },
      name: 'dns',
      operation: 'CREATE',
      userInfo: { username: 'kubernetes-admin', groups: ['kubeadm:cluster-admins', 'system:authenticated'] },
      object,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'kubectl-client-side-apply', fieldValidation: 'Strict' },
    },
  };
}

export function appPod(): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'web-7d9c6b-', namespace: 'shop', labels: { app: 'web', 'pod-template-hash': '7d9c6b' } },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27', resources: {} }], restartPolicy: 'Always' },
  };
}

/** A Pod CREATE review from a ReplicaSet controller: empty name (generateName), the namespace on the request. */
export function podReview(uid: string, pod: unknown = appPod()): Record<string, unknown> {
  return {
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      name: '',
      namespace: 'shop',
      operation: 'CREATE',
      userInfo: {
        username: 'system:serviceaccount:kube-system:replicaset-controller',
        uid: '4e3b7a39-0d8b-4c1e-9a55-0f3b51f6c0a2',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
      },
      object: pod,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  };
}

/** The kubelet's pods/status UPDATE of `before` into `after`, as the API server sends it to a webhook. */
export function podStatusReview(uid: string, before: unknown, after: unknown): Record<string, unknown> {
  const review = podReview(uid, after) as { request: Record<string, unknown> };
  return {
    ...review,
    request: {
      ...review.request,
      name: 'web-0',
      subResource: 'status',
      operation: 'UPDATE',
      userInfo: { username: 'system:node:node-1', groups: ['system:nodes', 'system:authenticated'] },
      oldObject: before,
      options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  };
}

/** A logger that keeps every JSON line it writes, parsed. */
export function capturingLogger(): { logger: Logger; lines: string[]; entries: () => Record<string, unknown>[] } {
  const lines: string[] = [];
  const logger = jsonLogger({}, (line) => lines.push(line));
  return { logger, lines, entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

const HOST = 'abcdefghijklmnopqrstuvwxyz234567.lambda-url.eu-west-1.on.aws';

export interface EventOptions {
  body?: string;
  base64?: boolean;
  path?: string;
  method?: string;
  headers?: Record<string, string>;
  query?: string;
  requestId?: string;
  /** The secret in the default path (`/<secret>`). */
  secret?: string;
  /** The caller's address as the Function URL service saw the connection. */
  sourceIp?: string;
}

/** A Function URL event as Lambda delivers the API server's call: payload 2.0, lower-case headers. */
export function functionUrlEvent(options: EventOptions = {}): LambdaFunctionURLEvent {
  const text = options.body ?? '';
  const body = options.base64 === false ? text : Buffer.from(text, 'utf8').toString('base64');
  const query = options.query ?? 'timeout=10s';
  const path = options.path ?? `/${options.secret ?? SECRET}`;
  const method = options.method ?? 'POST';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: query,
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      accept: 'application/json, */*',
      'accept-encoding': 'gzip',
      host: HOST,
      'user-agent': 'kube-apiserver-admission',
      'x-amzn-trace-id': 'Root=1-6752b0c0-0123456789abcdef01234567',
      'x-forwarded-for': '203.0.113.7',
      'x-forwarded-port': '443',
      'x-forwarded-proto': 'https',
      ...options.headers,
    },
    ...(query === '' ? {} : { queryStringParameters: Object.fromEntries(new URLSearchParams(query)) }),
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abcdefghijklmnopqrstuvwxyz234567',
      domainName: HOST,
      domainPrefix: 'abcdefghijklmnopqrstuvwxyz234567',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: options.sourceIp ?? '203.0.113.7', userAgent: 'kube-apiserver-admission' },
      requestId: options.requestId ?? 'c1b6d3a0-6f0e-4b4e-9a53-3f4b9f0d2a11',
      routeKey: '$default',
      stage: '$default',
      time: '30/Nov/2026:12:00:00 +0000',
      timeEpoch: 1_796_040_000_000,
    },
    ...(options.method === 'GET' && text === '' ? {} : { body }),
    isBase64Encoded: options.base64 !== false,
  };
}

const REST_API_ID = 'a1b2c3d4e5';
const VPCE_ID = 'vpce-0123456789abcdef0';
/** The private API's vpce alias host, as the webhook configurations name it. */
export const REST_API_HOST = `${REST_API_ID}-${VPCE_ID}.execute-api.eu-west-1.amazonaws.com`;

/**
 * A REST API proxy event (payload 1.0) as API Gateway delivers the API
 * server's call through the private API of `webhookIngress=private`: the
 * resource `/<function>/{proxy+}` on stage `webhooks`, headers in the
 * caller's own spelling (Go's net/http canonical form) with their multi-value
 * twin, the caller's VPC address and the endpoint's id in the identity.
 */
export function restApiEvent(fn: string, options: EventOptions = {}): APIGatewayProxyEvent {
  const text = options.body ?? '';
  const base64 = options.base64 !== false;
  const body = base64 ? Buffer.from(text, 'utf8').toString('base64') : text;
  const query = options.query ?? 'timeout=10s';
  const path = options.path ?? `/${fn}/${options.secret ?? SECRET}`;
  const method = options.method ?? 'POST';
  const headers: Record<string, string> = {
    Accept: 'application/json, */*',
    'Accept-Encoding': 'gzip',
    'Content-Type': 'application/json',
    Host: REST_API_HOST,
    'User-Agent': 'kube-apiserver-admission',
    'X-Amzn-Trace-Id': 'Root=1-6752b0c0-0123456789abcdef01234567',
    'x-amzn-vpce-config': '0',
    'x-amzn-vpce-id': VPCE_ID,
    'X-Forwarded-For': options.sourceIp ?? '10.0.12.34',
    ...options.headers,
  };
  const params = query === '' ? null : Object.fromEntries(new URLSearchParams(query));
  return {
    resource: `/${fn}/{proxy+}`,
    path,
    httpMethod: method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: params,
    multiValueQueryStringParameters: params === null ? null : Object.fromEntries(Object.entries(params).map(([k, v]) => [k, [v]])),
    pathParameters: { proxy: path.slice(fn.length + 2) },
    stageVariables: null,
    requestContext: {
      resourceId: 'abc123',
      resourcePath: `/${fn}/{proxy+}`,
      httpMethod: method,
      extendedRequestId: 'AbCdEfGhIjKlMnO=',
      requestTime: '30/Nov/2026:12:00:00 +0000',
      path: `/webhooks${path}`,
      accountId: '123456789012',
      protocol: 'HTTP/1.1',
      stage: 'webhooks',
      domainPrefix: `${REST_API_ID}-${VPCE_ID}`,
      requestTimeEpoch: 1_796_040_000_000,
      requestId: options.requestId ?? 'c1b6d3a0-6f0e-4b4e-9a53-3f4b9f0d2a11',
      identity: {
        cognitoIdentityPoolId: null,
        accountId: null,
        cognitoIdentityId: null,
        caller: null,
        sourceIp: options.sourceIp ?? '10.0.12.34',
        principalOrgId: null,
        accessKey: null,
        cognitoAuthenticationType: null,
        cognitoAuthenticationProvider: null,
        userArn: null,
        userAgent: 'kube-apiserver-admission',
        user: null,
        apiKey: null,
        apiKeyId: null,
        clientCert: null,
        vpceId: VPCE_ID,
        vpcId: 'vpc-0123456789abcdef0',
      },
      domainName: REST_API_HOST,
      apiId: REST_API_ID,
      authorizer: null,
    },
    body: method === 'GET' && text === '' ? null : body,
    isBase64Encoded: base64,
  };
}

/** Parses JSON text and decodes it; a syntax error is an InvalidReviewError too. */
export function decodeReviewText(text: string): AdmissionRequest {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw new InvalidReviewError(`the body is not JSON: ${(e as Error).message}`);
  }
  return decodeReview(body);
}

export const GVK_POD = { group: '', version: 'v1', kind: 'Pod' };
export const GVK_SET = { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'SidecarSet' };

/**
 * A bare review envelope around any object, valid or not (fuzzing and the
 * conformance suite feed objects a user-facing wrapper such as
 * lib/admission/wrap.ts would refuse): empty name, the namespace on the
 * request only, an administrator as the caller.
 */
export function reviewAround(uidValue: string, gvk: typeof GVK_POD, resource: string, operation: string, object: unknown, oldObject: unknown, namespace: string | undefined) {
  return {
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: {
      uid: uidValue,
      kind: gvk,
      resource: { group: gvk.group, version: gvk.version, resource },
      requestKind: gvk,
      requestResource: { group: gvk.group, version: gvk.version, resource },
      name: '',
      ...(namespace === undefined ? {} : { namespace }),
      operation,
      userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
      object,
      oldObject,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  };
}
