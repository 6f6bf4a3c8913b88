/**
 * When the test kubelet pulls an image before a restarted container can run
 * (kubelet-status.ts pullsNewImage): the readiness of such a restart waits
 * the pull delay too (test-kubelet.ts), so Kruise's "paused" spec sees the
 * first pod still restarting 5 s after the image change. Pure functions; an
 * integration suite by name only, as everything importing control-plane/ is
 * (test/architecture), like the image-ID checks in test-kubelet.integration.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { defaultBadImage, imageIdOf, nextStep, pullsNewImage, statusAfter } from '../../control-plane/kubelet-status.ts';
import type { Container, Pod } from '../../lib/kube/types.ts';

const now = new Date('2026-12-06T04:00:00Z');

/** A pod started by the kubelet with these containers, then given `images` (name -> new image). */
function changed(containers: Container[], images: Record<string, string>, initContainers: Container[] = []): Pod {
  const created: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers, initContainers } };
  const started: Pod = { ...created, status: statusAfter(created, { kind: 'start' }, defaultBadImage, now) };
  const retag = (c: Container): Container => (images[c.name] !== undefined ? { ...c, image: images[c.name] } : c);
  return { ...started, spec: { containers: containers.map(retag), initContainers: initContainers.map(retag) } };
}

describe('the test kubelet pulls a new image before it restarts a container', () => {
  it('pulls when a restarted container gets another image', () => {
    const pod = changed([{ name: 'app', image: 'app:1' }, { name: 'sidecar', image: 'nginx:1.25' }], { sidecar: 'nginx:1.27' });
    const step = nextStep(pod, defaultBadImage);
    expect(step).toEqual({ kind: 'restart', containers: ['sidecar'] });
    expect(pullsNewImage(pod, step, defaultBadImage)).toBe(true);
  });

  it('does not pull the same image spelled another way: the node has it', () => {
    const pod = changed([{ name: 'sidecar', image: 'nginx' }], { sidecar: 'docker.io/library/nginx:latest' });
    const step = nextStep(pod, defaultBadImage);
    expect(step.kind).toBe('restart');
    expect(imageIdOf('nginx')).toBe(imageIdOf('docker.io/library/nginx:latest'));
    expect(pullsNewImage(pod, step, defaultBadImage)).toBe(false);
  });

  it('does not pull an image that cannot be pulled: it fails at once', () => {
    const pod = changed([{ name: 'sidecar', image: 'nginx:1.25' }], { sidecar: 'nginx:invalid' });
    expect(pullsNewImage(pod, nextStep(pod, defaultBadImage), defaultBadImage)).toBe(false);
  });

  it("pulls for a native sidecar's new image as for a container's", () => {
    const pod = changed([{ name: 'app', image: 'app:1' }], { proxy: 'envoy:v2' }, [{ name: 'proxy', image: 'envoy:v1', restartPolicy: 'Always' }]);
    const step = nextStep(pod, defaultBadImage);
    expect(step).toEqual({ kind: 'restart', containers: ['proxy'] });
    expect(pullsNewImage(pod, step, defaultBadImage)).toBe(true);
  });

  it('pulls nothing for any other step: a new pod, a readiness, nothing to do', () => {
    const created: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
    expect(pullsNewImage(created, nextStep(created, defaultBadImage), defaultBadImage)).toBe(false);
    expect(pullsNewImage(created, { kind: 'ready' }, defaultBadImage)).toBe(false);
    expect(pullsNewImage(created, { kind: 'none' }, defaultBadImage)).toBe(false);
  });
});
