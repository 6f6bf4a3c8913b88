/**
 * Pods as an informer sees them: a paginated list, then one watch from the
 * list's resourceVersion, resumed from the last version seen when the stream
 * ends (the API server closes watches after timeoutSeconds, and drops them
 * when it restarts) and restarted from a fresh list when that version is too
 * old (410 Gone). Errors wait with a growing, capped pause: never a tight loop.
 */
import { request as httpsRequest } from 'node:https';
import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Pod } from '../lib/kube/types.ts';
import type { ControlPlane } from './harness.ts';

export type PodEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface PodWatchHandlers {
  /** Every pod of the scope as a (re)list found it; pods of the scope not in it are gone. */
  listed(namespace: string | undefined, pods: Pod[]): void;
  changed(type: PodEventType, pod: Pod): void;
  /** A failed list or watch; it is retried. */
  failed(message: string): void;
}

export interface PodWatch {
  /** True once every scope has been listed. */
  synced(): boolean;
  /** How many times a list was (re)taken after the first. */
  relists(): number;
  /** Ends the watches and pending retries; resolves when every loop has ended. */
  stop(): Promise<void>;
}

const listPageSize = 500;
const watchTimeoutSeconds = 300;
const firstRetryMs = 100;
const lastRetryMs = 2_000;

interface WatchEnd {
  /** The version to resume from is too old: list again. */
  expired: boolean;
  /** The last version seen, to resume from. */
  resourceVersion: string;
}

class ListExpired extends Error {}

function scopePath(namespace: string | undefined): string {
  return namespace === undefined ? '/api/v1/pods' : `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`;
}

/** Starts one list-then-watch loop per namespace (one over all namespaces when none are given). */
export function watchPods(cp: ControlPlane, namespaces: readonly string[] | undefined, handlers: PodWatchHandlers): PodWatch {
  let stopped = false;
  // A call, so that a loop reads what stop() set while it awaited.
  const isStopped = (): boolean => stopped;
  const requests = new Set<ClientRequest>();
  const pauses = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  const syncedScopes = new Set<string | undefined>();
  const scopes = namespaces === undefined ? [undefined] : [...new Set(namespaces)];
  let relists = 0;

  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          pauses.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      pauses.add(entry);
    });

  const list = async (namespace: string | undefined): Promise<{ pods: Pod[]; resourceVersion: string }> => {
    const pods: Pod[] = [];
    let token = '';
    for (;;) {
      const query = `?limit=${listPageSize}${token === '' ? '' : `&continue=${encodeURIComponent(token)}`}`;
      const res = await cp.request('admin', 'GET', `${scopePath(namespace)}${query}`);
      // A continue token that expired mid-list: start the list again.
      if (res.status === 410) throw new ListExpired(`listing pods: ${res.body.slice(0, 200)}`);
      if (res.status !== 200) throw new Error(`listing pods answered ${res.status}: ${res.body.slice(0, 200)}`);
      const body = JSON.parse(res.body) as { items: Pod[]; metadata: { resourceVersion: string; continue?: string } };
      pods.push(...body.items);
      token = body.metadata.continue ?? '';
      if (token === '') return { pods, resourceVersion: body.metadata.resourceVersion };
    }
  };

  const watchOnce = (namespace: string | undefined, from: string): Promise<WatchEnd> =>
    new Promise((resolve, reject) => {
      let resourceVersion = from;
      let expired = false;
      let settled = false;
      const end = (error?: Error) => {
        if (settled) return;
        settled = true;
        requests.delete(req);
        if (error !== undefined && !stopped) reject(error);
        else resolve({ expired, resourceVersion });
      };
      const query = `?watch=1&allowWatchBookmarks=true&timeoutSeconds=${watchTimeoutSeconds}&resourceVersion=${encodeURIComponent(from)}`;
      const url = new URL(`${cp.url}${scopePath(namespace)}${query}`);
      const req = httpsRequest(url, { ca: cp.caCert, headers: { authorization: `Bearer ${cp.adminToken}`, accept: 'application/json' }, agent: false }, (res: IncomingMessage) => {
        if (res.statusCode !== 200) {
          expired = res.statusCode === 410;
          res.resume();
          res.on('end', () => {
            end(expired ? undefined : new Error(`watching pods answered ${res.statusCode ?? 0}`));
          });
          return;
        }
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let newline: number;
          while ((newline = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, newline).trim();
            buffered = buffered.slice(newline + 1);
            if (line === '') continue;
            let event: { type: string; object: Pod & { code?: number; message?: string } };
            try {
              event = JSON.parse(line) as typeof event;
            } catch {
              // Not a watch event: drop this stream and resume from the last version seen.
              req.destroy();
              end(new Error(`the pod watch sent a line that is not JSON: ${line.slice(0, 100)}`));
              return;
            }
            if (event.type === 'ERROR') {
              if (event.object.code === 410) expired = true;
              else handlers.failed(`the pod watch ended with ${event.object.code ?? '?'}: ${event.object.message ?? ''}`);
              continue;
            }
            const version = event.object.metadata?.resourceVersion;
            if (version !== undefined && version !== '') resourceVersion = version;
            if (event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED') handlers.changed(event.type, event.object);
          }
        });
        res.on('end', () => {
          end();
        });
        res.on('error', (error) => {
          end(error);
        });
        res.on('aborted', () => {
          end(new Error('the pod watch was cut off'));
        });
      });
      req.on('error', (error) => {
        end(error);
      });
      requests.add(req);
      req.end();
    });

  const loop = async (namespace: string | undefined): Promise<void> => {
    let from: string | undefined;
    let retryMs = firstRetryMs;
    while (!stopped) {
      try {
        if (from === undefined) {
          const listed = await list(namespace);
          if (isStopped()) return;
          if (syncedScopes.has(namespace)) relists++;
          handlers.listed(namespace, listed.pods);
          syncedScopes.add(namespace);
          from = listed.resourceVersion;
        }
        const ended = await watchOnce(namespace, from);
        from = ended.expired ? undefined : ended.resourceVersion;
        retryMs = firstRetryMs;
      } catch (error) {
        if (isStopped()) return;
        if (error instanceof ListExpired) from = undefined;
        handlers.failed((error as Error).message);
        await pause(retryMs);
        retryMs = Math.min(retryMs * 2, lastRetryMs);
      }
    }
  };

  const loops = scopes.map((namespace) => loop(namespace));

  return {
    synced: () => scopes.every((scope) => syncedScopes.has(scope)),
    relists: () => relists,
    async stop() {
      stopped = true;
      for (const req of requests) req.destroy();
      for (const entry of pauses) {
        clearTimeout(entry.timer);
        entry.resolve();
      }
      pauses.clear();
      await Promise.all(loops);
    },
  };
}
