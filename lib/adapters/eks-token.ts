/**
 * EKS bearer tokens from the function's IAM role (wire.md, "Kubernetes API
 * access from a function"): `k8s-aws-v1.` + base64url of an STS
 * GetCallerIdentity URL presigned with AWS Signature Version 4, carrying the
 * signed header `x-k8s-aws-id: <cluster name>`. EKS calls that URL to learn
 * who is asking, so the token is only as good as the signature.
 *
 * SigV4 query presigning is implemented here with node:crypto (about sixty
 * lines) rather than pulling the AWS SDK's signer and credential chain into
 * every bundle: Lambda hands the role's credentials to the function in its
 * environment, and that is all a token needs.
 */
import { createHash, createHmac } from 'node:crypto';

/** AWS credentials, as Lambda puts them in the environment. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Present for temporary (role) credentials, which is what Lambda has. */
  sessionToken?: string;
}

/** A request to presign with SigV4 query parameters. */
export interface PresignInput {
  method: string;
  host: string;
  /** Absolute path, already URI-encoded as it goes on the wire. */
  path: string;
  /** Query parameters other than the X-Amz-* ones the signature adds. */
  query: Readonly<Record<string, string>>;
  /** Headers the caller of the URL will send, signed; `host` is always signed. Names in lower case. */
  headers: Readonly<Record<string, string>>;
  service: string;
  region: string;
  credentials: AwsCredentials;
  date: Date;
  expiresSeconds: number;
  /** Hex SHA-256 of the payload; defaults to that of an empty body. `UNSIGNED-PAYLOAD` for S3. */
  payloadHash?: string;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
const EMPTY_PAYLOAD_SHA256 = createHash('sha256').update('').digest('hex');

/** RFC 3986 encoding as SigV4 wants it: encodeURIComponent leaves !'()* alone. */
function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

/** `20130524T000000Z`. */
function amzDate(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

/**
 * A SigV4 presigned URL (query-string authentication): the signature covers
 * the method, path, every query parameter and the given headers.
 */
export function presignUrl(input: PresignInput): string {
  const timestamp = amzDate(input.date);
  const day = timestamp.slice(0, 8);
  const scope = `${day}/${input.region}/${input.service}/aws4_request`;
  const headers = new Map<string, string>([['host', input.host]]);
  for (const [name, value] of Object.entries(input.headers)) headers.set(name.toLowerCase(), value.trim().replace(/\s+/g, ' '));
  const headerNames = [...headers.keys()].sort();
  const signedHeaders = headerNames.join(';');

  const query: [string, string][] = Object.entries({
    ...input.query,
    'X-Amz-Algorithm': ALGORITHM,
    'X-Amz-Credential': `${input.credentials.accessKeyId}/${scope}`,
    'X-Amz-Date': timestamp,
    'X-Amz-Expires': String(input.expiresSeconds),
    'X-Amz-SignedHeaders': signedHeaders,
    ...(input.credentials.sessionToken !== undefined ? { 'X-Amz-Security-Token': input.credentials.sessionToken } : {}),
  }).map(([k, v]) => [uriEncode(k), uriEncode(v)]);
  // Sorted by encoded name, then value: the order AWS canonicalises in.
  query.sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  const canonicalQuery = query.map(([k, v]) => `${k}=${v}`).join('&');

  const canonicalRequest = [
    input.method,
    input.path,
    canonicalQuery,
    headerNames.map((name) => `${name}:${headers.get(name) ?? ''}\n`).join(''),
    signedHeaders,
    input.payloadHash ?? EMPTY_PAYLOAD_SHA256,
  ].join('\n');
  const stringToSign = [ALGORITHM, timestamp, scope, createHash('sha256').update(canonicalRequest, 'utf8').digest('hex')].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${input.credentials.secretAccessKey}`, day), input.region), input.service), 'aws4_request');
  const signature = createHmac('sha256', signingKey).update(stringToSign, 'utf8').digest('hex');
  return `https://${input.host}${input.path}?${canonicalQuery}&X-Amz-Signature=${signature}`;
}

/** The header EKS checks, so that a token for one cluster is refused by another. */
export const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/** The version prefix EKS's authenticator expects before the base64url URL. */
export const TOKEN_PREFIX = 'k8s-aws-v1.';
/** EKS accepts a token for 15 minutes after its X-Amz-Date, whatever X-Amz-Expires says. */
export const TOKEN_LIFETIME_MS = 15 * 60_000;
/**
 * X-Amz-Expires as aws-iam-authenticator and `aws eks get-token` send it:
 * the authenticator ignores it (and older ones refuse values above 60).
 */
const PRESIGN_EXPIRES_SECONDS = 60;

export interface EksToken {
  token: string;
  /** When EKS stops accepting it. */
  expiresAt: Date;
}

/** A bearer token for `clusterName`, signed with `credentials` at `now`. */
export function eksToken(options: { clusterName: string; region: string; credentials: AwsCredentials; now: Date }): EksToken {
  const url = presignUrl({
    method: 'GET',
    host: `sts.${options.region}.amazonaws.com`,
    path: '/',
    query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
    headers: { [CLUSTER_ID_HEADER]: options.clusterName },
    service: 'sts',
    region: options.region,
    credentials: options.credentials,
    date: options.now,
    expiresSeconds: PRESIGN_EXPIRES_SECONDS,
  });
  return { token: `${TOKEN_PREFIX}${Buffer.from(url, 'utf8').toString('base64url')}`, expiresAt: new Date(options.now.getTime() + TOKEN_LIFETIME_MS) };
}

/** EKS configuration or credentials that are missing or unusable; thrown at cold start. */
export class EksAuthError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EksAuthError';
  }
}

/**
 * The credentials Lambda gives the function's role, from the environment.
 * @throws EksAuthError naming the missing variable.
 */
export function credentialsFromEnv(env: Readonly<Record<string, string | undefined>>): AwsCredentials {
  const accessKeyId = env.AWS_ACCESS_KEY_ID ?? '';
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY ?? '';
  if (accessKeyId === '') throw new EksAuthError('AWS_ACCESS_KEY_ID is not set: an EKS token is signed with the function role\'s credentials');
  if (secretAccessKey === '') throw new EksAuthError('AWS_SECRET_ACCESS_KEY is not set: an EKS token is signed with the function role\'s credentials');
  const sessionToken = env.AWS_SESSION_TOKEN ?? '';
  return { accessKeyId, secretAccessKey, ...(sessionToken !== '' ? { sessionToken } : {}) };
}

export interface EksTokenSourceOptions {
  clusterName: string;
  region: string;
  /** Read at every refresh, so rotated credentials are picked up. */
  credentials: () => AwsCredentials;
  /** Default: the system clock. */
  now?: () => Date;
  /** A token is replaced this long before it expires. Default 5 minutes: a margin for clock skew and slow requests. */
  refreshBeforeMs?: number;
}

/** Hands out a token, making a new one only when the current one is close to expiry. */
export interface EksTokenSource {
  token(): string;
}

/** A token source that signs lazily and caches until {@link EksTokenSourceOptions.refreshBeforeMs} before expiry. */
export function eksTokenSource(options: EksTokenSourceOptions): EksTokenSource {
  const now = options.now ?? (() => new Date());
  const refreshBeforeMs = options.refreshBeforeMs ?? 5 * 60_000;
  let current: EksToken | undefined;
  return {
    token() {
      const at = now();
      if (current === undefined || at.getTime() >= current.expiresAt.getTime() - refreshBeforeMs) {
        current = eksToken({ clusterName: options.clusterName, region: options.region, credentials: options.credentials(), now: at });
      }
      return current.token;
    },
  };
}
