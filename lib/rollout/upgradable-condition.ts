/**
 * The pod condition `SidecarSetUpgradable` (rollout.md §1.7, format §5),
 * sent as a strategic-merge patch of `pods/status`.
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject, Pod } from '../kube/types.ts';
import { compareGoStrings, goJsonString } from '../sidecarset/go-json.ts';
import { formatTimestamp } from '../sidecarset/pod-annotations.ts';

export const CONDITION_SIDECARSET_UPGRADABLE = 'SidecarSetUpgradable';

/** The condition in Go's PodCondition field order. */
export interface UpgradableCondition {
  type: typeof CONDITION_SIDECARSET_UPGRADABLE;
  status: 'True' | 'False';
  lastProbeTime: null;
  lastTransitionTime: string | null;
  reason: 'AllSidecarsetUpgradable' | 'UpdateImmutableField';
  message: string;
}

/** The message's map of set name to upgradable; an unreadable message counts as empty. */
function parseMessage(message: unknown): Map<string, boolean> {
  const out = new Map<string, boolean>();
  if (typeof message !== 'string' || message === '') return out;
  try {
    const parsed: unknown = JSON.parse(message);
    if (isObject(parsed)) for (const [k, v] of Object.entries(parsed)) if (typeof v === 'boolean') out.set(k, v);
  } catch {
    // Kruise starts from an empty map too.
  }
  return out;
}

function formatMessage(map: ReadonlyMap<string, boolean>): string {
  const keys = [...map.keys()].sort(compareGoStrings);
  return `{${keys.map((k) => `${goJsonString(k)}:${String(map.get(k))}`).join(',')}}`;
}

/**
 * The `pods/status` strategic-merge patch `{"status":{"conditions":[…]}}`
 * that records `setName: upgradable` in the condition, or undefined when the
 * condition already says so (Kruise sends nothing then).
 * `lastTransitionTime` moves only when the status flips.
 */
export function upgradableConditionPatch(pod: Pod, setName: string, upgradable: boolean, now: Date): { status: { conditions: [UpgradableCondition] } } | undefined {
  const existing = arrayOf(objectOf(pod.status)?.conditions).find(
    (c): c is JsonObject => isObject(c) && c.type === CONDITION_SIDECARSET_UPGRADABLE,
  );
  const map = parseMessage(existing?.message);
  map.set(setName, upgradable);
  const allTrue = [...map.values()].every(Boolean);
  const status = allTrue ? 'True' : 'False';
  const message = formatMessage(map);
  const reason = allTrue ? 'AllSidecarsetUpgradable' : 'UpdateImmutableField';
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
