/**
 * The core/v1 Container inside a SidecarContainer, checked the way Kruise 1.8
 * gets it checked: it builds a pod from the sidecars and volumes and runs
 * Kubernetes 1.30's ValidatePodCreate on it. These are the parts of that
 * validation a sidecar's fields can fail, in Kubernetes' order
 * (validateContainerCommon, then what differs between app and init
 * containers), with its paths and messages.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { dns1123LabelErrors } from '../kube/names.ts';
import type { JsonObject } from '../kube/types.ts';
import { validateEnv, validateEnvFrom } from './validate-env.ts';
import { validateLifecycle } from './validate-handlers.ts';
import { validateContainerPorts } from './validate-ports.ts';
import { PROBE_KINDS, validateProbe } from './validate-probes.ts';
import { validateResources } from './validate-resources.ts';
import { validateSecurityContext } from './validate-security-context.ts';
import { forEachObjectAt, isUnset, listAt, objectAt, optionalEnumAt, stringAt } from './validate-shape.ts';
import { namedPaths, validateVolumeDevices, type VolumeKind } from './validate-volume-devices.ts';
import { PULL_POLICIES } from './validate-volumes.ts';
import { validateVolumeMounts } from './validate-volume-mounts.ts';

const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'] as const;
const RESIZE_RESOURCES = ['cpu', 'memory'] as const;
const RESIZE_POLICIES = ['NotRequired', 'RestartContainer'] as const;

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

/** validateResizePolicy: known resources, each once, with a known restart policy. */
function validateResizePolicy(value: unknown, path: FieldPath, errs: FieldError[]): void {
  const seen = new Set<string>();
  forEachObjectAt(value, path, errs, (item, p) => {
    const resource = stringAt(item.resourceName, p.child('resourceName'), errs) ?? '';
    if (seen.has(resource)) errs.push(p.duplicate(resource));
    seen.add(resource);
    if (resource === '') errs.push(path.required());
    else if (!(RESIZE_RESOURCES as readonly string[]).includes(resource)) errs.push(path.unsupported(resource, RESIZE_RESOURCES));
    const policy = stringAt(item.restartPolicy, p.child('restartPolicy'), errs) ?? '';
    if (policy === '') errs.push(path.required());
    else if (!(RESIZE_POLICIES as readonly string[]).includes(policy)) errs.push(path.unsupported(policy, RESIZE_POLICIES));
  });
}

/**
 * validateContainerCommon for one container at `path`; `volumes` are the
 * volumes a mount may use (name to kind: a block device needs a claim, an
 * image volume's mount takes no subPath). Returns the container's name.
 */
export function validateContainerCommon(c: JsonObject, path: FieldPath, volumes: ReadonlyMap<string, VolumeKind>, errs: FieldError[]): string | undefined {
  const name = validateContainerName(c, path, errs);
  // An image of only spaces is not "required" in Kubernetes; it fails the whitespace rule (validateImageWhitespace).
  const image = stringAt(c.image, path.child('image'), errs);
  if (isUnset(c.image) || image === '') errs.push(path.child('image').required());
  optionalEnumAt(c.terminationMessagePolicy, TERMINATION_MESSAGE_POLICIES, path.child('terminationMessagePolicy'), errs);
  validateContainerPorts(c.ports, path.child('ports'), errs);
  validateEnv(c.env, path.child('env'), errs);
  validateEnvFrom(c.envFrom, path.child('envFrom'), errs);
  const mounts = namedPaths(c.volumeMounts, 'mountPath');
  const devices = namedPaths(c.volumeDevices, 'devicePath');
  validateVolumeMounts(c, path.child('volumeMounts'), volumes, devices, errs);
  validateVolumeDevices(c, path.child('volumeDevices'), volumes, mounts, errs);
  optionalEnumAt(c.imagePullPolicy, PULL_POLICIES, path.child('imagePullPolicy'), errs);
  const resources = objectAt(c.resources, path.child('resources'), errs);
  if (resources) validateResources(resources, path.child('resources'), errs);
  validateResizePolicy(c.resizePolicy, path.child('resizePolicy'), errs);
  const sc = objectAt(c.securityContext, path.child('securityContext'), errs);
  if (sc) validateSecurityContext(sc, path.child('securityContext'), errs);
  return name;
}

/** The lifecycle hooks and probes, for app containers and restartable init containers. */
export function validateHooksAndProbes(c: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const lifecycle = objectAt(c.lifecycle, path.child('lifecycle'), errs);
  if (lifecycle) validateLifecycle(lifecycle, path.child('lifecycle'), errs);
  for (const kind of PROBE_KINDS) {
    const probe = objectAt(c[kind], path.child(kind), errs);
    if (probe) validateProbe(probe, kind, path.child(kind), errs);
  }
}

/** An init container's restartPolicy, which may only be Always; returns whether it is (a native sidecar). */
export function validateInitRestartPolicy(c: JsonObject, path: FieldPath, errs: FieldError[]): boolean {
  return optionalEnumAt(c.restartPolicy, ['Always'], path.child('restartPolicy'), errs) === 'Always';
}

/**
 * The rest of what init containers add (validateInitContainers): a native
 * sidecar may have hooks and probes, an init container that runs to
 * completion may not; resize policies are for app containers only.
 */
export function validateInitContainerRules(c: JsonObject, path: FieldPath, restartAlways: boolean, errs: FieldError[]): void {
  if (restartAlways) {
    validateHooksAndProbes(c, path, errs);
  } else {
    for (const key of ['lifecycle', ...PROBE_KINDS]) {
      if (!isUnset(c[key])) errs.push(path.child(key).forbidden('may not be set for init containers without restartPolicy=Always'));
    }
  }
  if (listAt(c.resizePolicy, path.child('resizePolicy'), []).length > 0) {
    errs.push(path.child('resizePolicy').invalid(c.resizePolicy, 'must not be set for init containers'));
  }
}

/** What app containers add (validateContainers): hooks and probes, and no restartPolicy. */
export function validateAppContainerRules(c: JsonObject, path: FieldPath, errs: FieldError[]): void {
  validateHooksAndProbes(c, path, errs);
  if (!isUnset(c.restartPolicy)) errs.push(path.child('restartPolicy').forbidden('may not be set for non-init containers'));
}

/** validateContainerOnlyForPod: checked after everything else, as Kubernetes does. */
export function validateImageWhitespace(c: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const image = c.image;
  if (typeof image === 'string' && image.trim() !== image) {
    errs.push(path.child('image').invalid(image, 'must not have leading or trailing whitespace'));
  }
}
