/**
 * The realistic inputs of the admission benchmarks (issue 8): a Pod with
 * three containers created by a ReplicaSet, a cluster holding 50 SidecarSets
 * of which 5 select that Pod, and a SidecarSet with three sidecars.
 */
import type { Container, Namespace, Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarContainer, SidecarSet } from '../../lib/sidecarset/types.ts';
import type { AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { podReview, podStatusReview, sidecarSetReview } from '../reviews.ts';

export const POD_NAMESPACE = 'shop';
const POD_LABELS = { app: 'checkout', tier: 'backend', team: 'payments', 'pod-template-hash': '6f7c9d8b5' };

function appContainer(name: string, image: string, port: number): Container {
  return {
    name,
    image,
    ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
    env: [
      { name: 'SERVICE_NAME', value: name },
      { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
      { name: 'LOG_FORMAT', value: 'json' },
    ],
    resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } },
    volumeMounts: [
      { name: 'config', mountPath: '/etc/app', readOnly: true },
      { name: 'kube-api-access-x2k9q', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
    ],
    readinessProbe: { httpGet: { path: '/ready', port, scheme: 'HTTP' }, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
    livenessProbe: { httpGet: { path: '/live', port, scheme: 'HTTP' }, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    imagePullPolicy: 'IfNotPresent',
  };
}

/** A Pod as a ReplicaSet controller sends it to admission: three containers, defaulted by the API server. */
export function benchPod(): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: 'checkout-6f7c9d8b5-',
      namespace: POD_NAMESPACE,
      labels: { ...POD_LABELS },
      annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'checkout-6f7c9d8b5', uid: '0b8f5f2e-3d5c-4b8e-9a0a-6c1f0f3f9d11', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      containers: [appContainer('checkout', 'registry.example.com/shop/checkout:2.14.3', 8080), appContainer('cart-cache', 'redis:7.4', 6379), appContainer('metrics', 'prom/statsd-exporter:v0.27.1', 9102)],
      volumes: [
        { name: 'config', configMap: { name: 'checkout-config', defaultMode: 420 } },
        { name: 'kube-api-access-x2k9q', projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }] } },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      schedulerName: 'default-scheduler',
      securityContext: {},
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
      priority: 0,
    },
  };
}

function sidecar(name: string, index: number): SidecarContainer {
  return {
    name,
    image: `registry.example.com/platform/${name}:1.${index % 10}.0`,
    env: [
      { name: 'SIDECAR', value: name },
      { name: 'NODE_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } },
    ],
    resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
    volumeMounts: [{ name: `${name}-data`, mountPath: `/var/lib/${name}` }],
    shareVolumePolicy: { type: index % 2 === 0 ? 'enabled' : 'disabled' },
    transferEnv: [{ sourceContainerName: 'checkout', envName: 'LOG_FORMAT' }],
  };
}

/** A SidecarSet as a user writes it, `sidecars` containers, selecting `selector`. */
export function userSidecarSet(name: string, sidecars: number, matchLabels: Record<string, string>, index = 0): SidecarSet {
  const names = Array.from({ length: sidecars }, (_, i) => `${name}-c${i}`);
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name, labels: { 'platform.example.com/owner': 'platform' } },
    spec: {
      selector: { matchLabels, matchExpressions: [{ key: 'tier', operator: 'In', values: ['backend', 'frontend'] }] },
      containers: names.map((n, i) => sidecar(n, index + i)),
      volumes: names.map((n) => ({ name: `${n}-data`, emptyDir: {} })),
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: '10%' },
    },
  };
}

/** A SidecarSet as the cluster stores it: defaulted, hashes written, a generation and resourceVersion. */
export function storedSidecarSet(set: SidecarSet, generation = 1): SidecarSet {
  const stored = defaultSidecarSet(set);
  stored.metadata = { ...stored.metadata, uid: `00000000-0000-4000-8000-${String(generation).padStart(12, '0')}`, generation, resourceVersion: String(1000 + generation), creationTimestamp: '2026-11-01T09:00:00Z' };
  return stored;
}

/**
 * The cluster's SidecarSets: `total` stored sets of one or two sidecars, the
 * first `applying` selecting the bench pod (app=checkout), the rest other apps.
 */
export function clusterSidecarSets(total = 50, applying = 5): SidecarSet[] {
  return Array.from({ length: total }, (_, i) => {
    const app = i < applying ? POD_LABELS.app : `app-${i}`;
    return storedSidecarSet(userSidecarSet(`platform-${String(i).padStart(2, '0')}`, 1 + (i % 2), { app }, i), i + 1);
  });
}

export function benchNamespaces(): Namespace[] {
  return [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: POD_NAMESPACE, labels: { 'kubernetes.io/metadata.name': POD_NAMESPACE, env: 'prod' } } }];
}

/** The new SidecarSet of the defaulting and validation benchmarks: three sidecars. */
export function newSidecarSet(): SidecarSet {
  return userSidecarSet('observability', 3, { app: 'checkout' }, 7);
}

/** The review the API server sends `fn` for the bench inputs (JSON text), with the request's uid. */
export function benchReview(fn: AdmissionFunctionName, uid: string): string {
  switch (fn) {
    case 'pod-inject':
      return JSON.stringify(podReview(uid, benchPod()));
    case 'sidecarset-default':
      return JSON.stringify(sidecarSetReview(uid, newSidecarSet()));
    case 'sidecarset-validate':
      // Validation sees the set after defaulting (mutating webhooks run first).
      return JSON.stringify(sidecarSetReview(uid, defaultSidecarSet(newSidecarSet())));
    case 'pod-change': {
      // The kubelet reporting an injected pod Ready.
      const pod = { ...benchPod(), metadata: { ...benchPod().metadata, annotations: { 'kruise.io/sidecarset-injected-list': 'platform-00,platform-01' } } };
      const status = (ready: string) => ({ phase: 'Running', conditions: [{ type: 'Ready', status: ready }] });
      return JSON.stringify(podStatusReview(uid, { ...pod, status: status('False') }, { ...pod, status: status('True') }));
    }
  }
}

/** The request bodies, as the API server sends them (JSON text). */
export function benchBodies(): { podInject: string; sidecarSetDefault: string; sidecarSetValidate: string } {
  return {
    podInject: benchReview('pod-inject', 'bench-pod-uid'),
    sidecarSetDefault: benchReview('sidecarset-default', 'bench-default-uid'),
    sidecarSetValidate: benchReview('sidecarset-validate', 'bench-validate-uid'),
  };
}
