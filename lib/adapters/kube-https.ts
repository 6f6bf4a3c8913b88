/**
 * A small HTTPS client for the few reads the webhooks make (GET, JSON
 * answer), on node:https with a keep-alive agent, instead of client-node:
 * client-node's package index evaluates a generated model and API for every
 * Kubernetes resource, which was most of a webhook's cold start.
 *
 * - A warm Lambda reuses its connection: the TLS handshake is paid once.
 * - The bearer token comes from a function asked before every request, so
 *   that EKS tokens and token files are renewed while the function lives.
 * - Redirects are never followed (a 3xx is an error like any non-2xx): a
 *   redirect would carry the bearer token wherever it points.
 * - Answers are bounded in size, so a runaway list cannot exhaust the memory.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { pipeline, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { errorMessage } from '../errors.ts';
import { apiServerAnswered, asKubeApiError, KubeApiError } from './kube-api-error.ts';

/** Where the API server is and how to talk to it. */
export interface KubeHttpsSettings {
  /** `https://host:port`, possibly with a path prefix (no trailing slash needed). */
  server: string;
  /** PEM of the CA(s) the server's certificate must chain to; the system's CAs when absent. */
  ca?: string | Buffer;
  /** PEM of a client certificate and its key. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** The name the server's certificate is checked against (and sent as SNI), instead of the URL's host. */
  servername?: string;
  /** False only for `insecure-skip-tls-verify: true`. Default true. */
  rejectUnauthorized?: boolean;
  /** The bearer token, asked for before every request; none sent when absent or when it gives ''. */
  token?: () => string | Promise<string>;
  /** The largest answer accepted, after decompression. Default {@link DEFAULT_MAX_RESPONSE_BYTES}. */
  maxResponseBytes?: number;
}

/**
 * The default bound on one answer: a list of a few thousand large SidecarSets
 * fits many times over, and parsing it stays well inside a small Lambda.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

const USER_AGENT = 'serverless-sidecarset';

export interface KubeHttpsClient {
  /** The API server's URL, for logs and messages. */
  readonly server: string;
  /**
   * GETs an API path and parses the JSON answer.
   * @param path absolute, its segments already URI-encoded.
   * @param operation names the read in errors (`list SidecarSets`).
   * @param accept the Accept header; default `application/json` (another form of answer, such as
   *   a PartialObjectMetadataList, is asked for with its media type parameters).
   * @throws KubeApiError with the status code and the API server's explanation for a non-2xx
   *   answer, or the cause for anything else (network, TLS, abort, size, not JSON).
   */
  getJson(path: string, operation: string, signal?: AbortSignal, accept?: string): Promise<unknown>;
  /** Closes the kept-alive connections (a process that wants to exit, a test). */
  close(): void;
}

interface Answer {
  status: number;
  body: Buffer;
}

/** Why a request ended before its answer: the caller's signal, with its reason as the cause. */
function abandoned(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return new Error(`the request was abandoned${reason === undefined ? '' : ` (${errorMessage(reason)})`}`, { cause: reason });
}

/**
 * The body, decompressed when the server gzipped it, refused once it passes
 * `maxBytes` (checked on the bytes as they arrive, not only at the end).
 */
