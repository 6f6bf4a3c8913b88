/**
 * The pod condition `SidecarSetUpgradable` (rollout.md §1.7, format §5),
 * sent as a strategic-merge patch of `pods/status`.
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject, Pod } from '../kube/types.ts';
import { compareGoStrings, goJsonString } from '../sidecarset/go-json.ts';
import { formatTimestamp } from '../sidecarset/pod-annotations.ts';

export const CONDITION_SIDECARSET_UPGRADABLE = 'SidecarSetUpgradable';

/** Why a pod is not upgradable: Kruise's reason, or a write of this reconcile that failed. */
export type NotUpgradableReason = 'UpdateImmutableField' | 'PodUpdateFailed';

/**
 * What the condition records for a set: upgradable (true), not upgradable
 * (false, Kruise's word), or not upgradable with why (the message then holds
 * the why for that set instead of `false`).
 */
export type Upgradable = boolean | { reason: NotUpgradableReason; why: string };

/** A why longer than this is cut: several sets share one message. */
const WHY_LIMIT = 300;

/** The condition in Go's PodCondition field order. */
export interface UpgradableCondition {
  type: typeof CONDITION_SIDECARSET_UPGRADABLE;
  status: 'True' | 'False';
  lastProbeTime: null;
  lastTransitionTime: string | null;
  reason: 'AllSidecarsetUpgradable' | NotUpgradableReason;
  message: string;
}

/**
 * The message's map of set name to upgradable (true, false, or why not); an
 * unreadable message counts as empty.
 */
function parseMessage(message: unknown): Map<string, boolean | string> {
  const out = new Map<string, boolean | string>();
  if (typeof message !== 'string' || message === '') return out;
  try {
    const parsed: unknown = JSON.parse(message);
    if (isObject(parsed)) for (const [k, v] of Object.entries(parsed)) if (typeof v === 'boolean' || typeof v === 'string') out.set(k, v);
  } catch {
    // Kruise starts from an empty map too.
  }
  return out;
}

function formatMessage(map: ReadonlyMap<string, boolean | string>): string {
  const keys = [...map.keys()].sort(compareGoStrings);
  const entry = (k: string) => {
    const v = map.get(k);
    return `${goJsonString(k)}:${typeof v === 'string' ? goJsonString(v) : String(v)}`;
  };
  return `{${keys.map(entry).join(',')}}`;
}

/**
 * The `pods/status` strategic-merge patch `{"status":{"conditions":[…]}}`
 * that records `setName: upgradable` in the condition, or undefined when the
 * condition already says so (Kruise sends nothing then).
 * `lastTransitionTime` moves only when the status flips. The message is
 * Kruise's JSON map of set name to `true`/`false`, except that a set that
 * says why a pod is not upgradable has its why there (docs/ROLLOUT.md:
 * Kruise, reading such a message, starts from an empty map).
 */
export function upgradableConditionPatch(pod: Pod, setName: string, upgradable: Upgradable, now: Date): { status: { conditions: [UpgradableCondition] } } | undefined {
  const existing = arrayOf(objectOf(pod.status)?.conditions).find(
    (c): c is JsonObject => isObject(c) && c.type === CONDITION_SIDECARSET_UPGRADABLE,
  );
  const map = parseMessage(existing?.message);
  map.set(setName, typeof upgradable === 'boolean' ? upgradable : upgradable.why.length > WHY_LIMIT ? `${upgradable.why.slice(0, WHY_LIMIT - 1)}…` : upgradable.why);
  const allTrue = [...map.values()].every((v) => v === true);
  const status = allTrue ? 'True' : 'False';
  const message = formatMessage(map);
  const kept = existing?.status === 'False' && (existing.reason === 'UpdateImmutableField' || existing.reason === 'PodUpdateFailed') ? existing.reason : 'UpdateImmutableField';
  const reason = allTrue ? 'AllSidecarsetUpgradable' : typeof upgradable === 'object' ? upgradable.reason : upgradable ? kept : 'UpdateImmutableField';
  if (existing !== undefined && existing.status === status && existing.reason === reason && existing.message === message) return undefined;
  const previousTransition = stringOf(existing?.lastTransitionTime) ?? null;
  const condition: UpgradableCondition = {
    type: CONDITION_SIDECARSET_UPGRADABLE,
    status,
    lastProbeTime: null,
    lastTransitionTime: existing !== undefined && existing.status === status ? previousTransition : formatTimestamp(now),
    reason,
    message,
  };
  return { status: { conditions: [condition] } };
}
