/**
 * Shared by the door, Lambda and server tests: AdmissionReviews shaped as the
 * API server sends them, the caller secrets, and a logger that keeps its lines.
 */
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import type { Logger } from '../../lib/ports.ts';

/** 32 bytes in base64url, as operators generate them; fixed so that failures reproduce. */
export const SECRET = Buffer.alloc(32, 0x5e).toString('base64url');
export const PREVIOUS_SECRET = Buffer.alloc(32, 0x9d).toString('base64url');
export const STRANGER_SECRET = Buffer.alloc(32, 0x01).toString('base64url');

/** A SidecarSet as a user applies it: nothing defaulted yet. */
export function userSidecarSet(name = 'dns'): Record<string, unknown> {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: {
      name,
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"kind":"SidecarSet"}\n' },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: 'apps.kruise.io/v1alpha1',
          time: '2026-11-30T12:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { '.': {}, 'f:containers': {} } },
        },
      ],
    },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'dns-f', image: 'dns:1.0' }],
    },
  };
}

/** A SidecarSet CREATE review as kube-apiserver 1.3x sends it (cluster-scoped: no namespace). */
export function sidecarSetReview(uid: string, object: unknown = userSidecarSet()): Record<string, unknown> {
  return {
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: {
      uid,
      kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'SidecarSet' },
      resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'sidecarsets' },
      requestKind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'SidecarSet' },
      requestResource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'sidecarsets' },
      name: 'dns',
      operation: 'CREATE',
      userInfo: { username: 'kubernetes-admin', groups: ['kubeadm:cluster-admins', 'system:authenticated'] },
      object,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'kubectl-client-side-apply', fieldValidation: 'Strict' },
    },
  };
}

export function appPod(): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'web-7d9c6b-', namespace: 'shop', labels: { app: 'web', 'pod-template-hash': '7d9c6b' } },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27', resources: {} }], restartPolicy: 'Always' },
  };
}

/** A Pod CREATE review from a ReplicaSet controller: empty name (generateName), the namespace on the request. */
export function podReview(uid: string, pod: unknown = appPod()): Record<string, unknown> {
  return {
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      name: '',
      namespace: 'shop',
      operation: 'CREATE',
      userInfo: {
        username: 'system:serviceaccount:kube-system:replicaset-controller',
        uid: '4e3b7a39-0d8b-4c1e-9a55-0f3b51f6c0a2',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
      },
      object: pod,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  };
}

/** A logger that keeps every JSON line it writes, parsed. */
export function capturingLogger(): { logger: Logger; lines: string[]; entries: () => Record<string, unknown>[] } {
  const lines: string[] = [];
  const logger = jsonLogger({}, (line) => lines.push(line));
  return { logger, lines, entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}
