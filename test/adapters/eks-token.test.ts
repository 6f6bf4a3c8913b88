/**
 * The EKS token builder, offline: fixed credentials and a fixed clock give a
 * known token. The expected signatures are independent of this code: the
 * S3 one is the presigned-URL example of AWS's SigV4 documentation
 * ("Authenticating Requests: Using Query Parameters"), and the STS one was
 * produced once by @smithy/signature-v4 5.7.5 (the AWS SDK's signer)
 * presigning the same request with the same inputs.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { eksKubeConfig } from '../../lib/adapters/eks-kubeconfig.ts';
import { credentialsFromEnv, EksAuthError, eksToken, eksTokenSource, presignUrl } from '../../lib/adapters/eks-token.ts';
import { generateServingTls } from '../../functions/server/tls.ts';
import { clusterSources } from '../../functions/shared/cluster.ts';
import { ConfigurationError } from '../../functions/shared/compose.ts';
import { capturingLogger } from '../../testkit/reviews.ts';

const EXAMPLE = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const SESSION = { ...EXAMPLE, sessionToken: 'FwoGZXIvYXdzEXAMPLE+/=token' };
const NOW = new Date('2026-11-30T12:00:00Z');

function decode(token: string): URL {
  expect(token.startsWith('k8s-aws-v1.')).toBe(true);
  const encoded = token.slice('k8s-aws-v1.'.length);
  expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
  return new URL(Buffer.from(encoded, 'base64url').toString('utf8'));
}

describe('SigV4 query presigning', () => {
  it('reproduces the presigned URL of the AWS documentation', () => {
    const url = presignUrl({
      method: 'GET',
      host: 'examplebucket.s3.amazonaws.com',
      path: '/test.txt',
      query: {},
      headers: {},
      service: 's3',
      region: 'us-east-1',
      credentials: EXAMPLE,
      date: new Date('2013-05-24T00:00:00Z'),
      expiresSeconds: 86400,
      payloadHash: 'UNSIGNED-PAYLOAD',
    });
    expect(url).toBe(
      'https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request' +
        '&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
    );
  });
});

describe('the EKS token', () => {
  const { token, expiresAt } = eksToken({ clusterName: 'prod-cluster', region: 'eu-west-1', credentials: SESSION, now: NOW });

  it('decodes to a presigned STS GetCallerIdentity URL signed as the AWS SDK signs it', () => {
    const url = decode(token);
    expect(`${url.origin}${url.pathname}`).toBe('https://sts.eu-west-1.amazonaws.com/');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      Action: 'GetCallerIdentity',
      Version: '2011-06-15',
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Credential': 'AKIAIOSFODNN7EXAMPLE/20261130/eu-west-1/sts/aws4_request',
      'X-Amz-Date': '20261130T120000Z',
      'X-Amz-Expires': '60',
      'X-Amz-Security-Token': 'FwoGZXIvYXdzEXAMPLE+/=token',
      'X-Amz-SignedHeaders': 'host;x-k8s-aws-id',
      'X-Amz-Signature': 'bbb79fe84159af8d40bc01ddbeb4c41f2ff630ac4f521536428ee846f360ea1c',
    });
  });

  it('is the fixed text for fixed inputs, without base64 padding', () => {
    expect(token).toBe(
      'k8s-aws-v1.aHR0cHM6Ly9zdHMuZXUtd2VzdC0xLmFtYXpvbmF3cy5jb20vP0FjdGlvbj1HZXRDYWxsZXJJZGVudGl0eSZWZXJzaW9uPTIwMTEtMDYtMTUmWC1BbXotQWxnb3JpdGhtPUFXUzQtSE1BQy1TSEEyNTYmWC1BbXotQ3JlZGVudGlhbD1BS0lBSU9TRk9ETk43RVhBTVBMRSUyRjIwMjYxMTMwJTJGZXUtd2VzdC0xJTJGc3RzJTJGYXdzNF9yZXF1ZXN0JlgtQW16LURhdGU9MjAyNjExMzBUMTIwMDAwWiZYLUFtei1FeHBpcmVzPTYwJlgtQW16LVNlY3VyaXR5LVRva2VuPUZ3b0daWEl2WVhkekVYQU1QTEUlMkIlMkYlM0R0b2tlbiZYLUFtei1TaWduZWRIZWFkZXJzPWhvc3QlM0J4LWs4cy1hd3MtaWQmWC1BbXotU2lnbmF0dXJlPWJiYjc5ZmU4NDE1OWFmOGQ0MGJjMDFkZGJlYjRjNDFmMmZmNjMwYWM0ZjUyMTUzNjQyOGVlODQ2ZjM2MGVhMWM',
    );
    expect(token).not.toContain('=');
  });

  it('is valid for 15 minutes', () => {
    expect(expiresAt.toISOString()).toBe('2026-11-30T12:15:00.000Z');
  });

  it.each<[string, Partial<Parameters<typeof eksToken>[0]>]>([
    ['another cluster', { clusterName: 'staging' }],
    ['another secret key', { credentials: { ...SESSION, secretAccessKey: 'x' } }],
    ['another time', { now: new Date('2026-11-30T12:00:01Z') }],
  ])('signs differently for %s', (_name, change) => {
    const other = eksToken({ clusterName: 'prod-cluster', region: 'eu-west-1', credentials: SESSION, now: NOW, ...change });
    expect(decode(other.token).searchParams.get('X-Amz-Signature')).not.toBe(decode(token).searchParams.get('X-Amz-Signature'));
  });

  it('omits the security token for long-term credentials', () => {
    const url = decode(eksToken({ clusterName: 'c', region: 'us-east-1', credentials: EXAMPLE, now: NOW }).token);
    expect(url.searchParams.has('X-Amz-Security-Token')).toBe(false);
  });
});

describe('the token source', () => {
  it('reuses a token until 5 minutes before it expires, then signs a new one with the credentials of the moment', () => {
    let now = NOW;
    let key = 'AKIAFIRST';
    const source = eksTokenSource({ clusterName: 'c', region: 'eu-west-1', credentials: () => ({ ...EXAMPLE, accessKeyId: key }), now: () => now });
    const first = source.token();
    now = new Date(NOW.getTime() + 9 * 60_000 + 59_000);
    key = 'AKIASECOND';
    expect(source.token()).toBe(first);
    now = new Date(NOW.getTime() + 10 * 60_000);
    const second = source.token();
    expect(second).not.toBe(first);
    expect(decode(second).searchParams.get('X-Amz-Credential')).toMatch(/^AKIASECOND\//);
  });

  it.each<[string, Record<string, string>, RegExp]>([
    ['no access key', { AWS_SECRET_ACCESS_KEY: 's' }, /AWS_ACCESS_KEY_ID is not set/],
    ['no secret key', { AWS_ACCESS_KEY_ID: 'a' }, /AWS_SECRET_ACCESS_KEY is not set/],
  ])('refuses credentials from an environment with %s', (_name, env, message) => {
    expect(() => credentialsFromEnv(env)).toThrow(message);
    expect(() => credentialsFromEnv(env)).toThrow(EksAuthError);
  });

  it('reads the role credentials Lambda puts in the environment', () => {
    expect(credentialsFromEnv({ AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 't' })).toEqual({ accessKeyId: 'a', secretAccessKey: 's', sessionToken: 't' });
  });
});

describe('a KubeConfig for EKS', () => {
  const tls = generateServingTls();
  const caData = Buffer.from(tls.caPem).toString('base64');
  const seen: (string | undefined)[] = [];
  let server: Server;
  let endpoint: string;

  beforeAll(async () => {
    server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
      seen.push(req.headers.authorization);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends the current token on every request, over TLS checked against the cluster CA', async () => {
    let n = 0;
    const kc = eksKubeConfig({ clusterName: 'prod-cluster', endpoint, caData }, { token: () => `k8s-aws-v1.token-${++n}` });
    const core = kc.makeApiClient(CoreV1Api);
    await core.readNamespace({ name: 'default' });
    await core.readNamespace({ name: 'default' });
    expect(seen).toEqual(['Bearer k8s-aws-v1.token-1', 'Bearer k8s-aws-v1.token-2']);
  });

  it('refuses the server when the CA data does not lead to its certificate', async () => {
    // The server's own leaf certificate is no CA: nothing the server sends chains to it.
    const other = Buffer.from(tls.certPem).toString('base64');
    const core = eksKubeConfig({ clusterName: 'c', endpoint, caData: other }, { token: () => 't' }).makeApiClient(CoreV1Api);
    const before = seen.length;
    await expect(core.readNamespace({ name: 'default' })).rejects.toThrow();
    expect(seen).toHaveLength(before);
  });

  it('is what the functions use when EKS_CLUSTER_NAME is set, signed with the role credentials from the environment', async () => {
    const env = { EKS_CLUSTER_NAME: 'prod-cluster', EKS_ENDPOINT: endpoint, EKS_CA_DATA: caData, AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIAROLE', AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 't' };
    const sources = await clusterSources(env, capturingLogger().logger);
    const before = seen.length;
    expect(await sources.namespaces.labels(['default'])).toEqual(new Map([['default', {}]]));
    const authorization = seen[before] ?? '';
    const url = decode(authorization.replace(/^Bearer /, ''));
    expect(url.hostname).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^AKIAROLE\/\d{8}\/eu-west-1\/sts\/aws4_request$/);
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host;x-k8s-aws-id');
  });

  it.each<[string, Record<string, string>, RegExp]>([
    ['without an endpoint, CA and region', { EKS_CLUSTER_NAME: 'c' }, /EKS_CLUSTER_NAME is set, so EKS_ENDPOINT and EKS_CA_DATA and AWS_REGION must be too/],
    ['together with a kubeconfig', { EKS_CLUSTER_NAME: 'c', KUBECONFIG_CONTENT: 'x' }, /set either EKS_CLUSTER_NAME or KUBECONFIG_CONTENT, not both/],
  ])('refuses to start %s', async (_name, env, message) => {
    const start = clusterSources(env, capturingLogger().logger);
    await expect(start).rejects.toThrow(ConfigurationError);
    await expect(clusterSources(env, capturingLogger().logger)).rejects.toThrow(message);
  });

  it('refuses to start without role credentials', async () => {
    const env = { EKS_CLUSTER_NAME: 'c', EKS_ENDPOINT: endpoint, EKS_CA_DATA: caData, AWS_REGION: 'eu-west-1' };
    await expect(clusterSources(env, capturingLogger().logger)).rejects.toThrow(/AWS_ACCESS_KEY_ID is not set/);
  });

  it.each<[string, Partial<{ endpoint: string; caData: string; clusterName: string }>, RegExp]>([
    ['a plain http endpoint', { endpoint: 'http://example.com' }, /not an https:\/\/ URL/],
    ['an endpoint that is not a URL', { endpoint: 'example.com' }, /is not a URL/],
    ['CA data that is not a certificate', { caData: Buffer.from('hello').toString('base64') }, /not base64 of a PEM certificate/],
    ['no cluster name', { clusterName: '' }, /cluster name is empty/],
  ])('refuses %s', (_name, change, message) => {
    expect(() => eksKubeConfig({ clusterName: 'c', endpoint: 'https://x.eks.amazonaws.com', caData, ...change }, { token: () => 't' })).toThrow(message);
  });
});
