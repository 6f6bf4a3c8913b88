/**
 * Every version of every SidecarSet the API server stores while a scenario
 * runs, seen through a watch as the admin. A watch rather than polling: a
 * status written and overwritten between two polls would go unseen, and that
 * is exactly the status a partial list would produce. The watch resumes from
 * the last version it saw when the API server restarts, so no version is
 * missed; if it cannot (410, as after a restart with the watch cache on)
 * and a set changed meanwhile, the gap is recorded and the scenario fails
 * rather than pass on incomplete evidence.
 */
import { request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { SidecarSet, SidecarSetStatus } from '../../lib/sidecarset/types.ts';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { SETS_PATH } from './status-sync-fixture.ts';

/** One stored version of one set. */
export interface ObservedVersion {
  name: string;
  resourceVersion: string;
  generation: number;
  selector: Record<string, string>;
  hash: string;
  /** undefined when the set has no status. */
  status: SidecarSetStatus | undefined;
}

export interface SetRecorder {
  /** In the order the API server stored them; the first of each set is the version when recording began. */
  readonly versions: readonly ObservedVersion[];
  /** Why versions may have been missed; empty when the record is complete. */
  readonly gaps: readonly string[];
  /**
   * Waits until everything stored has been seen and closes the watch until
   * resume(), which checks by a list that nothing changed unseen. Call it
   * before stopping the API server: a
   * kube-apiserver that has sent events on a watch keeps it open through its
   * graceful shutdown, and would not exit until killed.
   */
  pause(): Promise<void>;
  /** Resumes from a list taken now (the resync under test waits meanwhile); call it once the API server is back. */
  resume(): Promise<void>;
  /** Waits until every set's latest stored version has been seen. */
  caughtUp(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function observe(set: SidecarSet): ObservedVersion {
  const matchLabels = set.spec?.selector?.matchLabels;
  return {
    name: set.metadata?.name ?? '',
    resourceVersion: set.metadata?.resourceVersion ?? '',
    generation: set.metadata?.generation ?? 0,
    selector: { ...(matchLabels ?? {}) },
    hash: set.metadata?.annotations?.['kruise.io/sidecarset-hash'] ?? '',
    status: set.status === undefined ? undefined : { ...set.status },
  };
}

/** Lists the sets as the admin, retrying while the API server is down. */
async function listSets(cp: ControlPlane, timeoutMs: number): Promise<{ items: SidecarSet[]; resourceVersion: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await cp.request('admin', 'GET', SETS_PATH);
      if (res.status === 200) {
        const body = JSON.parse(res.body) as { items: SidecarSet[]; metadata: { resourceVersion: string } };
        return { items: body.items, resourceVersion: body.metadata.resourceVersion };
      }
      if (Date.now() > deadline) throw new Error(`listing SidecarSets answered ${res.status}: ${res.body.slice(0, 300)}`);
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await sleep(200);
  }
}

/** Starts recording: the sets as they are now, then every change. */
export async function recordSets(cp: ControlPlane): Promise<SetRecorder> {
  const versions: ObservedVersion[] = [];
  const gaps: string[] = [];
  const initial = await listSets(cp, 60_000);
  for (const set of initial.items) versions.push(observe(set));
  let from = initial.resourceVersion;
  let stopped = false;
  // A call, so that the loop reads what stop() set while it awaited.
  const isStopped = (): boolean => stopped;
  let current: ReturnType<typeof httpsRequest> | undefined;
  let paused: Promise<void> | undefined;
  let unpause = (): void => undefined;
  const lastSeen = (name: string) => versions.findLast((v) => v.name === name);

  /** One watch request; resolves when the stream ends for any reason, with whether it ended as too old to resume (410). */
  const watchOnce = () =>
    new Promise<{ expired: boolean }>((resolve) => {
      let expired = false;
      const done = () => {
        resolve({ expired });
      };
      const url = new URL(`${cp.url}${SETS_PATH}?watch=1&resourceVersion=${encodeURIComponent(from)}`);
      const req = httpsRequest(url, { ca: cp.caCert, headers: { authorization: `Bearer ${cp.adminToken}`, accept: 'application/json' }, agent: false }, (res: IncomingMessage) => {
        if (res.statusCode !== 200) {
          // Anything but 410 (a 503 while the server starts) is tried again.
          expired = res.statusCode === 410;
          res.resume();
          res.on('end', done);
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
            const event = JSON.parse(line) as { type: string; object: SidecarSet & { code?: number; message?: string } };
            if (event.type === 'ERROR') {
              if (event.object.code === 410) expired = true;
              else gaps.push(`the watch from resourceVersion ${from} ended with ${event.object.code ?? '?'}: ${event.object.message ?? ''}`);
              continue;
            }
            const version = observe(event.object);
            if (version.resourceVersion !== '') from = version.resourceVersion;
            // Bookmarks carry no object state; deletions are not part of any scenario.
            if (event.type === 'ADDED' || event.type === 'MODIFIED') versions.push(version);
            else if (event.type === 'DELETED') gaps.push(`SidecarSet ${version.name} was deleted`);
          }
        });
        res.on('end', done);
        res.on('error', done);
        res.on('aborted', done);
      });
      req.on('error', done);
      current = req;
      req.end();
    });

  /**
   * A restarted API server's watch cache starts at the current revision, so
   * a watch cannot resume from before the restart (410). A list then tells
   * whether anything was missed: a set still at the version last seen was
   * not written meanwhile; one that moved on may have had versions nobody saw.
   */
  const resumeByList = async (): Promise<void> => {
    const listed = await listSets(cp, 60_000);
    for (const set of listed.items) {
      const version = observe(set);
      const seen = lastSeen(version.name);
      if (seen?.resourceVersion === version.resourceVersion) continue;
      gaps.push(`the watch did not see ${version.name} between resourceVersions ${seen?.resourceVersion ?? 'none'} and ${version.resourceVersion}`);
      versions.push(version);
    }
    from = listed.resourceVersion;
  };

  const loop = (async () => {
    while (!isStopped()) {
      await paused;
      if (isStopped()) return;
      const { expired } = await watchOnce();
      if (isStopped()) return;
      if (expired) {
        try {
          await resumeByList();
        } catch (error) {
          gaps.push(`cannot list SidecarSets to resume the watch: ${error instanceof Error ? error.message : String(error)}`);
          return;
        }
      }
      // The API server is restarting, or closed the watch: resume where it stopped.
      await sleep(100);
    }
  })();

  const caughtUp = async (timeoutMs = 60_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    const { items } = await listSets(cp, timeoutMs);
    for (const set of items) {
      const name = set.metadata?.name ?? '';
      const rv = set.metadata?.resourceVersion ?? '';
      while (!versions.some((v) => v.name === name && v.resourceVersion === rv)) {
        if (Date.now() > deadline) throw new Error(`the SidecarSet watch has not seen ${name} at resourceVersion ${rv} after ${timeoutMs} ms (gaps: ${gaps.join('; ') || 'none'})`);
        await sleep(50);
      }
    }
  };

  return {
    versions,
    gaps,
    caughtUp,
    async pause() {
      // Everything stored so far is seen first: a resume by list can then tell whether anything was missed.
      await caughtUp();
      paused ??= new Promise((resolve) => {
        unpause = resolve;
      });
      current?.destroy();
    },
    async resume() {
      // From a version the restarted server certainly has: its watch cache starts at the current revision.
      await resumeByList();
      paused = undefined;
      unpause();
    },
    async stop() {
      stopped = true;
      current?.destroy();
      unpause();
      await loop;
    },
  };
}
