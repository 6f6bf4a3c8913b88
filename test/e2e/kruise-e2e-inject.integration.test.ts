/**
 * Kruise's e2e "SidecarSet Injection [SidecarSetInject]" scenarios
 * (test/e2e/apps/sidecarset.go; rollout.md §7 scenarios 1 to 9) that no
 * other suite covers, on a real kube-apiserver: the pod is created through
 * the API server, the local server's pod-inject webhook injects it, and the
 * API server validates and stores the result.
 *
 * | # | Kruise scenario | where it is covered |
 * |---|---|---|
 * | 1 | no matched SidecarSet | test/golden/inject/no-match; test/sidecarset/inject.test.ts "returns the pod untouched when nothing applies" |
 * | 2 | volumes.downwardAPI | here |
 * | 3 | inject pod sidecar container (order, init container) | test/sidecarset/inject.test.ts "puts BeforeAppContainer sidecars first and AfterAppContainer ones last", "sorts injected init containers by name and puts AfterAppContainer ones after the pod own"; test/e2e/workflow.integration.test.ts 4 |
 * | 4 | volumeMounts shared with the app | test/golden/inject/share-volumes; test/sidecarset/inject.test.ts "shares app volumeMounts when shareVolumePolicy is enabled" |
 * | 5 | SubPathExpr | test/sidecarset/inject.test.ts "copies the env a shared subPathExpr refers to" |
 * | 6 | transfer Envs | test/golden/inject/transfer-env; test/sidecarset/inject.test.ts "copies transferEnv values from the named app container after IS_INJECTED, own names winning" |
 * | 7 | transfer Envs, source from a label | test/golden/inject/transfer-env; test/sidecarset/inject.test.ts "resolves the transferEnv source container from a pod label" |
 * | 8 | transfer Envs, source from an annotation | here |
 * | 9 | native-sidecar init container (commented out in Kruise) | test/sidecarset/inject.test.ts "lists native-sidecar init containers in sidecarList, not plain ones"; test/golden/inject/init-containers |
 * | 24 | inject hot upgrade (test/e2e/apps/sidecarset_hotupgrade.go) | here; test/sidecarset/inject-hot-upgrade.test.ts; test/golden/inject/hot-upgrade |
 */
import { expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { createPod } from '../../testkit/cluster-pods.ts';
import { baseSidecarSet, deploymentPod, IMAGES, sidecarAt, specOf } from '../../testkit/kruise-e2e.ts';
import { ScenarioStack } from './scenario-stack.ts';

const scenario = new ScenarioStack();

describeWithControlPlane("Kruise's SidecarSet injection e2e scenarios on a real API server", () => {
  scenario.install();

  it('2. volumes.downwardAPI: the sidecar mounts a downwardAPI volume of the set, and the API server stores the pod with it', async () => {
    const ns = 'downward-api';
    await scenario.cluster.namespace(ns);
    const set = baseSidecarSet(ns);
    const downward = { name: 'podinfo', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } };
    specOf(set).volumes = [downward];
    sidecarAt(set).volumeMounts = [{ name: 'podinfo', mountPath: '/etc/podinfo' }];
    await scenario.createSet(set);

    const pod = await createPod(scenario.stack.cp, deploymentPod(ns, 'deployment-test-0'));
    expect(pod.spec?.containers.map((c) => c.name)).toEqual(['nginx-sidecar', 'main', 'busybox-sidecar']);
    expect(pod.spec?.containers[0]?.volumeMounts).toEqual([{ name: 'podinfo', mountPath: '/etc/podinfo' }]);
    // Stored as the API server defaults it (defaultMode 420 on the volume and its item).
    expect(pod.spec?.volumes).toContainEqual({ name: 'podinfo', downwardAPI: { items: [{ path: 'labels', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.labels' } }], defaultMode: 420 } });
  });

  it("8. transfer Envs, the source container named by the pod's annotation: the app's values are copied, the sidecar's own value wins", async () => {
    const ns = 'transfer-env-annotation';
    await scenario.cluster.namespace(ns);
    const set = baseSidecarSet(ns);
    sidecarAt(set).env = [{ name: 'OD_NAME', value: 'sidecar_name' }];
    sidecarAt(set).transferEnv = [{ sourceContainerNameFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.annotations['biz']" } }, envNames: ['POD_NAME', 'OD_NAME', 'PROXY_IP'] }];
    await scenario.createSet(set);

    const app = deploymentPod(ns, 'deployment-test-0', {
      annotations: { biz: 'main' },
      main: { env: [{ name: 'POD_NAME', value: 'bar' }, { name: 'OD_NAME', value: 'od_name' }, { name: 'PROXY_IP', value: '127.0.0.1' }] },
    });
    const pod = await createPod(scenario.stack.cp, app);
    const env = pod.spec?.containers.find((c) => c.name === 'nginx-sidecar')?.env ?? [];
    const value = (name: string) => env.find((e) => e.name === name)?.value;
    expect(value('POD_NAME')).toBe('bar');
    expect(value('OD_NAME')).toBe('sidecar_name');
    expect(value('PROXY_IP')).toBe('127.0.0.1');
    expect(env.filter((e) => e.name === 'OD_NAME')).toHaveLength(1);
  });

  it('24. inject hot upgrade: the HotUpgrade sidecar becomes nginx-sidecar-1 (nginx, working) and nginx-sidecar-2 (the empty image), with the initial versions', async () => {
    const ns = 'hot-upgrade-inject';
    await scenario.cluster.namespace(ns);
    const set = baseSidecarSet(ns);
    specOf(set).containers = [{ ...sidecarAt(set), upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: IMAGES.busybox } }];
    await scenario.createSet(set);

    const pod = await createPod(scenario.stack.cp, deploymentPod(ns, 'deployment-test-0'));
    // Kruise: one sidecar, its second copy and the app container.
    expect(pod.spec?.containers.map((c) => c.name)).toEqual(['nginx-sidecar-1', 'nginx-sidecar-2', 'main']);
    const annotations = pod.metadata?.annotations ?? {};
    expect({
      v1: annotations['version.sidecarset.kruise.io/nginx-sidecar-1'],
      alt1: annotations['versionalt.sidecarset.kruise.io/nginx-sidecar-1'],
      v2: annotations['version.sidecarset.kruise.io/nginx-sidecar-2'],
      alt2: annotations['versionalt.sidecarset.kruise.io/nginx-sidecar-2'],
      working: annotations['kruise.io/sidecarset-working-hotupgrade-container'],
    }).toEqual({ v1: '1', alt1: '0', v2: '0', alt2: '1', working: '{"nginx-sidecar":"nginx-sidecar-1"}' });
    const imageOf = (name: string) => pod.spec?.containers.find((c) => c.name === name)?.image;
    expect({ working: imageOf('nginx-sidecar-1'), empty: imageOf('nginx-sidecar-2') }).toEqual({ working: IMAGES.nginx, empty: IMAGES.busybox });
    // The env the two processes hand over by, resolved from the annotations by the API server's own field path rules.
    const versionEnv = pod.spec?.containers.find((c) => c.name === 'nginx-sidecar-2')?.env?.slice(-2);
    expect(versionEnv).toEqual([
      { name: 'SIDECARSET_VERSION', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.annotations['version.sidecarset.kruise.io/nginx-sidecar-2']" } } },
      { name: 'SIDECARSET_VERSION_ALT', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.annotations['versionalt.sidecarset.kruise.io/nginx-sidecar-2']" } } },
    ]);
    expect(JSON.parse(annotations['kruise.io/sidecarset-hash'] ?? '{}')[`test-sidecarset-${ns}`].sidecarList).toEqual(['nginx-sidecar']);
  });

  it('24, better than Kruise: a HotUpgrade SidecarSet without hotUpgradeEmptyImage is refused at the field, not its pods later', async () => {
    const ns = 'hot-upgrade-no-empty';
    await scenario.cluster.namespace(ns);
    const set = baseSidecarSet(ns);
    specOf(set).containers = [{ ...sidecarAt(set), upgradeStrategy: { upgradeType: 'HotUpgrade' } }];
    const res = await scenario.stack.cp.request('admin', 'POST', '/apis/apps.kruise.io/v1alpha1/sidecarsets', set);
    expect(res.status).toBe(422);
    expect(res.body).toContain('spec.containers[0].upgradeStrategy.hotUpgradeEmptyImage: Required value');
  });
});
