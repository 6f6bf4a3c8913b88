/**
 * What the test kubelet (test-kubelet.ts) reports for a pod, as pure
 * functions of the pod it observed and the time: which step is next for the
 * pod, and the status that step writes. No I/O, so the same pod always gives
 * the same answer and the watch loop only decides when to write it.
 */
import { createHash } from 'node:crypto';
import { normalizeImageReference } from '../lib/kube/image-reference.ts';
import type { Container, JsonObject, Pod, PodCondition, PodStatus } from '../lib/kube/types.ts';

/**
 * The next thing a kubelet does to a pod:
 * - `delete`: the pod is being deleted; confirm it (delete with grace period 0);
 * - `start`: the pod has no container statuses yet; start every container;
 * - `restart`: the spec image of these containers differs from their status image (an in-place update);
 * - `backOff`: a container failed to pull its image (ErrImagePull) and now backs off (ImagePullBackOff);
 * - `ready`: a restarted container runs and its readiness probe is about to pass;
 * - `none`: nothing to do until the pod changes.
 */
export type KubeletStep =
  | { kind: 'delete' }
  | { kind: 'start' }
  | { kind: 'restart'; containers: string[] }
  | { kind: 'backOff' }
  | { kind: 'ready' }
  | { kind: 'none' };

/** Whether an image cannot be pulled: such a container waits forever. */
export type BadImage = (image: string) => boolean;

/**
 * The default: the image's repository path (the registry left out) or tag
 * contains `invalid` or `bad`, as the images of Kruise's e2e "failed image"
 * scenarios do (`nginx:invalid`, `busybox:bad`).
 */
export const defaultBadImage: BadImage = (image) => {
  const normalised = normalizeImageReference(image);
  const withoutRegistry = normalised.slice(normalised.indexOf('/') + 1).split('@')[0] ?? '';
  return /invalid|bad/i.test(withoutRegistry);
};

/** The repository of a normalised reference: without its tag and digest. */
function repositoryOf(normalised: string): string {
  const withoutDigest = normalised.split('@')[0] ?? normalised;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  return colon < 0 ? withoutDigest : withoutDigest.slice(0, colon);
}

/**
 * The image ID a container runtime reports for an image: `<repository>@sha256:<hex>`.
 * A reference that names a digest gets that digest; otherwise the digest is
 * the SHA-256 of the normalised reference, so `nginx` and
 * `docker.io/library/nginx:latest` (the same image) get the same ID and
 * `nginx:1.25` another one.
 */
export function imageIdOf(image: string): string {
  const normalised = normalizeImageReference(image);
  const at = normalised.indexOf('@');
  if (at >= 0) return `${repositoryOf(normalised)}${normalised.slice(at)}`;
  return `${repositoryOf(normalised)}@sha256:${createHash('sha256').update(normalised).digest('hex')}`;
}

/** The containers a kubelet keeps running: the app containers and the native sidecars (init containers with restartPolicy Always). */
function liveContainers(pod: Pod): { container: Container; init: boolean }[] {
  const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((container) => ({ container, init: true }));
  return [...sidecars, ...(pod.spec?.containers ?? []).map((container) => ({ container, init: false }))];
}

function statusesOf(pod: Pod, init: boolean): JsonObject[] {
  const listed = init ? pod.status?.initContainerStatuses : pod.status?.containerStatuses;
  return Array.isArray(listed) ? (listed as JsonObject[]) : [];
}

function statusOf(pod: Pod, name: string, init: boolean): JsonObject | undefined {
  return statusesOf(pod, init).find((s) => s.name === name);
}

interface ContainerState {
  running?: { startedAt?: string };
  waiting?: { reason?: string; message?: string };
  terminated?: JsonObject;
}

function stateOf(status: JsonObject | undefined): ContainerState {
  const state = status?.state;
  return typeof state === 'object' && state !== null ? (state) : {};
}

