import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stringify } from 'yaml';
import { DeadlineExceededError, SourceUnavailableError, type StaleReport } from '../../lib/adapters/cached-list.ts';
import {
  kubeClusterReader,
  kubeNamespaceSource,
  kubeSidecarSetSource,
  LIST_LOAD_CALLS,
  retiredSourceSettings,
  sourceOptionsFromEnv,
  SourceOptionsError,
  type ClusterReader,
  type KubeSourceOptions,
  type ServerReader,
} from '../../lib/adapters/kube-sources.ts';
import { MAX_FETCHED_BY_NAME } from '../../lib/adapters/sidecarset-delta.ts';
import { RESOURCE_VERSION_COLUMN } from '../../lib/crd/sidecarset-crd.ts';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { kubeClient, settingsConnection } from '../../lib/adapters/kube-request.ts';
import { checkKubeconfig, kubeconfigHttpsSettings } from '../../lib/adapters/kubeconfig-reader.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { sidecarSetCrd } from './permissive-crd.ts';

describe('sourceOptionsFromEnv', () => {
  it('uses the defaults when nothing is set, or a variable is empty', () => {
    const defaults = { maxStalenessMs: 60_000, apiTimeoutMs: 5_000 };
    expect(sourceOptionsFromEnv({})).toEqual(defaults);
    expect(sourceOptionsFromEnv({ SIDECARSET_CACHE_MAX_STALENESS_MS: '', KUBE_API_TIMEOUT_MS: '  ' })).toEqual(defaults);
  });

  it('reads every setting', () => {
    expect(sourceOptionsFromEnv({ SIDECARSET_CACHE_MAX_STALENESS_MS: ' 120000 ', KUBE_API_TIMEOUT_MS: '2500' })).toEqual({
      maxStalenessMs: 120_000,
      apiTimeoutMs: 2_500,
    });
  });

  it('no longer reads the retired list lifetime, and says so for a cold-start warning', () => {
    expect(sourceOptionsFromEnv({ SIDECARSET_CACHE_TTL_MS: '2000' })).toEqual(sourceOptionsFromEnv({}));
    expect(retiredSourceSettings({ SIDECARSET_CACHE_TTL_MS: ' 2000 ' })).toEqual([
      expect.stringMatching(/^SIDECARSET_CACHE_TTL_MS=2000 is no longer read: every review reads the SidecarSets fresh .*; remove it$/),
    ]);
    expect(retiredSourceSettings({ SIDECARSET_CACHE_TTL_MS: '' })).toEqual([]);
    expect(retiredSourceSettings({})).toEqual([]);
  });

  it.each([
    ['SIDECARSET_CACHE_MAX_STALENESS_MS', '1e3', 0],
    ['SIDECARSET_CACHE_MAX_STALENESS_MS', 'sixty', 0],
    ['KUBE_API_TIMEOUT_MS', '0', 1],
    ['KUBE_API_TIMEOUT_MS', '99999999999999999999', 1],
  ])('refuses %s=%j with a message naming it', (variable, value, min) => {
    const read = () => sourceOptionsFromEnv({ [variable]: value });
    expect(read).toThrow(SourceOptionsError);
    expect(read).toThrow(`${variable} must be a whole number of milliseconds, at least ${min}; got "${value}"`);
  });
});

/**
 * The sources' port over both connections of the one request function, each
 * made from a kubeconfig as the functions make it (the webhooks send once):
 * every behaviour below must hold for either.
 */
const READERS = [
  {
    name: 'settings the project reads itself',
    make: async (kubeconfig: string): Promise<ServerReader> => kubeClusterReader(kubeClient(settingsConnection(await kubeconfigHttpsSettings(checkKubeconfig(kubeconfig, 'test'))), { retryDelaysMs: [] })),
    userAgent: /^serverless-sidecarset$/,
  },
  {
    name: "client-node's KubeConfig credentials",
    make: (kubeconfig: string): Promise<ServerReader> => Promise.resolve(kubeClusterReader(kubeConfigClient(parseKubeConfig(kubeconfig, 'test'), { retryDelaysMs: [] }))),
    userAgent: /^serverless-sidecarset$/,
  },
];

/** Everything the stand-in API server saw. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** Resolves when the client closed the request before an answer was sent. */
  aborted: Promise<void>;
}

