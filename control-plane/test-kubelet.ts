/**
 * A test kubelet for the control plane, which has none: it does to pods what
 * a kubelet would, so that tests, `npm start --test-kubelet` and the
 * benchmarks can watch in-place sidecar rollouts happen. It runs no
 * container; it only writes the statuses a kubelet would write.
 *
 * - A new pod (no container statuses yet) starts after `startDelayMs`
 *   (default 0): phase Running; conditions PodScheduled, Initialized,
 *   ContainersReady and Ready True; init containers terminated (Completed),
 *   native sidecars (init containers with restartPolicy Always) and every
 *   container running, started and ready, restart count 0, status image =
 *   the spec image, imageID = a digest of the normalised image
 *   (kubelet-status.ts imageIdOf: `nginx` and `docker.io/library/nginx:latest`
 *   get the same ID). It is not bound to a node: that is a scheduler's job.
 *   Conditions it does not own (a reconciler's SidecarSetUpgradable) are
 *   kept through every status it writes, as the kubelet's status manager does.
 * - A container whose spec image differs from its status image (an in-place
 *   update) restarts at once: the new image and its ID (unchanged when the
 *   normalised image is the same), restart count + 1, the old instance as
 *   lastState terminated, the container and the pod (Ready, ContainersReady)
 *   not ready; `readyDelayMs` later (default 1000) the container and the pod
 *   are ready again. When the new image is another image than the one the
 *   container ran (another image ID), the kubelet pulls it first: the
 *   container becomes ready `pullDelayMs` (default 5000) later still, as a
 *   kubelet pulling a new image of some tens of MB would be. New pods start
 *   without it (`startDelayMs` covers them), and so does a restart to the same
 *   image under another name.
 * - A bad image (`badImage`, by default one whose repository path or tag
 *   contains `invalid` or `bad`) cannot be pulled: the container waits in
 *   ErrImagePull, then (after `readyDelayMs`) ImagePullBackOff, with the spec
 *   image and imageID '', not ready, and the pod is never Ready until the
 *   image is changed to a good one. A container that only waited had no
 *   instance to stop, so fixing its image counts no restart.
 * - A pod with a deletionTimestamp is deleted with gracePeriodSeconds 0 and a
 *   uid precondition, as a kubelet confirms that its containers stopped. (The
 *   API server deletes an unbound pod at once; only pods with a nodeName wait
 *   for this.)
 *
 * How: one list-then-watch per scope (pod-watch.ts; all namespaces, or the
 * given ones), the latest version of each pod kept, one timer per pod for
 * its next delayed step, and a queue of pods to act on worked by at most
 * `writeConcurrency` requests at a time, one at a time per pod. Status writes
 * are JSON merge patches of pods/status carrying the observed
 * resourceVersion, so a write over a newer version fails with 409 and the
 * step is recomputed from a fresh read. It writes as the admin.
 */
import type { Pod, PodStatus } from '../lib/kube/types.ts';
import type { ControlPlane, ControlPlaneResponse } from './harness.ts';
import { defaultBadImage, nextStep, pullsNewImage, statusAfter, type BadImage, type KubeletStep } from './kubelet-status.ts';
import { watchPods, type PodEventType } from './pod-watch.ts';

export interface TestKubeletOptions {
  /** Namespaces to serve; all when unset. */
  namespaces?: readonly string[];
  /** How long a new pod takes to start (ms, default 0). */
  startDelayMs?: number;
  /** How long a restarted container takes to become ready (ms, default 1000). */
  readyDelayMs?: number;
  /**
   * How much longer a restarted container takes when its image changed, for
   * the pull (ms, default {@link DEFAULT_PULL_DELAY_MS}); 0 for suites that
   * want readyDelayMs alone.
   */
  pullDelayMs?: number;
  /** Which images cannot be pulled (default {@link defaultBadImage}). */
  badImage?: BadImage;
  /** At most this many requests at a time (default 16). */
  writeConcurrency?: number;
  /** Told about failed requests and watches, which are retried. */
  onError?: (message: string) => void;
}