/** The step the pod needs next (see {@link KubeletStep}). */
export function nextStep(pod: Pod, badImage: BadImage): KubeletStep {
  const metadata = pod.metadata ?? {};
  if (metadata.deletionTimestamp !== undefined) {
    // Grace period 0 is what this kubelet's own confirmation leaves on a pod
    // that finalizers still hold: nothing more to confirm.
    return metadata.deletionGracePeriodSeconds === 0 ? { kind: 'none' } : { kind: 'delete' };
  }
  if (!Array.isArray(pod.status?.containerStatuses)) return { kind: 'start' };
  const live = liveContainers(pod);
  const changed = live.filter(({ container, init }) => statusOf(pod, container.name, init)?.image !== container.image).map(({ container }) => container.name);
  if (changed.length > 0) return { kind: 'restart', containers: changed };
  const states = live.map(({ container, init }) => ({ status: statusOf(pod, container.name, init), image: container.image ?? '' }));
  if (states.some(({ status }) => stateOf(status).waiting?.reason === 'ErrImagePull')) return { kind: 'backOff' };
  if (states.some(({ status, image }) => stateOf(status).running !== undefined && status?.ready !== true && !badImage(image))) return { kind: 'ready' };
  return { kind: 'none' };
}

/**
 * Whether a restart pulls an image first: one of the restarted containers
 * gets an image whose ID differs from the one it ran (a real kubelet pulls a
 * new image before it can start the container; `nginx` changed to
 * `docker.io/library/nginx:latest` is the same image, already there). A bad
 * image is not pulled at all (it fails at once, ErrImagePull).
 */
export function pullsNewImage(pod: Pod, step: KubeletStep, badImage: BadImage): boolean {
  if (step.kind !== 'restart') return false;
  return liveContainers(pod).some(({ container, init }) => {
    if (!step.containers.includes(container.name)) return false;
    const image = container.image ?? '';
    if (badImage(image)) return false;
    return statusOf(pod, container.name, init)?.imageID !== imageIdOf(image);
  });
}

/** A container ID as containerd reports one, deterministic per pod, container and instance. */
function containerIdOf(pod: Pod, name: string, restartCount: number): string {
  const digest = createHash('sha256').update(`${pod.metadata?.uid ?? ''}/${name}/${restartCount}`).digest('hex');
  return `containerd://${digest}`;
}

/** Seconds, as the API server stores metav1.Time. */
function timestamp(now: Date): string {
  return `${now.toISOString().slice(0, 19)}Z`;
}

function pullFailure(image: string): ContainerState {
  return { waiting: { reason: 'ErrImagePull', message: `failed to pull image "${image}": the test kubelet treats it as unpullable` } };
}

/** A container's first instance, as the pod starts. */
function startedStatus(pod: Pod, container: Container, badImage: BadImage, now: Date): JsonObject {
  const image = container.image ?? '';
  if (badImage(image)) {
    return { name: container.name, image, imageID: '', ready: false, started: false, restartCount: 0, state: pullFailure(image), lastState: {} };
  }
  return {
    name: container.name,
    image,
    imageID: imageIdOf(image),
    containerID: containerIdOf(pod, container.name, 0),
    ready: true,
    started: true,
    restartCount: 0,
    state: { running: { startedAt: timestamp(now) } },
    lastState: {},
  };
}

/** A completed init container (one without restartPolicy Always). */
function completedInitStatus(pod: Pod, container: Container, now: Date): JsonObject {
  const image = container.image ?? '';
  const at = timestamp(now);
  return {
    name: container.name,
    image,
    imageID: imageIdOf(image),
    containerID: containerIdOf(pod, container.name, 0),
    ready: false,
    started: false,
    restartCount: 0,
    state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: at, finishedAt: at, containerID: containerIdOf(pod, container.name, 0) } },
    lastState: {},
  };
}

/**
 * The container after its spec image changed: the running instance (if any)
 * is stopped and becomes lastState, counting one restart; the new one runs
 * but is not ready yet, or waits in ErrImagePull when its image is bad. A
 * container that was only waiting had no instance to stop: no restart counted.
 */
function restartedStatus(pod: Pod, container: Container, previous: JsonObject | undefined, badImage: BadImage, now: Date): JsonObject {
  const image = container.image ?? '';
  const before = stateOf(previous);
  const wasRunning = before.running !== undefined;
  const previousCount = typeof previous?.restartCount === 'number' ? previous.restartCount : 0;
  const restartCount = previousCount + (wasRunning ? 1 : 0);
  const lastState = wasRunning
    ? {
        terminated: {
          exitCode: 0,
          reason: 'Completed',
          startedAt: before.running?.startedAt ?? timestamp(now),
          finishedAt: timestamp(now),
          ...(typeof previous?.containerID === 'string' ? { containerID: previous.containerID } : {}),
        },
      }
    : (previous?.lastState ?? {});
  if (badImage(image)) {
    return { name: container.name, image, imageID: '', ready: false, started: false, restartCount, state: pullFailure(image), lastState };
  }
  return {
    name: container.name,
    image,
    imageID: imageIdOf(image),
    containerID: containerIdOf(pod, container.name, restartCount),
    ready: false,
    started: true,
    restartCount,
    state: { running: { startedAt: timestamp(now) } },
    lastState,
  };
}

