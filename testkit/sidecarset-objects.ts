/** Builders for SidecarSets and Pods as they are stored (SidecarSets defaulted, with hashes). */
import type { Container, Pod } from '../lib/kube/types.ts';
import { defaultSidecarSet } from '../lib/sidecarset/defaults.ts';
import type { SidecarContainer, SidecarSet, SidecarSetSpec } from '../lib/sidecarset/types.ts';

export function sidecarSet(name: string, spec: Partial<SidecarSetSpec> = {}): SidecarSet {
  return defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name, generation: 1 },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: `${name}-sidecar`, image: `${name}:1.0` }],
      ...spec,
    },
  });
}

export function sidecar(name: string, extra: Partial<SidecarContainer> = {}): SidecarContainer {
  return { name, image: `${name}:1.0`, ...extra };
}

export function pod(extra: { labels?: Record<string, string>; annotations?: Record<string, string>; containers?: Container[]; initContainers?: Container[]; spec?: Record<string, unknown> } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'p',
      namespace: 'default',
      labels: extra.labels ?? { app: 'web' },
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    spec: {
      containers: extra.containers ?? [{ name: 'app', image: 'app:1' }],
      ...(extra.initContainers ? { initContainers: extra.initContainers } : {}),
      ...extra.spec,
    },
  };
}

export const NOW = new Date('2026-11-30T12:00:00.000Z');
