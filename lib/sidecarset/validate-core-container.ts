/**
 * The core/v1 Container inside a SidecarContainer, checked the way Kruise gets
 * it checked: Kruise builds a fake Pod from the sidecars and runs Kubernetes'
 * ValidatePodCreate on it. This is the meaningful subset of that validation
 * for what a sidecar carries (name, image, policies, ports, env, mounts,
 * probes, resources), with Kubernetes' paths and messages.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { } from '../kube/json.ts';
import { dns1123LabelErrors } from '../kube/names.ts';
import type { JsonObject } from '../kube/types.ts';
import { validateContainerPorts } from './validate-ports.ts';
import { PROBE_KINDS, validateProbe } from './validate-probes.ts';
import { validateResources } from './validate-resources.ts';
import {isUnset, objectAt, optionalEnumAt, stringAt, forEachObjectAt } from './validate-shape.ts';

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'] as const;

export interface CoreContainerContext {
  /** True for spec.initContainers. */
  init: boolean;
  /** The names in spec.volumes, which every volumeMount must use. */
  volumeNames: ReadonlySet<string>;
}

/** The container's name when it is a non-empty string (reported if not a DNS-1123 label); uniqueness is the caller's. */
export function validateContainerName(c: JsonObject, path: FieldPath, errs: FieldError[]): string | undefined {
  const p = path.child('name');
  const name = stringAt(c.name, p, errs);
  if (isUnset(c.name) || name === '') {
    errs.push(p.required());
    return undefined;
  }
  if (name === undefined) return undefined;
  for (const msg of dns1123LabelErrors(name)) errs.push(p.invalid(name, msg));
  return name;
}

function validateImage(c: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const p = path.child('image');
  const image = stringAt(c.image, p, errs);
  if (isUnset(c.image) || (image !== undefined && image.trim() === '')) errs.push(p.required());
  else if (image !== undefined && image.trim() !== image) errs.push(p.invalid(image, 'must not have leading or trailing whitespace'));
}

/**
 * Kubernetes (1.30+) accepts any printable ASCII except '=' in env names
 * (RelaxedEnvironmentVariableValidation); the stricter C-identifier rule
 * would reject manifests the API server takes.
 */
function envNameErrors(name: string): string[] {
  return /^[\x20-\x3c\x3e-\x7e]+$/.test(name)
    ? []
    : ["a valid environment variable name must consist only of printable ASCII characters other than '='"];
}

function validateEnv(value: unknown, path: FieldPath, errs: FieldError[]): void {
  forEachObjectAt(value, path, errs, (item, itemPath) => {
    const p = itemPath.child('name');
    const name = stringAt(item.name, p, errs);
    if (isUnset(item.name) || name === '') errs.push(p.required());
    else if (name !== undefined) for (const msg of envNameErrors(name)) errs.push(p.invalid(name, msg));
  });
}

function validateVolumeMounts(value: unknown, path: FieldPath, volumeNames: ReadonlySet<string>, errs: FieldError[]): void {
  const mountPaths = new Set<string>();
  forEachObjectAt(value, path, errs, (item, p) => {
    const name = stringAt(item.name, p.child('name'), errs);
    if (isUnset(item.name) || name === '') errs.push(p.child('name').required());
    else if (name !== undefined && !volumeNames.has(name)) errs.push(p.child('name').notFound(name));
    const mountPath = stringAt(item.mountPath, p.child('mountPath'), errs);
    if (isUnset(item.mountPath) || mountPath === '') {
      errs.push(p.child('mountPath').required());
    } else if (mountPath !== undefined) {
      if (mountPaths.has(mountPath)) errs.push(p.child('mountPath').invalid(mountPath, 'must be unique'));
      mountPaths.add(mountPath);
    }
  });
}

/**
 * Restart policy and the fields that depend on it. A restartable init
 * container (a native sidecar) may have probes and lifecycle hooks; other
 * init containers run to completion and may not; app containers may not set
 * a restart policy at all.
 */
function validateRestartPolicy(c: JsonObject, path: FieldPath, init: boolean, errs: FieldError[]): void {
  if (!init) {
    if (!isUnset(c.restartPolicy)) errs.push(path.child('restartPolicy').forbidden('may not be set for non-init containers'));
    return;
  }
  const policy = optionalEnumAt(c.restartPolicy, ['Always'], path.child('restartPolicy'), errs);
  if (policy === 'Always') return;
  for (const key of ['lifecycle', ...PROBE_KINDS]) {
    if (!isUnset(c[key])) errs.push(path.child(key).forbidden('may not be set for init containers without restartPolicy=Always'));
  }
}

/** Every core/v1 problem of one container at `path` (e.g. `spec.containers[0]`). */
export function validateCoreContainer(c: JsonObject, path: FieldPath, ctx: CoreContainerContext, errs: FieldError[]): void {
  validateImage(c, path, errs);
  optionalEnumAt(c.imagePullPolicy, PULL_POLICIES, path.child('imagePullPolicy'), errs);
  optionalEnumAt(c.terminationMessagePolicy, TERMINATION_MESSAGE_POLICIES, path.child('terminationMessagePolicy'), errs);
  validateRestartPolicy(c, path, ctx.init, errs);
  validateContainerPorts(c.ports, path.child('ports'), errs);
  validateEnv(c.env, path.child('env'), errs);
  validateVolumeMounts(c.volumeMounts, path.child('volumeMounts'), ctx.volumeNames, errs);
  for (const kind of PROBE_KINDS) {
    const probe = objectAt(c[kind], path.child(kind), errs);
    if (probe) validateProbe(probe, kind, path.child(kind), errs);
  }
  const resources = objectAt(c.resources, path.child('resources'), errs);
  if (resources) validateResources(resources, path.child('resources'), errs);
}
