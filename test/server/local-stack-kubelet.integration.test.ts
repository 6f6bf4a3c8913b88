/**
 * `npm start --test-kubelet`'s stack: the test kubelet runs beside the
 * webhooks, so an injected pod becomes Running and Ready with a status for
 * its sidecar, and stop() ends it with the rest.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { imageIdOf } from '../../control-plane/kubelet-status.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import { untilInjected } from '../../functions/server/until-injected.ts';
import { parseSingleObject } from '../../lib/kube/yaml-objects.ts';
import { isReady, waitForPod } from '../../testkit/cluster-pods.ts';

const startTimeoutMs = 5 * 60_000;

describeWithControlPlane('the local stack with the test kubelet', () => {
  let stack: LocalStack | undefined;

  beforeAll(async () => {
    stack = await startLocalStack({ testKubelet: { readyDelayMs: 100 } });
  }, startTimeoutMs);

  afterAll(async () => {
    await stack?.stop();
  }, startTimeoutMs);

  it('starts the examples\' injected pod: Running and Ready, the sidecar with its image and image ID', async () => {
    const cp = stack!.cp;
    await cp.apply(await readFile('examples/sidecarset.yaml', 'utf8'));
    // The policy path (the default) sees the new set once the API server's param cache has it.
    await untilInjected((method, path, body) => cp.request('admin', method, path, body), 'default', parseSingleObject(await readFile('examples/pod.yaml', 'utf8'), 'examples/pod.yaml'));
    await cp.apply(await readFile('examples/pod.yaml', 'utf8'));
    const pod = await waitForPod(cp, 'default', 'web', isReady);
    expect(pod?.status?.phase).toBe('Running');
    const names = pod?.spec?.containers.map((c) => c.name) ?? [];
    expect(names).toContain('log-agent');
    for (const container of pod?.spec?.containers ?? []) {
      expect(pod?.status?.containerStatuses?.find((s) => s.name === container.name)).toMatchObject({ image: container.image, imageID: imageIdOf(container.image ?? ''), ready: true });
    }
    // The counter moves once the kubelet has read its write's answer, which may come after the pod is seen ready.
    await stack!.kubelet?.idle();
    expect(stack!.kubelet?.counters.podsStarted).toBe(1);
  });
});
