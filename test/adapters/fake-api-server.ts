/**
 * A local HTTP server that answers as the API server does, route by route,
 * and keeps every request: what went over the wire is checked without a
 * cluster. The kubeconfig it gives authenticates with a fixed token.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { stringify } from 'yaml';

export interface SeenRequest {
  method: string;
  url: string;
  contentType: string | undefined;
  authorization: string | undefined;
  body: unknown;
}

/** The answer to one request; 'no answer' leaves it hanging (an API server that stopped responding). */
export type Route = (req: SeenRequest) => { status: number; body: unknown } | 'no answer';

export interface FakeApiServer {
  route: Route;
  seen: SeenRequest[];
  /** Kubeconfig YAML for it (plain http, which client-node accepts with insecure-skip-tls-verify). */
  kubeconfig(): string;
  /** Drops every open connection (a hanging request included). */
  dropConnections(): void;
  close(): Promise<void>;
}

/** A Status object, as the API server answers failures. */
export function apiStatus(code: number, reason: string, message: string): { status: number; body: unknown } {
  return { status: code, body: { apiVersion: 'v1', kind: 'Status', status: 'Failure', code, reason, message } };
}

export async function startFakeApiServer(): Promise<FakeApiServer> {
  const fake: FakeApiServer = {
    route: () => ({ status: 500, body: {} }),
    seen: [],
    kubeconfig() {
      const { port } = server.address() as AddressInfo;
      return stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'fake', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'functions', user: { token: 'functions-token' } }],
        contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'functions' } }],
        'current-context': 'fake',
      });
    },
    dropConnections() {
      server.closeAllConnections();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const request: SeenRequest = { method: req.method ?? '', url: req.url ?? '', contentType: req.headers['content-type'], authorization: req.headers.authorization, body: text === '' ? undefined : JSON.parse(text) };
    fake.seen.push(request);
    const answer = fake.route(request);
    if (answer === 'no answer') return;
    res.statusCode = answer.status;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(answer.body));
  };
  const server = createServer((req, res) => {
    void handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return fake;
}

/**
 * One fake API server for the whole test file: started before its tests,
 * closed after them, its record of requests emptied before each test (so a
 * test sees exactly the requests it caused). The object it returns stands
 * for the server once started.
 */
export function fakeApiServerForSuite(): FakeApiServer {
  let server: FakeApiServer | undefined;
  const live = (): FakeApiServer => {
    if (server === undefined) throw new Error('the fake API server is started in beforeAll; use it inside a test');
    return server;
  };
  beforeAll(async () => {
    server = await startFakeApiServer();
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(() => {
    if (server !== undefined) server.seen.length = 0;
  });
  return {
    get route() {
      return live().route;
    },
    set route(route: Route) {
      live().route = route;
    },
    get seen() {
      return live().seen;
    },
    kubeconfig: () => live().kubeconfig(),
    dropConnections: () => {
      live().dropConnections();
    },
    close: () => live().close(),
  };
}