export interface TestKubeletCounters {
  /** Pods given their first statuses. */
  podsStarted: number;
  /** Containers restarted for a changed image. */
  restarts: number;
  /** Successful status writes and deletions. */
  writes: number;
  /** Writes refused because the pod had changed (409), then redone from a fresh read. */
  conflicts: number;
  /** Pods whose deletion was confirmed. */
  deletions: number;
  /** Failed requests (not conflicts), retried. */
  errors: number;
  /** Lists taken again after the first (the watch could not resume). */
  relists: number;
}

export interface TestKubelet {
  readonly counters: Readonly<TestKubeletCounters>;
  /**
   * Resolves once the pods are listed and nothing is pending: no timer, no
   * queued pod, no request in flight. A change made just before the call may
   * not have reached the watch yet: wait for the pod state you expect, or
   * call this after it.
   */
  idle(): Promise<void>;
  /** Ends the watches, timers and requests; resolves when nothing is left running. Idempotent. */
  stop(): Promise<void>;
}

/**
 * The default pull delay. Kruise's e2e "paused" spec (both API versions)
 * changes the image, waits 5 s and pauses, expecting the first pod still
 * restarting: a pull and a readiness of 6 s in all leave the reconciler's
 * next pod for after the pause, as a real kubelet would.
 */
export const DEFAULT_PULL_DELAY_MS = 5_000;

const conflictRetries = 10;
const firstErrorRetryMs = 100;
const lastErrorRetryMs = 2_000;

interface PodEntry {
  pod: Pod;
  timer?: NodeJS.Timeout;
  /** The step the timer waits for. */
  timerFor?: KubeletStep['kind'];
  /** The delayed step whose time has come. */
  due?: KubeletStep['kind'];
  /** The last restart pulled a new image: its readiness waits pullDelayMs more. */
  pulling: boolean;
  queued: boolean;
  busy: boolean;
  /** Deleted (or no longer listed) while a request for it was in flight: dropped when that ends. */
  gone: boolean;
  conflicts: number;
  errorRetryMs: number;
}

const keyOf = (pod: Pod): string => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;

/** True when version a is older than b (resourceVersions are etcd revisions here; unknown forms count as newer). */
function olderThan(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}

function podPath(namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
}

