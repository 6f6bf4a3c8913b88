/**
 * Kruise's webhook entries for SidecarSets and pod injection, as its
 * configurations hold them, and this project's. Kruise's manager runs a
 * webhook controller (pkg/webhook/util/controller) that, at start, every
 * minute and whenever its configurations change, rebuilds each
 * configuration's `webhooks` from the copy it keeps in the configuration's
 * `template` annotation (pkg/webhook/util/configuration Ensure), keeping the
 * entries whose handler is registered: the SidecarSet ones always, the pod
 * ones while the PodWebhook gate is on. An entry deleted from `webhooks`
 * alone is therefore back within a minute; it stays away when it is gone from
 * the template too, or when its handler is not registered. With the
 * EnableExternalCerts gate the controller only checks CA bundles and never
 * writes.
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import { managerActive, type KruiseManager } from './kruise-manager.ts';

export const KRUISE_MUTATING_CONFIGURATION = 'kruise-mutating-webhook-configuration';
export const KRUISE_VALIDATING_CONFIGURATION = 'kruise-validating-webhook-configuration';
export const OUR_CONFIGURATION = 'serverless-sidecarset';

export type EntryKind = 'sidecarset' | 'pod-inject';

/** One of Kruise's entries that handles SidecarSets or injects pods. */
export interface KruiseEntry {
  configuration: typeof KRUISE_MUTATING_CONFIGURATION | typeof KRUISE_VALIDATING_CONFIGURATION;
  name: string;
  kind: EntryKind;
  /** In `webhooks`: the API server calls it now. */
  active: boolean;
  /** In the `template` annotation the manager rebuilds `webhooks` from. */
  inTemplate: boolean;
  /** Not active now, but the running manager will put it back (from the template) within a minute. */
  returns: boolean;
}

function rulesOf(entry: JsonObject): JsonObject[] {
  return arrayOf(entry.rules).filter(isObject);
}

const strings = (value: unknown): string[] => arrayOf(value).filter((v): v is string => typeof v === 'string');

/** What the entry handles: SidecarSets (apps.kruise.io sidecarsets), pod creation (mutating only), or neither. */
export function entryKind(entry: JsonObject, mutating: boolean): EntryKind | undefined {
  for (const rule of rulesOf(entry)) {
    const groups = strings(rule.apiGroups);
    const resources = strings(rule.resources);
    const operations = strings(rule.operations);
    if (resources.includes('sidecarsets') && (groups.includes('apps.kruise.io') || groups.includes('*'))) return 'sidecarset';
    if (mutating && (resources.includes('pods') || resources.includes('*')) && (groups.includes('') || groups.includes('*')) && (operations.includes('CREATE') || operations.includes('*'))) return 'pod-inject';
  }
  return undefined;
}

/** The `template` annotation's entries; undefined when there is none or it is not a JSON array (the manager then fails its sync). */
function templateEntries(configuration: JsonObject): JsonObject[] | undefined {
  const text = stringOf(objectOf(objectOf(configuration.metadata)?.annotations)?.template);
  if (text === undefined || text === '') return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter(isObject) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Kruise's SidecarSet and pod-injection entries in one of its
 * configurations (undefined: the configuration does not exist).
 */
export function kruiseEntries(configuration: JsonObject | undefined, mutating: boolean, manager: KruiseManager | undefined): KruiseEntry[] {
  if (configuration === undefined) return [];
  const name = mutating ? KRUISE_MUTATING_CONFIGURATION : KRUISE_VALIDATING_CONFIGURATION;
  const active = arrayOf(configuration.webhooks).filter(isObject);
  // Without a template the manager makes one from `webhooks` as they are at its next sync.
  const template = templateEntries(configuration) ?? active;
  const writes = managerActive(manager) && manager?.featureGates.get('EnableExternalCerts') !== true;
  const byName = new Map<string, KruiseEntry>();
  const consider = (entry: JsonObject, isActive: boolean) => {
    const kind = entryKind(entry, mutating);
    const entryName = stringOf(entry.name);
    if (kind === undefined || entryName === undefined) return;
    const seen = byName.get(entryName) ?? { configuration: name, name: entryName, kind, active: false, inTemplate: false, returns: false };
    if (isActive) seen.active = true;
    else seen.inTemplate = true;
    byName.set(entryName, seen);
  };
  for (const entry of active) consider(entry, true);
  for (const entry of template) consider(entry, false);
  for (const entry of byName.values()) {
    const handlerRegistered = entry.kind === 'sidecarset' || manager?.podWebhook !== false;
    entry.returns = !entry.active && entry.inTemplate && writes && handlerRegistered;
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Which of this project's entries are installed. */
export interface OurEntries {
  podInject: boolean;
  sidecarSetDefault: boolean;
  sidecarSetValidate: boolean;
}

export function ourEntries(mutating: JsonObject | undefined, validating: JsonObject | undefined): OurEntries {
  const names = (c: JsonObject | undefined) => new Set(arrayOf(c?.webhooks).filter(isObject).map((e) => stringOf(e.name)));
  const m = names(mutating);
  const v = names(validating);
  return {
    podInject: m.has('pod-inject.sidecarset.kruise.io'),
    sidecarSetDefault: m.has('sidecarset-default.sidecarset.kruise.io'),
    sidecarSetValidate: v.has('sidecarset-validate.sidecarset.kruise.io'),
  };
}