type Respond = (request: IncomingMessage, response: ServerResponse) => void;

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

function status(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A plain HTTP server standing in for the API server: real clients, real requests, answers chosen per test. */
describe.each(READERS)('against a stand-in API server, through $name', ({ make, userAgent }) => {
  let server: Server;
  let seen: Seen[] = [];
  let respond: Respond = (_request, response) => {
    json(response, 500, status(500, 'InternalError', 'no answer configured'));
  };
  let reader: ServerReader;
  const token = 'stand-in-token';

  beforeAll(async () => {
    server = createServer((request, response) => {
      const aborted = new Promise<void>((resolve) => {
        response.once('close', () => {
          if (!response.writableEnded) resolve();
        });
      });
      seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, aborted });
      respond(request, response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const kubeconfig = stringify({
      clusters: [{ name: 'stand-in', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'fn', user: { token } }],
      contexts: [{ name: 'stand-in', context: { cluster: 'stand-in', user: 'fn' } }],
      'current-context': 'stand-in',
    });
    reader = await make(kubeconfig);
  });

  afterEach(() => {
    seen = [];
    // Ends requests a test left hanging, so the next test starts clean.
    server.closeAllConnections();
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
  });

  const sidecarSetList = {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSetList',
    metadata: { resourceVersion: '42' },
    items: [
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: 'log-agent', futureMetadataField: { kept: true } },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          containers: [{ name: 'agent', image: 'agent:1', futureContainerField: ['x', { y: 1 }] }],
          futureSpecField: 'kept',
        },
        status: { observedGeneration: 1, futureStatusField: 7 },
        futureTopLevelField: null,
      },
    ],
  };

  describe('kubeSidecarSetSource', () => {
    it('lists SidecarSets exactly as served, unknown fields included, with the kubeconfig credentials', async () => {
      respond = (_request, response) => {
        json(response, 200, sidecarSetList);
      };
      const sets = await kubeSidecarSetSource(reader).list();
      expect(sets).toEqual(sidecarSetList.items);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ method: 'GET', url: '/apis/apps.kruise.io/v1alpha1/sidecarsets?limit=4' });
      expect(seen[0]?.headers.authorization).toBe(`Bearer ${token}`);
      expect(seen[0]?.headers['user-agent']).toMatch(userAgent);
    });

    it('freezes the listed sets, which later requests share', async () => {
      respond = (_request, response) => {
        json(response, 200, sidecarSetList);
      };
      const [set] = await kubeSidecarSetSource(reader).list();
      expect(Object.isFrozen(set)).toBe(true);
      expect(Object.isFrozen(set?.spec?.containers?.[0])).toBe(true);
    });

    it('lists again for every review, so a set created just before is seen', async () => {
      let items: unknown[] = [];
      respond = (_request, response) => {
        json(response, 200, { ...sidecarSetList, items });
      };
      const source = kubeSidecarSetSource(reader);
      await expect(source.list()).resolves.toEqual([]);
      items = sidecarSetList.items;
      await expect(source.list()).resolves.toEqual(sidecarSetList.items);
      expect(seen).toHaveLength(2);
    });

    it.each([
      {
        answer: 'a 403 Status',
        status: 403,
        body: status(403, 'Forbidden', 'sidecarsets.apps.kruise.io is forbidden: User "fn" cannot list resource "sidecarsets"'),
        message:
          'cannot list SidecarSets: the API server answered 403: sidecarsets.apps.kruise.io is forbidden: User "fn" cannot list resource "sidecarsets"; nothing cached to serve instead',
      },
      {
        answer: 'a 404 (the CRD is not installed)',
        status: 404,
        body: status(404, 'NotFound', 'the server could not find the requested resource'),
        message:
          'cannot list SidecarSets: the API server answered 404: the server could not find the requested resource; nothing cached to serve instead',
      },
      {
        answer: 'a 500 without a Status',
        status: 500,
        body: 'oops',
        message: 'cannot list SidecarSets: the API server answered 500; nothing cached to serve instead',
      },
      {
        answer: 'a 200 that is not a list',
        status: 200,
        body: { kind: 'Status' },
        message: 'cannot list SidecarSets: the answer is not a list (no items array); nothing cached to serve instead',
      },
      {
        answer: 'a list holding a non-object',
        status: 200,
        body: { items: [{ metadata: { name: 'a' } }, 'b'] },
        message: 'cannot list SidecarSets: the list holds an item that is not an object; nothing cached to serve instead',
      },
    ])('rejects with SourceUnavailableError on $answer', async ({ status: code, body, message }) => {
      respond = (_request, response) => {
        json(response, code, body);
      };
      const error = await kubeSidecarSetSource(reader).list().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceUnavailableError);
      expect((error as Error).message).toBe(message);
      expect((error as Error).cause).toBeInstanceOf(KubeApiError);
      expect((error as Error).cause).toMatchObject({ operation: 'list SidecarSets' });
    });

    it('names the network error when the API server cannot be reached', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const { port } = closed.address() as AddressInfo;
      await new Promise<void>((resolve) => {
        closed.close(() => {
          resolve();
        });
      });
      const unreachable = await make(
        stringify({
          clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
          users: [{ name: 'u', user: { token } }],
          contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
          'current-context': 'x',
        }),
      );
      // client-node's undici says "fetch failed" first; either way the reason is named.
      await expect(kubeSidecarSetSource(unreachable).list()).rejects.toThrow(
        /^cannot list SidecarSets: the request failed: (fetch failed: )?.*ECONNREFUSED.*; nothing cached to serve instead$/,
      );
    });

    it('gives up on a call that takes longer than the API timeout, and aborts the request', async () => {
      respond = () => undefined;
      const started = performance.now();
      const error = await kubeSidecarSetSource(reader, { apiTimeoutMs: 200 }).list().catch((e: unknown) => e);
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(error).toBeInstanceOf(SourceUnavailableError);
      expect((error as Error).cause).toBeInstanceOf(DeadlineExceededError);
      // Each call is bounded by apiTimeoutMs; the whole (paged) list load by LIST_LOAD_CALLS times it.
      expect((error as Error).message).toBe(
        `cannot list SidecarSets: "list SidecarSets" did not answer within ${LIST_LOAD_CALLS * 200} ms; nothing cached to serve instead`,
      );
      // The HTTP request itself was cancelled, not just forgotten.
      await seen[0]?.aborted;
    });

    it("rejects a caller at its deadline, and gives a later caller a request of its own rather than the one in flight", async () => {
      let answer: () => void = () => undefined;
      respond = (_request, response) => {
        // The first request waits for the test; any later one is answered at once.
        if (seen.length > 1) json(response, 200, sidecarSetList);
        else
          answer = () => {
            json(response, 200, sidecarSetList);
          };
      };
      const stale: StaleReport[] = [];
      const source = kubeSidecarSetSource(reader, { onStale: (report) => stale.push(report) });
      const error = await source.list(AbortSignal.timeout(100)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceUnavailableError);
      expect((error as Error).message).toMatch(/the caller's deadline passed before "list SidecarSets" answered/);
      // The next caller arrived after that request started: it waits for a request of its own.
      const next = source.list();
      answer();
      await expect(next).resolves.toEqual(sidecarSetList.items);
      expect(seen).toHaveLength(2);
      expect(stale).toEqual([]);
    });

    /** A stand-in for a cluster of two sets under this project's CRD: lists, Tables (in pages of one row) and GETs. */
    function tableCluster(versions: Record<string, string>, expire: { continues: number } = { continues: 0 }): Respond {
      const setOf = (name: string) => ({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name, resourceVersion: versions[name] }, spec: {} });
      const columns = [{ name: 'Name', type: 'string', format: 'name', description: '', priority: 0 }, { ...RESOURCE_VERSION_COLUMN, format: '' }];
      return (request, response) => {
        const url = new URL(request.url ?? '', 'http://x');
        const name = url.pathname.split('/sidecarsets/')[1];
        if (name !== undefined) {
          json(response, 200, setOf(name));
          return;
        }
        if (!/as=Table/.test(request.headers.accept ?? '')) {
          json(response, 200, { kind: 'SidecarSetList', metadata: { resourceVersion: '9' }, items: Object.keys(versions).map(setOf) });
          return;
        }
        const token = url.searchParams.get('continue');
        if (token !== null && expire.continues > 0) {
          expire.continues -= 1;
          json(response, 410, status(410, 'Expired', 'the continue token is too old'));
          return;
        }
        const names = Object.keys(versions);
        const at = token === null ? 0 : Number(token);
        const next = at + 1 < names.length ? String(at + 1) : '';
        json(response, 200, { kind: 'Table', metadata: { continue: next }, columnDefinitions: columns, rows: [{ cells: [names[at], versions[names[at] ?? '']], object: null }] });
      };
    }

    it("tells which sets changed from a Table of the CRD's resourceVersion column, page by page, and GETs only those", async () => {
      const versions = { a: '1', b: '2' };
      respond = tableCluster(versions);
      const source = kubeSidecarSetSource(reader);
      await source.list();
      versions.b = '3';
      const sets = await source.list();
      expect(sets.map((set) => set.metadata?.resourceVersion)).toEqual(['1', '3']);
      expect(seen.map((request) => request.url)).toEqual([
        '/apis/apps.kruise.io/v1alpha1/sidecarsets?limit=4',
        '/apis/apps.kruise.io/v1alpha1/sidecarsets?includeObject=None&limit=500',
        '/apis/apps.kruise.io/v1alpha1/sidecarsets?includeObject=None&limit=500&continue=1',
        '/apis/apps.kruise.io/v1alpha1/sidecarsets/b',
      ]);
      expect(seen[1]?.headers.accept).toBe('application/json;as=Table;g=meta.k8s.io;v=v1');
    });

    it("reads the Table again from its start when a continue token expired, and fails the read after the third time", async () => {
      const versions = { a: '1', b: '2' };
      const expire = { continues: 1 };
      respond = tableCluster(versions, expire);
      const source = kubeSidecarSetSource(reader, { maxStalenessMs: 0 });
      await source.list();
      await expect(source.list()).resolves.toHaveLength(2);
      expect(seen.filter((request) => request.url.includes('includeObject')).map((request) => request.url.includes('continue'))).toEqual([false, true, false, true]);
      expire.continues = 3;
      await expect(source.list()).rejects.toThrow(/^cannot list SidecarSets: the request failed: the Table's continue token expired; the cached result is \d+ ms old, more than the 0 ms allowed$/);
    });

    it('serves the last list when the API server fails, and reports it', async () => {
      let fail = false;
      respond = (_request, response) => {
        if (fail) json(response, 503, status(503, 'ServiceUnavailable', 'etcd is down'));
        else json(response, 200, sidecarSetList);
      };
      const stale: StaleReport[] = [];
      const source = kubeSidecarSetSource(reader, { onStale: (report) => stale.push(report) });
      await source.list();
      fail = true;
      await expect(source.list()).resolves.toEqual(sidecarSetList.items);
      expect(stale).toHaveLength(1);
      expect(stale[0]?.message).toMatch(
        /^served stale "list SidecarSets", age \d+ ms, because: the API server answered 503: etcd is down$/,
      );
    });
  });

  describe('kubeNamespaceSource', () => {
    const namespaces: Record<string, Record<string, string> | undefined> = {
      web: { team: 'web', 'kubernetes.io/metadata.name': 'web' },
      bare: undefined,
    };

    const serveNamespaces: Respond = (request, response) => {
      const name = decodeURIComponent(request.url?.replace(/^\/api\/v1\/namespaces\//, '') ?? '');
      if (!(name in namespaces)) {
        json(response, 404, status(404, 'NotFound', `namespaces "${name}" not found`));
        return;
      }
      const labels = namespaces[name];
      json(response, 200, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(labels ? { labels } : {}) } });
    };

    it('returns the labels of namespaces that exist and leaves out those that do not', async () => {
      respond = serveNamespaces;
      const labels = await kubeNamespaceSource(reader).labels(['web', 'bare', 'gone']);
      expect(labels).toEqual(
        new Map<string, Record<string, string>>([
          ['web', { team: 'web', 'kubernetes.io/metadata.name': 'web' }],
          ['bare', {}],
        ]),
      );
      expect(seen.map((request) => request.url).sort()).toEqual([
        '/api/v1/namespaces/bare',
        '/api/v1/namespaces/gone',
        '/api/v1/namespaces/web',
      ]);
    });

    it('reads each namespace once per review (named twice, once), and again for the next review', async () => {
      respond = serveNamespaces;
      const source = kubeNamespaceSource(reader);
      await source.labels(['web', 'web', 'gone']);
      expect(seen).toHaveLength(2);
      await source.labels(['gone', 'web']);
      expect(seen).toHaveLength(4);
    });

    it('asks nothing for an empty name', async () => {
      respond = serveNamespaces;
      await expect(kubeNamespaceSource(reader).labels(['', ''])).resolves.toEqual(new Map());
      expect(seen).toHaveLength(0);
    });

    it('rejects with SourceUnavailableError when a namespace cannot be read', async () => {
      respond = (_request, response) => {
        json(response, 403, status(403, 'Forbidden', 'namespaces "web" is forbidden'));
      };
      const error = await kubeNamespaceSource(reader).labels(['web']).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceUnavailableError);
      expect(error).toMatchObject({
        message: 'cannot get namespace "web": the API server answered 403: namespaces "web" is forbidden; nothing cached to serve instead',
        cause: { name: 'KubeApiError', code: 403, operation: 'get namespace "web"' },
      });
    });

    it('serves a namespace read before when the API server stops answering', async () => {
      let hang = false;
      respond = (request, response) => {
        if (!hang) serveNamespaces(request, response);
      };
      const options: KubeSourceOptions = { apiTimeoutMs: 100 };
      const source = kubeNamespaceSource(reader, options);
      const before = await source.labels(['web']);
      hang = true;
      await expect(source.labels(['web'])).resolves.toEqual(before);
    });
  });
});