/** Starts the test kubelet on a control plane; stop() it before the control plane. */
export function startTestKubelet(cp: ControlPlane, options: TestKubeletOptions = {}): TestKubelet {
  const startDelayMs = options.startDelayMs ?? 0;
  const readyDelayMs = options.readyDelayMs ?? 1000;
  const pullDelayMs = options.pullDelayMs ?? DEFAULT_PULL_DELAY_MS;
  const badImage = options.badImage ?? defaultBadImage;
  const concurrency = options.writeConcurrency ?? 16;
  for (const [name, value] of [['startDelayMs', startDelayMs], ['readyDelayMs', readyDelayMs], ['pullDelayMs', pullDelayMs], ['writeConcurrency', concurrency]] as const) {
    if (!Number.isSafeInteger(value) || value < (name === 'writeConcurrency' ? 1 : 0)) {
      throw new Error(`test kubelet: ${name} must be an integer of at least ${name === 'writeConcurrency' ? 1 : 0}, got ${value}`);
    }
  }
  const counters: TestKubeletCounters = { podsStarted: 0, restarts: 0, writes: 0, conflicts: 0, deletions: 0, errors: 0, relists: 0 };
  const pods = new Map<string, PodEntry>();
  const queue: string[] = [];
  const deletedUids = new Set<string>();
  let inFlight = 0;
  let stopped = false;
  const running = new Set<Promise<void>>();
  let idleWaiters: (() => void)[] = [];

  const report = (message: string) => {
    options.onError?.(`test kubelet: ${message}`);
  };

  const isIdle = (): boolean =>
    watch.synced() && queue.length === 0 && inFlight === 0 && [...pods.values()].every((entry) => entry.timer === undefined && !entry.busy);

  const checkIdle = () => {
    if (idleWaiters.length === 0 || !isIdle()) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const wake of waiters) wake();
  };

  const clearTimer = (entry: PodEntry) => {
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    entry.timer = undefined;
    entry.timerFor = undefined;
  };

  const setTimer = (key: string, entry: PodEntry, kind: KubeletStep['kind'], ms: number) => {
    clearTimer(entry);
    entry.timerFor = kind;
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      entry.timerFor = undefined;
      entry.due = kind;
      enqueue(key);
    }, ms);
  };

  const enqueue = (key: string) => {
    const entry = pods.get(key);
    if (stopped || entry === undefined || entry.queued) return;
    entry.queued = true;
    queue.push(key);
    pump();
  };

  /** Keeps the newer of the kept and the given version. */
  const remember = (pod: Pod): PodEntry => {
    const key = keyOf(pod);
    const entry = pods.get(key);
    if (entry === undefined) {
      const created: PodEntry = { pod, queued: false, busy: false, pulling: false, gone: false, conflicts: 0, errorRetryMs: firstErrorRetryMs };
      pods.set(key, created);
      return created;
    }
    if (entry.pod.metadata?.uid !== pod.metadata?.uid) {
      // The same name, another pod: its predecessor's timers mean nothing now.
      clearTimer(entry);
      entry.due = undefined;
      entry.pulling = false;
      entry.pod = pod;
      entry.gone = false;
    } else if (!olderThan(pod.metadata?.resourceVersion, entry.pod.metadata?.resourceVersion)) {
      entry.pod = pod;
      entry.gone = false;
    }
    return entry;
  };

  /** Drops a pod; `last`, its deleted version, keeps an older write's answer from bringing it back. */
  const forget = (key: string, last?: Pod) => {
    const entry = pods.get(key);
    if (entry === undefined) return;
    if (last !== undefined) entry.pod = last;
    clearTimer(entry);
    if (entry.busy) entry.gone = true;
    else pods.delete(key);
  };

  const watch = watchPods(cp, options.namespaces, {
    listed(namespace, listed) {
      const present = new Set(listed.map(keyOf));
      for (const key of pods.keys()) {
        if ((namespace === undefined || key.startsWith(`${namespace}/`)) && !present.has(key)) forget(key);
      }
      for (const pod of listed) {
        remember(pod);
        enqueue(keyOf(pod));
      }
      counters.relists = watch.relists();
      checkIdle();
    },
    changed(type: PodEventType, pod) {
      if (type === 'DELETED') {
        const entry = pods.get(keyOf(pod));
        if (entry?.pod.metadata?.uid === pod.metadata?.uid) forget(keyOf(pod), pod);
        checkIdle();
        return;
      }
      remember(pod);
      enqueue(keyOf(pod));
    },
    failed(message) {
      counters.errors++;
      report(message);
    },
  });

  const retryLater = (key: string, entry: PodEntry) => {
    const ms = entry.errorRetryMs;
    entry.errorRetryMs = Math.min(entry.errorRetryMs * 2, lastErrorRetryMs);
    clearTimer(entry);
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      enqueue(key);
    }, ms);
  };

  /** Reads the pod again after a conflict; false when it is gone. */
  const reread = async (key: string, entry: PodEntry): Promise<boolean> => {
    const { namespace = '', name = '' } = entry.pod.metadata ?? {};
    const res = await cp.request('admin', 'GET', podPath(namespace, name));
    if (res.status === 404) return false;
    if (res.status !== 200) throw new Error(`reading pod ${key} answered ${res.status}: ${res.body.slice(0, 200)}`);
    remember(JSON.parse(res.body) as Pod);
    return true;
  };

  const writeStatus = (pod: Pod, status: PodStatus): Promise<ControlPlaneResponse> => {
    const { namespace = '', name = '', resourceVersion } = pod.metadata ?? {};
    return cp.request('admin', 'PATCH', `${podPath(namespace, name)}/status`, { metadata: { resourceVersion }, status }, 'application/merge-patch+json');
  };

  /** Does what the pod needs now, or sets the timer for its next delayed step. */
  const act = async (key: string, entry: PodEntry): Promise<void> => {
    const pod = entry.pod;
    const step = nextStep(pod, badImage);
    if (step.kind === 'none') {
      clearTimer(entry);
      entry.due = undefined;
      return;
    }
    const delayMs = step.kind === 'start' ? startDelayMs : step.kind === 'backOff' ? readyDelayMs : step.kind === 'ready' ? readyDelayMs + (entry.pulling ? pullDelayMs : 0) : 0;
    if (delayMs > 0 && entry.due !== step.kind) {
      // Already waiting for this step: the wait counts from when it began.
      if (entry.timerFor !== step.kind) setTimer(key, entry, step.kind, delayMs);
      return;
    }
    clearTimer(entry);
    entry.due = undefined;
    const { namespace = '', name = '', uid = '' } = pod.metadata ?? {};
    if (step.kind === 'delete') {
      if (deletedUids.has(uid)) return;
      const res = await cp.request('admin', 'DELETE', podPath(namespace, name), { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, preconditions: { uid } });
      if (res.status === 200 || res.status === 202 || res.status === 404 || res.status === 409) {
        // 404 or a uid conflict: that pod is gone already.
        if (res.status !== 404 && res.status !== 409) {
          counters.deletions++;
          counters.writes++;
        }
        deletedUids.add(uid);
        return;
      }
      throw new Error(`deleting pod ${key} answered ${res.status}: ${res.body.slice(0, 200)}`);
    }
    const res = await writeStatus(pod, statusAfter(pod, step, badImage, new Date()));
    if (res.status === 200) {
      counters.writes++;
      if (step.kind === 'start') counters.podsStarted++;
      if (step.kind === 'restart') {
        counters.restarts += step.containers.length;
        entry.pulling = pullsNewImage(pod, step, badImage);
      } else if (step.kind === 'ready') {
        entry.pulling = false;
      }
      entry.conflicts = 0;
      remember(JSON.parse(res.body) as Pod);
      // The next step (a readiness timer) follows from the written version.
      enqueue(key);
      return;
    }
    if (res.status === 409) {
      counters.conflicts++;
      entry.conflicts++;
      // The delayed step stays due: the fresh version decides whether it still applies.
      if (step.kind !== 'restart') entry.due = step.kind;
      if (entry.conflicts > conflictRetries) {
        entry.conflicts = 0;
        throw new Error(`pod ${key}: ${conflictRetries} conflicts in a row; retrying later`);
      }
      if (await reread(key, entry)) enqueue(key);
      else forget(key);
      return;
    }
    if (res.status === 404) {
      forget(key);
      return;
    }
    if (step.kind !== 'restart') entry.due = step.kind;
    throw new Error(`writing the status of pod ${key} answered ${res.status}: ${res.body.slice(0, 200)}`);
  };

  const work = async (key: string): Promise<void> => {
    const entry = pods.get(key);
    if (entry === undefined) return;
    entry.busy = true;
    try {
      await act(key, entry);
      entry.errorRetryMs = firstErrorRetryMs;
    } catch (error) {
      counters.errors++;
      report((error as Error).message);
      if (!stopped && !entry.gone && pods.get(key) === entry) retryLater(key, entry);
    } finally {
      entry.busy = false;
      if (entry.gone && pods.get(key) === entry) {
        clearTimer(entry);
        pods.delete(key);
      }
    }
  };

  function pump(): void {
    while (!stopped && inFlight < concurrency) {
      const index = queue.findIndex((key) => pods.get(key)?.busy !== true);
      if (index < 0) break;
      const [key] = queue.splice(index, 1) as [string];
      const entry = pods.get(key);
      if (entry === undefined) continue;
      entry.queued = false;
      inFlight++;
      const task = work(key).finally(() => {
        inFlight--;
        running.delete(task);
        pump();
        checkIdle();
      });
      running.add(task);
    }
  }

  let stopping: Promise<void> | undefined;
  return {
    counters,
    idle() {
      if (stopped) return Promise.resolve();
      return new Promise((resolve) => {
        idleWaiters.push(resolve);
        checkIdle();
      });
    },
    stop() {
      stopping ??= (async () => {
        stopped = true;
        for (const entry of pods.values()) clearTimer(entry);
        queue.length = 0;
        await watch.stop();
        await Promise.all(running);
        for (const entry of pods.values()) clearTimer(entry);
        pods.clear();
        const waiters = idleWaiters;
        idleWaiters = [];
        for (const wake of waiters) wake();
      })();
      return stopping;
    },
  };
}
