/**
 * What Kruise's manager Deployment says about the installation: its version
 * (the image tag), its feature gates and whether it runs. Kruise's
 * SidecarSet controller has no switch of its own in 1.8 or 1.9: it is
 * registered whenever the SidecarSet CRD is served when the manager starts
 * (pkg/controller/sidecarset Add), so a running manager means a running
 * SidecarSet controller. Its pod webhook is registered when the PodWebhook
 * gate is on (the default) and the CRD is served (pkg/webhook/add_pod.go).
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';

/** Where and under which name Kruise's charts install the manager. */
export const KRUISE_NAMESPACE = 'kruise-system';
export const KRUISE_MANAGER_DEPLOYMENT = 'kruise-controller-manager';

/** A parsed `vMAJOR.MINOR.PATCH` tag. */
export interface KruiseVersion {
  major: number;
  minor: number;
  patch: number;
  text: string;
}

/** The Kruise lines docs/MIGRATION.md covers. */
export const SUPPORTED_KRUISE_LINES = ['1.8', '1.9'] as const;

export interface KruiseManager {
  /** The manager container's image, as the Deployment names it. */
  image: string | undefined;
  /** From the image tag; undefined when the tag is not a version (a digest, `latest`). */
  version: KruiseVersion | undefined;
  /** Replicas asked for and ready. */
  replicas: number;
  readyReplicas: number;
  /** Feature gates set on the command line (`--feature-gates=A=true,B=false`). */
  featureGates: ReadonlyMap<string, boolean>;
  /** The PodWebhook gate as the manager resolves it: on unless turned off by the flag or CUSTOM_RESOURCE_ENABLE. */
  podWebhook: boolean;
}

/** `v1.8.2`, `1.9.0`, `v1.9.0-rc.1`; undefined for anything else. */
export function parseKruiseVersion(tag: string): KruiseVersion | undefined {
  const match = /^v?(\d{1,4})\.(\d{1,4})\.(\d{1,4})(?:[-+][0-9A-Za-z.-]{0,64})?$/.exec(tag);
  if (match === null) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), text: tag };
}

/** The tag of an image reference (`registry:5000/openkruise/kruise-manager:v1.8.2@sha256:…` → `v1.8.2`). */
export function imageTag(image: string): string | undefined {
  const withoutDigest = image.split('@')[0] ?? '';
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  return colon < 0 ? undefined : withoutDigest.slice(colon + 1);
}

/** `1.8` or `1.9` when the version is one docs/MIGRATION.md covers. */
export function supportedLine(version: KruiseVersion | undefined): (typeof SUPPORTED_KRUISE_LINES)[number] | undefined {
  if (version === undefined) return undefined;
  const line = `${version.major}.${version.minor}`;
  return SUPPORTED_KRUISE_LINES.find((l) => l === line);
}

function managerContainer(deployment: JsonObject): JsonObject | undefined {
  const containers = arrayOf(objectOf(objectOf(objectOf(deployment.spec)?.template)?.spec)?.containers).filter(isObject);
  return containers.find((c) => c.name === 'manager') ?? containers.find((c) => (stringOf(c.image) ?? '').includes('kruise-manager')) ?? containers[0];
}

/** Parses `--feature-gates` values (pflag syntax: comma-separated `Name=bool`); the last flag wins, as pflag's Set does per key. */
export function featureGatesOf(args: readonly string[]): Map<string, boolean> {
  const gates = new Map<string, boolean>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    let value: string | undefined;
    if (arg.startsWith('--feature-gates=')) value = arg.slice('--feature-gates='.length);
    else if (arg === '--feature-gates') value = args[++i];
    if (value === undefined) continue;
    for (const pair of value.split(',')) {
      const [name, setting] = pair.split('=');
      if (name === undefined || name.trim() === '' || setting === undefined) continue;
      const parsed = setting.trim().toLowerCase();
      if (parsed === 'true' || parsed === 'false') gates.set(name.trim(), parsed === 'true');
    }
  }
  return gates;
}

/** What the manager Deployment says. */
export function kruiseManagerOf(deployment: JsonObject): KruiseManager {
  const container = managerContainer(deployment) ?? {};
  const image = stringOf(container.image);
  const tag = image === undefined ? undefined : imageTag(image);
  const args = [...arrayOf(container.command), ...arrayOf(container.args)].filter((a): a is string => typeof a === 'string');
  const featureGates = featureGatesOf(args);
  // CUSTOM_RESOURCE_ENABLE without SidecarSet turns the gate's default off (pkg/features compatibleEnv).
  const customResources = arrayOf(container.env)
    .filter(isObject)
    .find((e) => e.name === 'CUSTOM_RESOURCE_ENABLE');
  const limits = stringOf(customResources?.value)?.trim() ?? '';
  const defaultPodWebhook = limits === '' || limits.split(',').includes('SidecarSet');
  const spec = objectOf(deployment.spec);
  const status = objectOf(deployment.status);
  const replicas = typeof spec?.replicas === 'number' ? spec.replicas : 1;
  const readyReplicas = typeof status?.readyReplicas === 'number' ? status.readyReplicas : 0;
  return {
    image,
    version: tag === undefined ? undefined : parseKruiseVersion(tag),
    replicas,
    readyReplicas,
    featureGates,
    podWebhook: featureGates.get('PodWebhook') ?? defaultPodWebhook,
  };
}

/** The manager runs (or is asked to): its SidecarSet controller and webhook controller are active. */
export function managerActive(manager: KruiseManager | undefined): boolean {
  return manager !== undefined && (manager.replicas > 0 || manager.readyReplicas > 0);
}
