/**
 * A realistic cluster for load runs: 50 SidecarSets of which 5 apply to the
 * web pod (one of them through a namespaceSelector, so namespace labels are
 * read too), and a Pod with three containers, as the API server would send
 * them. The other 45 select other apps, or the web app in other namespaces,
 * so matching has real work to reject them.
 */
import { readFile } from 'node:fs/promises';
import type { Pod } from '../../lib/kube/types.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { crdPath, waitForCrd, waitForFunctionsAccess } from '../../functions/server/local-stack.ts';
import type { ControlPlane } from '../control-plane/harness.ts';
import { sidecar, sidecarSet } from '../sidecarset/fixtures.ts';

export const WEB_NAMESPACE = 'shop';

/** The SidecarSets; the first `applying` select the web pod in {@link WEB_NAMESPACE}. */
export function realisticSidecarSets(total = 50, applying = 5): SidecarSet[] {
  return Array.from({ length: total }, (_, i) => {
    const name = `set-${String(i).padStart(2, '0')}`;
    const applies = i < applying;
    const containers = [
      sidecar(`${name}-agent`, {
        env: [{ name: 'LOG_LEVEL', value: 'info' }],
        resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '128Mi' } },
        volumeMounts: [{ name: `${name}-config`, mountPath: `/etc/${name}` }],
      }),
    ];
    return sidecarSet(name, {
      selector: applies || i % 2 === 0 ? { matchLabels: { app: applies ? 'web' : `app-${i}` } } : { matchExpressions: [{ key: 'tier', operator: 'In', values: [`tier-${i}`] }] },
      // One applying set uses a namespaceSelector; some others select the web app elsewhere.
      ...(i === 1 ? { namespaceSelector: { matchLabels: { env: 'prod' } } } : {}),
      ...(!applies && i % 5 === 0 ? { namespace: 'elsewhere' } : {}),
      containers,
      volumes: [{ name: `${name}-config`, configMap: { name: `${name}-config` } }],
    });
  });
}

/** The Pod a ReplicaSet would create: three containers, labels the applying sets select. */
export function realisticPod(): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'web-7d9c6b-', namespace: WEB_NAMESPACE, labels: { app: 'web', tier: 'frontend', 'pod-template-hash': '7d9c6b' } },
    spec: {
      containers: ['app', 'cache', 'metrics'].map((name, i) => ({
        name,
        image: `registry.example.com/${name}:1.${i}`,
        ports: [{ containerPort: 8080 + i, protocol: 'TCP' }],
        env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
        resources: { requests: { cpu: '100m', memory: '128Mi' } },
        volumeMounts: [{ name: 'data', mountPath: `/data/${name}` }],
      })),
      volumes: [{ name: 'data', emptyDir: {} }],
      restartPolicy: 'Always',
    },
  };
}

/** Installs the CRD, the web namespace (labelled env=prod) and the SidecarSets, as the admin. */
export async function seedRealisticCluster(cp: ControlPlane, sets: readonly SidecarSet[] = realisticSidecarSets()): Promise<void> {
  await cp.apply(await readFile(crdPath, 'utf8'));
  await waitForCrd(cp, 'sidecarsets.apps.kruise.io');
  await waitForFunctionsAccess(cp);
  await cp.apply(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: WEB_NAMESPACE, labels: { env: 'prod' } } }));
  for (const set of sets) {
    const res = await cp.request('admin', 'POST', '/apis/apps.kruise.io/v1alpha1/sidecarsets', set);
    if (res.status !== 201) throw new Error(`cannot create SidecarSet ${String(set.metadata?.name)}: ${res.status} ${res.body}`);
  }
}