async function readBody(response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const tooLarge = () => new Error(`the answer is larger than ${maxBytes} bytes`);
  const declared = Number(response.headers['content-length']);
  const encoding = (response.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'identity' && Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
  let stream: Readable = response;
  if (encoding === 'gzip') {
    const gunzip = createGunzip();
    // pipeline destroys both streams on an error in either, so the loop below ends.
    stream = pipeline(response, gunzip, () => undefined);
  } else if (encoding !== 'identity') {
    throw new Error(`the answer is encoded as "${encoding}", which was not asked for`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > maxBytes) {
      stream.destroy();
      throw tooLarge();
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, size);
}

/** The connection errors a kept-alive socket that the server closed while idle ends with. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);
const MAX_STALE_SOCKET_RETRIES = 16;

/** A client for one API server; make one per cold start and keep it. */
export function kubeHttpsClient(settings: KubeHttpsSettings): KubeHttpsClient {
  const base = new URL(settings.server);
  const https = base.protocol === 'https:';
  if (!https && base.protocol !== 'http:') throw new TypeError(`the API server URL must be http(s), got ${settings.server}`);
  const prefix = base.pathname.replace(/\/$/, '');
  const maxBytes = settings.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  // The TLS settings live on the agent, so every kept-alive socket was made with them.
  const agent = https
    ? new HttpsAgent({
        keepAlive: true,
        rejectUnauthorized: settings.rejectUnauthorized ?? true,
        ...(settings.ca !== undefined ? { ca: settings.ca } : {}),
        ...(settings.cert !== undefined ? { cert: settings.cert } : {}),
        ...(settings.key !== undefined ? { key: settings.key } : {}),
        ...(settings.servername !== undefined ? { servername: settings.servername } : {}),
      })
    : new HttpAgent({ keepAlive: true });
  const request = https ? httpsRequest : httpRequest;

  function once(url: URL, headers: Record<string, string>, signal: AbortSignal | undefined): Promise<Answer> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(abandoned(signal));
        return;
      }
      const req = request(url, { method: 'GET', agent, headers });
      const onAbort = () => {
        if (signal !== undefined) req.destroy(abandoned(signal));
      };
      // Whichever of the request and the answer stream reports an abort first, the caller's reason is what it reads.
      const fail = (error: Error) => {
        signal?.removeEventListener('abort', onAbort);
        const failure = signal?.aborted === true ? abandoned(signal) : error;
        reject(Object.assign(failure, { reusedSocket: req.reusedSocket }));
      };
      // `on`, not `once`: a second 'error' with no listener would crash the process.
      req.on('error', fail);
      req.once('response', (response) => {
        readBody(response, maxBytes).then(
          (body) => {
            signal?.removeEventListener('abort', onAbort);
            resolve({ status: response.statusCode ?? 0, body });
          },
          (error: unknown) => {
            // The socket is mid-answer: it cannot go back to the pool.
            req.destroy();
            // readBody fails with Errors only (Node's own may come from another realm under a test runner: no instanceof).
            fail(error as Error);
          },
        );
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      req.end();
    });
  }

  async function get(url: URL, headers: Record<string, string>, signal: AbortSignal | undefined): Promise<Answer> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await once(url, headers, signal);
      } catch (error) {
        // A warm Lambda thawed after minutes may pick pooled sockets the
        // server has closed meanwhile; a GET is safe to send again (Node's
        // documented remedy for keep-alive races). Each such failure drops
        // one dead socket from the pool, so this ends on a new connection,
        // whose failure is final; the bound is only a backstop.
        const code = (error as { code?: unknown }).code;
        const reused = (error as { reusedSocket?: unknown }).reusedSocket === true;
        const stale = reused && typeof code === 'string' && STALE_SOCKET_CODES.has(code);
        if (!stale || signal?.aborted === true || attempt >= MAX_STALE_SOCKET_RETRIES) throw error;
      }
    }
  }

  return {
    server: settings.server,
    async getJson(path, operation, signal, accept = 'application/json') {
      if (signal?.aborted === true) throw asKubeApiError(operation, abandoned(signal));
      let answer: Answer;
      try {
        const token = settings.token === undefined ? '' : await settings.token();
        const headers: Record<string, string> = { Accept: accept, 'Accept-Encoding': 'gzip', 'User-Agent': USER_AGENT };
        if (token !== '') headers.Authorization = `Bearer ${token}`;
        answer = await get(new URL(`${prefix}${path}`, base), headers, signal);
      } catch (error) {
        throw asKubeApiError(operation, error);
      }
      if (answer.status < 200 || answer.status > 299) throw apiServerAnswered(operation, answer.status, answer.body.toString('utf8'));
      try {
        return JSON.parse(answer.body.toString('utf8')) as unknown;
      } catch (error) {
        throw new KubeApiError(operation, 'the answer is not JSON', answer.status, { cause: error });
      }
    },
    close() {
      agent.destroy();
    },
  };
}