describeWithControlPlane('against a real kube-apiserver, as the functions identity', () => {
  let controlPlane: ControlPlane | undefined;
  const readers = new Map<string, ServerReader>();
  const readerFor = (name: string): ServerReader => {
    const reader = readers.get(name);
    if (reader === undefined) throw new Error(`no reader ${name}`);
    return reader;
  };

  const running = (): ControlPlane => {
    if (controlPlane === undefined) throw new Error('the control plane did not start');
    return controlPlane;
  };

  beforeAll(async () => {
    // The first run builds etcd and kube-apiserver from source: minutes, not seconds.
    const binaries = await ensureControlPlaneBinaries();
    controlPlane = await startControlPlane({ binaries });
    await controlPlane.apply(JSON.stringify(sidecarSetCrd));
    // The CRD serves only once it is Established.
    for (;;) {
      const res = await controlPlane.request('admin', 'GET', '/apis/apps.kruise.io/v1alpha1/sidecarsets');
      if (res.status === 200) break;
      await sleep(100);
    }
    for (const { name, make } of READERS) readers.set(name, await make(controlPlane.kubeconfig('functions')));
  }, 35 * 60_000);

  afterAll(async () => {
    await controlPlane?.stop();
  }, 5 * 60_000);

  async function create(path: string, object: unknown): Promise<void> {
    const res = await running().request('admin', 'POST', path, object);
    if (res.status !== 201) throw new Error(`creating at ${path} failed: ${res.status} ${res.body}`);
  }

  it('lists SidecarSets with every field the API server returns', async () => {
    const sets = ['alpha', 'beta'].map((name) => ({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name, labels: { from: 'test' } },
      spec: {
        selector: { matchLabels: { app: name } },
        containers: [{ name: 'agent', image: 'agent:1', notInKruise: { nested: [1, 'two', { three: true }] } }],
        injectionStrategy: { paused: false, revision: { policy: 'Always' } },
        aFieldFromTheFuture: 'kept',
      },
    }));
    for (const set of sets) await create('/apis/apps.kruise.io/v1alpha1/sidecarsets', set);
    const status = await running().request(
      'admin',
      'PATCH',
      '/apis/apps.kruise.io/v1alpha1/sidecarsets/alpha/status',
      { status: { observedGeneration: 1, matchedPods: 0, statusFromTheFuture: { x: 1 } } },
      'application/merge-patch+json',
    );
    expect(status.status).toBe(200);

    // The same list, read raw: each source must hand back every field as is, but managedFields (the server's
    // bookkeeping, as large as the set, which nothing here reads: dropped as each set is read).
    const raw = await running().request('admin', 'GET', '/apis/apps.kruise.io/v1alpha1/sidecarsets');
    const expected = (JSON.parse(raw.body) as { items: { metadata: Record<string, unknown> }[] }).items.map((item) => {
      const metadata = { ...item.metadata };
      delete metadata.managedFields;
      return { ...item, metadata };
    });
    for (const { name } of READERS) {
      const listed = await kubeSidecarSetSource(readerFor(name)).list();
      expect(listed).toEqual(expected);
      const alpha = listed.find((set) => set.metadata?.name === 'alpha');
      expect(alpha).toMatchObject({
        spec: {
          aFieldFromTheFuture: 'kept',
          containers: [{ notInKruise: { nested: [1, 'two', { three: true }] } }],
        },
        status: { statusFromTheFuture: { x: 1 } },
        metadata: { labels: { from: 'test' }, uid: expect.any(String), resourceVersion: expect.any(String) },
      });
    }
  });

  it('reads again only the sets that changed (metadata list, then a GET each), and equals a full list every time', async () => {
    const calls: string[] = [];
    const real = readerFor('settings the project reads itself');
    const { listSidecarSetMetadata, readSidecarSet } = real;
    if (listSidecarSetMetadata === undefined || readSidecarSet === undefined) throw new Error('the HTTPS reader reads metadata lists');
    // The real reader, with each call recorded.
    const counted: ClusterReader = {
      listSidecarSets: (signal) => {
        calls.push('full list');
        return real.listSidecarSets(signal);
      },
      listSidecarSetMetadata: (signal) => {
        calls.push('metadata list');
        return listSidecarSetMetadata(signal);
      },
      readSidecarSet: (name, signal) => {
        calls.push(`get ${name}`);
        return readSidecarSet(name, signal);
      },
      readNamespace: (name, signal) => real.readNamespace(name, signal),
    };
    const source = kubeSidecarSetSource(counted);
    const path = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
    // The sets as stored, as the functions keep them: without managedFields (kube-sidecarsets.ts keptSidecarSet).
    const fullList = async () =>
      (JSON.parse((await running().request('admin', 'GET', path)).body) as { items: { metadata: Record<string, unknown> }[] }).items.map((item) => {
        const metadata = { ...item.metadata };
        delete metadata.managedFields;
        return { ...item, metadata };
      });
    const delta = (name: string) => ({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name }, spec: { selector: { matchLabels: { app: name } }, containers: [{ name: 'c', image: 'c:1' }] } });
    const step = async (change: () => Promise<unknown>) => {
      await change();
      calls.length = 0;
      const listed = await source.list();
      expect(listed).toEqual(await fullList());
      return [...calls];
    };

    expect(await step(() => create(path, delta('delta-a')))).toEqual(['full list']);
    expect(await step(() => Promise.resolve())).toEqual(['metadata list']);
    const patched = () => running().request('admin', 'PATCH', `${path}/delta-a`, { spec: { containers: [{ name: 'c', image: 'c:2' }] } }, 'application/merge-patch+json');
    expect(await step(patched)).toEqual(['metadata list', 'get delta-a']);
    expect(await step(() => create(path, delta('delta-b')))).toEqual(['metadata list', 'get delta-b']);
    expect(await step(() => running().request('admin', 'DELETE', `${path}/delta-b`))).toEqual(['metadata list']);
    const many = async () => {
      for (let i = 0; i <= MAX_FETCHED_BY_NAME; i++) await create(path, delta(`delta-many-${i}`));
    };
    expect(await step(many)).toEqual(['metadata list', 'full list']);
  });

  it('uses a full list sent in answer to the metadata list as it is (a server that ignores the as= parameter)', async () => {
    const real = readerFor('settings the project reads itself');
    let fullLists = 0;
    const ignoring: ClusterReader = {
      listSidecarSets: (signal) => {
        fullLists += 1;
        return real.listSidecarSets(signal);
      },
      listSidecarSetMetadata: (signal) => real.listSidecarSets(signal),
      readSidecarSet: () => Promise.reject(new Error('not asked')),
      readNamespace: (name, signal) => real.readNamespace(name, signal),
    };
    const source = kubeSidecarSetSource(ignoring);
    const first = await source.list();
    await expect(source.list()).resolves.toEqual(first);
    expect(fullLists).toBe(1);
  });

  it('reads namespace labels, and leaves out a namespace that does not exist', async () => {
    await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { team: 'a' } } });
    for (const { name } of READERS) {
      const labels = await kubeNamespaceSource(readerFor(name)).labels(['team-a', 'no-such-namespace']);
      expect([...labels.keys()]).toEqual(['team-a']);
      // The API server adds the name label to every namespace.
      expect(labels.get('team-a')).toEqual({ team: 'a', 'kubernetes.io/metadata.name': 'team-a' });
    }
  });
});
