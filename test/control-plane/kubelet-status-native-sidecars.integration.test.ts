/**
 * The test kubelet's steps for native sidecars, as Kubernetes v1.36's
 * kubelet takes them (pkg/kubelet/kuberuntime/kuberuntime_container.go,
 * computeInitContainerActions: "Restart running sidecar containers which
 * have had their definition changed"): a running native sidecar whose
 * image changed is restarted and reported in initContainerStatuses; a
 * completed plain init container is never run again.
 */
import { describe, expect, it } from '@jest/globals';
import { defaultBadImage, imageIdOf, nextStep, statusAfter } from '../../control-plane/kubelet-status.ts';
import type { JsonObject, Pod } from '../../lib/kube/types.ts';

const NOW = new Date('2026-12-06T05:00:00Z');
const LATER = new Date('2026-12-06T05:01:00Z');

function started(): Pod {
  const pod: Pod = {
    metadata: { name: 'p', namespace: 'default', uid: 'uid-p' },
    spec: {
      initContainers: [
        { name: 'setup', image: 'busybox:1' },
        { name: 'proxy', image: 'envoy:1', restartPolicy: 'Always' },
      ],
      containers: [{ name: 'app', image: 'nginx:1' }],
    },
  };
  return { ...pod, status: statusAfter(pod, { kind: 'start' }, defaultBadImage, NOW) };
}

function withInitImage(pod: Pod, name: string, image: string): Pod {
  return { ...pod, spec: { ...pod.spec!, initContainers: pod.spec!.initContainers!.map((c) => (c.name === name ? { ...c, image } : c)) } };
}

const initStatus = (pod: Pod, name: string) => (pod.status?.initContainerStatuses as JsonObject[]).find((s) => s.name === name);
const ready = (pod: Pod) => pod.status?.conditions?.find((c) => c.type === 'Ready')?.status;

describe('native sidecars in the test kubelet', () => {
  it('restarts a running native sidecar whose image changed, reports it in initContainerStatuses, then makes it ready', () => {
    const changed = withInitImage(started(), 'proxy', 'envoy:2');
    const step = nextStep(changed, defaultBadImage);
    expect(step).toEqual({ kind: 'restart', containers: ['proxy'] });

    const restarted: Pod = { ...changed, status: statusAfter(changed, step, defaultBadImage, LATER) };
    expect(initStatus(restarted, 'proxy')).toMatchObject({
      image: 'envoy:2',
      imageID: imageIdOf('envoy:2'),
      ready: false,
      restartCount: 1,
      state: { running: { startedAt: '2026-12-06T05:01:00Z' } },
      lastState: { terminated: { reason: 'Completed', startedAt: '2026-12-06T05:00:00Z', finishedAt: '2026-12-06T05:01:00Z' } },
    });
    // A native sidecar counts towards the pod's readiness, as in the kubelet.
    expect(ready(restarted)).toBe('False');
    expect(initStatus(restarted, 'setup')).toMatchObject({ restartCount: 0, state: { terminated: { reason: 'Completed' } } });

    expect(nextStep(restarted, defaultBadImage)).toEqual({ kind: 'ready' });
    const readyAgain: Pod = { ...restarted, status: statusAfter(restarted, { kind: 'ready' }, defaultBadImage, LATER) };
    expect(initStatus(readyAgain, 'proxy')).toMatchObject({ image: 'envoy:2', ready: true, restartCount: 1 });
    expect(ready(readyAgain)).toBe('True');
    expect(nextStep(readyAgain, defaultBadImage)).toEqual({ kind: 'none' });
  });

  it('never runs a completed plain init container again, whatever its image', () => {
    const changed = withInitImage(started(), 'setup', 'busybox:2');
    expect(nextStep(changed, defaultBadImage)).toEqual({ kind: 'none' });
    expect(initStatus(changed, 'setup')).toMatchObject({ image: 'busybox:1', restartCount: 0 });
  });
});
