/**
 * A valid, fully defaulted SidecarSet for the validation tests, and small
 * helpers to tweak it. Written out literally (not through the defaulting
 * code) so validation tests do not depend on defaulting.
 */
import { expect } from '@jest/globals';
import { formatFieldError, type FieldError } from '../../lib/kube/field-errors.ts';
import { isObject } from '../../lib/kube/json.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { validateSidecarSet, type ValidationContext } from '../../lib/sidecarset/validate.ts';

// Functions, not constants: structuredClone keeps shared references shared,
// so one tweak would otherwise change every container.
const probe = () => ({
  httpGet: { path: '/healthz', port: 'metrics', scheme: 'HTTP' },
  timeoutSeconds: 1,
  periodSeconds: 10,
  successThreshold: 1,
  failureThreshold: 3,
});

const containerDefaults = () => ({
  imagePullPolicy: 'IfNotPresent',
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  upgradeStrategy: { upgradeType: 'ColdUpgrade' },
  shareVolumePolicy: { type: 'disabled' },
});

/**
 * One of everything: an init container and two containers, ports, env,
 * mounts, probes, resources, transferEnv, volumes, a RollingUpdate strategy,
 * a pinned revision and pod annotations.
 */
export function validSidecarSet(name = 'logging'): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name, generation: 1 },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      initContainers: [
        {
          name: `${name}-init`,
          image: 'busybox:1.36',
          command: ['sh', '-c', 'true'],
          volumeMounts: [{ name: `${name}-config`, mountPath: '/config' }],
          ...containerDefaults(),
          podInjectPolicy: 'AfterAppContainer',
        },
      ],
      containers: [
        {
          name: `${name}-agent`,
          image: 'fluent/fluent-bit:2.2',
          ports: [{ name: 'metrics', containerPort: 2020, protocol: 'TCP' }],
          env: [{ name: 'LOG_LEVEL', value: 'info' }],
          resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: 1, memory: '128Mi' } },
          volumeMounts: [
            { name: `${name}-logs`, mountPath: '/var/log/app' },
            { name: `${name}-config`, mountPath: '/config', readOnly: true },
          ],
          livenessProbe: probe(),
          readinessProbe: probe(),
          ...containerDefaults(),
          podInjectPolicy: 'BeforeAppContainer',
          transferEnv: [
            { sourceContainerName: 'app', envName: 'TZ' },
            { sourceContainerNameFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.labels['app']" } }, envNames: ['LANG'] },
          ],
        },
        { name: `${name}-metrics`, image: 'prom/statsd-exporter:v0.26.0', ...containerDefaults(), podInjectPolicy: 'AfterAppContainer' },
      ],
      volumes: [
        { name: `${name}-logs`, emptyDir: {} },
        { name: `${name}-config`, configMap: { name: `${name}-config`, defaultMode: 420 } },
      ],
      updateStrategy: { type: 'RollingUpdate', partition: 0, maxUnavailable: 1 },
      injectionStrategy: { revision: { revisionName: `${name}-rev`, policy: 'Always' } },
      revisionHistoryLimit: 10,
      patchPodMetadata: [{ annotations: { 'example.com/logging': 'on' }, patchPolicy: 'Retain' }],
    },
  };
}

/** A CREATE with no other sets and no Namespaces, unless overridden. */
export function context(overrides: Partial<ValidationContext> = {}): ValidationContext {
  return { operation: 'CREATE', others: [], namespaceLabels: new Map(), ...overrides };
}

/**
 * A deep copy of `base` with changes applied. Keys are dotted paths with
 * numeric segments for list items (`spec.containers.0.image`); the value
 * `undefined` deletes the field. Intermediate objects are created as needed.
 */
export function tweak(base: unknown, changes: Readonly<Record<string, unknown>>): SidecarSet {
  const copy = structuredClone(base) as SidecarSet;
  for (const [path, value] of Object.entries(changes)) {
    const keys = path.split('.');
    const last = keys.pop() ?? '';
    let node: Record<string, unknown> = copy;
    for (const key of keys) {
      const next = node[key];
      if (!isObject(next) && !Array.isArray(next)) node[key] = {};
      node = node[key] as Record<string, unknown>;
    }
    if (value === undefined) {
      if (Array.isArray(node)) node.splice(Number(last), 1);
      else Reflect.deleteProperty(node, last);
    } else {
      node[last] = value;
    }
  }
  return copy;
}

/** The fixture with `changes`, validated; errors as `path: Type: ...` text. */
export function errorsFor(changes: Readonly<Record<string, unknown>>, ctx: ValidationContext = context()): string[] {
  return validateSidecarSet(tweak(validSidecarSet(), changes), ctx).map(formatFieldError);
}

/** The paths of the errors for a changed fixture. */
export function errorPaths(changes: Readonly<Record<string, unknown>>, ctx: ValidationContext = context()): string[] {
  return validateSidecarSet(tweak(validSidecarSet(), changes), ctx).map((e: FieldError) => e.path);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Matchers for formatted errors, in order: each expected text is the start of
 * one error (the whole of it when it carries the full message), so tables can
 * leave out Kubernetes' long regex explanations.
 */
export function startingWith(texts: readonly string[]): unknown[] {
  return texts.map((t) => expect.stringMatching(new RegExp(`^${escapeRegExp(t)}`)));
}