function condition(previous: readonly PodCondition[], type: string, value: boolean, now: Date): PodCondition {
  const status = value ? 'True' : 'False';
  const before = previous.find((c) => c.type === type);
  const lastTransitionTime = before?.status === status && typeof before.lastTransitionTime === 'string' ? before.lastTransitionTime : timestamp(now);
  return {
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime,
    ...(value || type === 'PodScheduled' || type === 'Initialized' ? {} : { reason: 'ContainersNotReady', message: 'containers with unready status' }),
  };
}

/** The pod conditions the kubelet writes (k8s pkg/kubelet/types PodConditionsByKubelet, without the feature-gated ones). */
const KUBELET_CONDITIONS: ReadonlySet<string> = new Set(['PodScheduled', 'Initialized', 'ContainersReady', 'Ready']);

/** Phase and conditions from the container statuses, as the kubelet's status manager derives them. */
function withPodState(pod: Pod, initStatuses: JsonObject[], containerStatuses: JsonObject[], now: Date): PodStatus {
  const live = liveContainers(pod).map(({ container, init }) => (init ? initStatuses : containerStatuses).find((s) => s.name === container.name));
  const allReady = live.every((s) => s?.ready === true);
  // A pod is Running once every container has run; one that never started stays Pending.
  const allRunning = live.every((s) => stateOf(s).running !== undefined);
  const phase = pod.status?.phase === 'Running' || allRunning ? 'Running' : 'Pending';
  const previous = pod.status?.conditions ?? [];
  return {
    phase,
    conditions: [
      // The kubelet's status manager keeps the conditions it does not own (a reconciler's SidecarSetUpgradable, readiness gates) ahead of its own;
      // the status goes out as a merge patch, which replaces the whole list.
      ...previous.filter((c) => !KUBELET_CONDITIONS.has(c.type)),
      condition(previous, 'PodScheduled', true, now),
      condition(previous, 'Initialized', true, now),
      condition(previous, 'ContainersReady', allReady, now),
      condition(previous, 'Ready', allReady, now),
    ],
    ...(initStatuses.length > 0 ? { initContainerStatuses: initStatuses } : {}),
    containerStatuses,
    startTime: typeof pod.status?.startTime === 'string' ? pod.status.startTime : timestamp(now),
  };
}

/** The status the pod has after `step` (for `delete` and `none`: its status unchanged). */
export function statusAfter(pod: Pod, step: KubeletStep, badImage: BadImage, now: Date): PodStatus {
  const inits = pod.spec?.initContainers ?? [];
  const containers = pod.spec?.containers ?? [];
  switch (step.kind) {
    case 'start':
      return withPodState(
        pod,
        inits.map((c) => (c.restartPolicy === 'Always' ? startedStatus(pod, c, badImage, now) : completedInitStatus(pod, c, now))),
        containers.map((c) => startedStatus(pod, c, badImage, now)),
        now,
      );
    case 'restart': {
      const update = (container: Container, init: boolean): JsonObject => {
        const previous = statusOf(pod, container.name, init);
        if (!step.containers.includes(container.name) || (init && container.restartPolicy !== 'Always')) {
          return previous ?? (init ? completedInitStatus(pod, container, now) : startedStatus(pod, container, badImage, now));
        }
        return restartedStatus(pod, container, previous, badImage, now);
      };
      return withPodState(pod, inits.map((c) => update(c, true)), containers.map((c) => update(c, false)), now);
    }
    case 'backOff':
    case 'ready': {
      const advance = (status: JsonObject, image: string): JsonObject => {
        const state = stateOf(status);
        if (step.kind === 'backOff' && state.waiting?.reason === 'ErrImagePull') {
          return { ...status, state: { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}"` } } };
        }
        if (step.kind === 'ready' && state.running !== undefined && !badImage(image)) return { ...status, ready: true };
        return status;
      };
      const advanceAll = (specs: readonly Container[], init: boolean): JsonObject[] =>
        statusesOf(pod, init).map((s) => advance(s, specs.find((c) => c.name === s.name)?.image ?? ''));
      return withPodState(pod, advanceAll(inits, true), advanceAll(containers, false), now);
    }
    case 'delete':
    case 'none':
      return pod.status ?? {};
  }
}
