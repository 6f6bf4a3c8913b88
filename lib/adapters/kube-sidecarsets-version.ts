/**
 * Which version of SidecarSets the project's functions read and write:
 * the one the cluster stores, so that no read of theirs goes through the
 * CRD's conversion webhook (docs/CONVERSION.md).
 *
 * OpenKruise 1.9's CRD (and this project's two-version CRD) serves
 * v1alpha1 and v1beta1 and stores v1beta1; Kruise 1.8's CRD, and this
 * project's single-version one, serve and store v1alpha1 alone. No CRD
 * anyone ships serves v1beta1 without storing it, so "is v1beta1 served"
 * answers "which version is stored", and discovery answers that without
 * reading the CRD (which the functions have no permission to read): one GET
 * of `/apis/apps.kruise.io/v1beta1`, which every authenticated caller may
 * make (system:discovery).
 *
 * - v1beta1 lists `sidecarsets` → v1beta1;
 * - a 404, or a v1beta1 without `sidecarsets` → v1alpha1 (a cluster midway
 *   through an upgrade from Kruise 1.8, its old CRD still installed);
 * - no usable answer (unreachable, refused, a 5xx) → v1alpha1 for that one
 *   call, not remembered: while v1alpha1 is served (by both CRDs) it is
 *   always a correct read, at worst one the conversion webhook answers.
 *
 * A definite answer is remembered for {@link DEFAULT_REMEMBER_MS}, so a CRD
 * upgraded under a running function is seen within minutes, and forgotten
 * at once when a list of the version in use answers 404 (the CRD changed).
 */
import { isObject } from '../kube/json.ts';
import { GROUP } from '../sidecarset/types.ts';
import type { SidecarSetVersion } from '../conversion/sidecarset-conversion.ts';
import type { KubeClient } from './kube-request.ts';

/** The resource name of SidecarSets in apps.kruise.io. */
export const SIDECARSET_PLURAL = 'sidecarsets';

/** Where the SidecarSets of `version` are served (cluster-scoped). */
export function sidecarSetsPath(version: SidecarSetVersion): string {
  return `/apis/${GROUP}/${version}/${SIDECARSET_PLURAL}`;
}

/** The version the functions read and write SidecarSets in. */
export interface SidecarSetVersions {
  /** The version to use now; never rejects (see the module's comment for the fallback). */
  current(signal?: AbortSignal): Promise<SidecarSetVersion>;
  /** Forgets a discovered version: the next call asks again (a list of the version in use answered 404). */
  forget(): void;
}

/** Always `version`, never asking: adapters made without discovery (tests, a cluster known to be one way). */
export function fixedSidecarSetVersion(version: SidecarSetVersion): SidecarSetVersions {
  return { current: () => Promise.resolve(version), forget: () => undefined };
}

/** How long a discovered version is used before asking again. */
export const DEFAULT_REMEMBER_MS = 5 * 60 * 1000;

/** The discovery request, as errors and logs name it. */
export const DISCOVER_SIDECARSET_VERSION = `discover whether ${GROUP}/v1beta1 serves ${SIDECARSET_PLURAL}`;

/** What one discovery answer says: the version, and whether it may be remembered. */
export function versionFromDiscovery(status: number, body: unknown): { version: SidecarSetVersion; definite: boolean } {
  if (status === 200) {
    const resources = isObject(body) && Array.isArray(body.resources) ? body.resources : [];
    const served = resources.some((r) => isObject(r) && r.name === SIDECARSET_PLURAL);
    return { version: served ? 'v1beta1' : 'v1alpha1', definite: true };
  }
  return { version: 'v1alpha1', definite: status === 404 };
}

export interface DiscoveryOptions {
  rememberMs?: number;
  /** The clock (milliseconds); tests move it. */
  now?: () => number;
}

/**
 * The stored version, discovered through `client` and remembered (one
 * discovery in flight at a time, shared by every caller that asks meanwhile).
 */
export function discoveredSidecarSetVersion(client: KubeClient, options: DiscoveryOptions = {}): SidecarSetVersions {
  const rememberMs = options.rememberMs ?? DEFAULT_REMEMBER_MS;
  const now = options.now ?? Date.now;
  let known: { version: SidecarSetVersion; at: number } | undefined;
  let asking: Promise<SidecarSetVersion> | undefined;

  async function ask(signal: AbortSignal | undefined): Promise<SidecarSetVersion> {
    try {
      const answer = await client.request({ method: 'GET', path: `/apis/${GROUP}/v1beta1`, operation: DISCOVER_SIDECARSET_VERSION, ...(signal === undefined ? {} : { signal }) });
      const found = versionFromDiscovery(answer.status, answer.body);
      if (found.definite) known = { version: found.version, at: now() };
      return found.version;
    } catch {
      return 'v1alpha1';
    }
  }

  return {
    current(signal) {
      if (known !== undefined && now() - known.at < rememberMs) return Promise.resolve(known.version);
      asking ??= ask(signal).finally(() => {
        asking = undefined;
      });
      return asking;
    },
    forget() {
      known = undefined;
    },
  };
}
