/**
 * How injected sidecar containers are ordered: this project's order (the
 * applying SidecarSets by name, each set's containers as written), or, as
 * Kruise 1.9's alpha feature gate `EnableSortSidecarContainerByName` does,
 * every injected sidecar container sorted by its name (stably, before each is
 * placed before or after the app containers by its podInjectPolicy). Init
 * sidecars are sorted by name either way, as Kruise always does.
 */

/** The setting's environment variable: `true` sorts injected containers by name; `false` or unset keeps the sets' order. */
export const ENV_SORT_SIDECARS_BY_NAME = 'SORT_SIDECAR_CONTAINERS_BY_NAME';

/** A value of {@link ENV_SORT_SIDECARS_BY_NAME} that is neither `true` nor `false`. */
export class InjectionOrderSettingError extends Error {
  constructor(value: string) {
    super(`${ENV_SORT_SIDECARS_BY_NAME} must be "true" or "false", got ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`);
    this.name = 'InjectionOrderSettingError';
  }
}

/**
 * Whether injected sidecar containers are sorted by name, from the environment.
 * @throws InjectionOrderSettingError when the variable holds anything but `true`, `false` or nothing.
 */
export function sortSidecarsByNameFromEnv(env: Readonly<Record<string, string | undefined>>): boolean {
  const raw = env[ENV_SORT_SIDECARS_BY_NAME];
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new InjectionOrderSettingError(raw);
}
