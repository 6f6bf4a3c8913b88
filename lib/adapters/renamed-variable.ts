/**
 * An environment variable that was renamed, its old name still read for one
 * release (docs/UPGRADING.md): alone it works and is warned about; both names
 * set to different values is a configuration error, since either could be
 * the one meant.
 */
import { SourceOptionsError } from './kube-sources.ts';

export interface RenamedVariable {
  /** The name to set. */
  name: string;
  /** The name it had, read when `name` is not set. */
  deprecated: string;
}

/** Which of the two names holds the setting; `deprecated` is true when only the old name does. */
export interface VariableInUse {
  variable: string;
  deprecated: boolean;
}

function valueOf(env: Readonly<Record<string, string | undefined>>, variable: string): string | undefined {
  const value = env[variable]?.trim();
  return value === '' ? undefined : value;
}

/**
 * The variable to read `renamed`'s setting from: its new name unless only the
 * old one is set (an empty value counts as unset, as every parser here reads it).
 * @throws SourceOptionsError naming both variables when they are set to different values.
 */
export function variableInUse(env: Readonly<Record<string, string | undefined>>, renamed: RenamedVariable): VariableInUse {
  const current = valueOf(env, renamed.name);
  const old = valueOf(env, renamed.deprecated);
  if (old === undefined) return { variable: renamed.name, deprecated: false };
  if (current === undefined) return { variable: renamed.deprecated, deprecated: true };
  if (current !== old) throw new SourceOptionsError(renamed.name, `is "${current}" but ${renamed.deprecated}, its deprecated name, is "${old}": unset ${renamed.deprecated}`);
  return { variable: renamed.name, deprecated: false };
}

/** The one warning line for a deprecated name in use. */
export function deprecatedVariableWarning(renamed: RenamedVariable): { message: string; fields: Record<string, string> } {
  return {
    message: `${renamed.deprecated} is deprecated: set ${renamed.name} instead (the old name is read until the next minor release)`,
    fields: { variable: renamed.deprecated, replacement: renamed.name },
  };
}
