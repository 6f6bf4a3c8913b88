/**
 * The event the SidecarSet validating webhook sends the reconciler when it
 * admits a change (on AWS: the payload of an asynchronous invoke of the
 * status-sync function; locally: handed to the loop directly). The
 * reconciler tells it from EventBridge's scheduled events by `kind`.
 */
import { isObject } from '../kube/json.ts';
import type { AdmittedSidecarSet } from '../ports.ts';
import { CallerSecretError } from '../auth/caller-auth.ts';
import { parseDeployedWebhookUrls } from '../auth/caller-config.ts';

export const ADMITTED_EVENT_KIND = 'SidecarSetAdmitted';

export interface AdmittedEvent extends AdmittedSidecarSet {
  kind: typeof ADMITTED_EVENT_KIND;
  /** When the webhook sent it (epoch ms): a pod change (`PODS`) a later reconcile covered is skipped (pod-trigger.ts). */
  sentAt?: number;
}

/** A payload that claims to be an admitted-change event but is not one. */
export class AdmittedEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdmittedEventError';
  }
}

export function admittedEvent(change: AdmittedSidecarSet, sentAt: number = Date.now()): AdmittedEvent {
  return { kind: ADMITTED_EVENT_KIND, sidecarSet: change.sidecarSet, uid: change.uid, operation: change.operation, resourceVersion: change.resourceVersion, sentAt };
}

/**
 * The change an event announces; undefined for any other event (a scheduled
 * one).
 * @throws AdmittedEventError naming the field when the event says it is one but is malformed.
 */
export function parseAdmittedEvent(event: unknown): (AdmittedSidecarSet & { sentAt?: number }) | undefined {
  if (!isObject(event) || event.kind !== ADMITTED_EVENT_KIND) return undefined;
  const { sidecarSet, uid, operation, resourceVersion, sentAt } = event;
  if (typeof sidecarSet !== 'string' || sidecarSet === '') throw new AdmittedEventError(`${ADMITTED_EVENT_KIND} event: sidecarSet must be a non-empty string`);
  if (typeof uid !== 'string') throw new AdmittedEventError(`${ADMITTED_EVENT_KIND} event: uid must be a string`);
  if (operation !== 'CREATE' && operation !== 'UPDATE' && operation !== 'PODS') throw new AdmittedEventError(`${ADMITTED_EVENT_KIND} event: operation must be CREATE, UPDATE or PODS`);
  if (typeof resourceVersion !== 'string') throw new AdmittedEventError(`${ADMITTED_EVENT_KIND} event: resourceVersion must be a string`);
  if (sentAt !== undefined && (typeof sentAt !== 'number' || !Number.isFinite(sentAt))) throw new AdmittedEventError(`${ADMITTED_EVENT_KIND} event: sentAt must be a number`);
  return { sidecarSet, uid, operation, resourceVersion, ...(sentAt === undefined ? {} : { sentAt }) };
}

/**
 * The event status-sync sends itself (an asynchronous invoke) when its
 * controller's budget ends with rollouts still in flight, so that they go on at
 * once instead of at the next scheduled tick (a self-requeue: docs/RECONCILER.md).
 */
export const CONTINUE_EVENT_KIND = 'StatusSyncContinue';

/** The most sets one self-requeue names; more is not an event this function sent. */
export const MAX_CONTINUED_SETS = 200;

export interface ContinueEvent {
  kind: typeof CONTINUE_EVENT_KIND;
  /** The sets still in flight. */
  sets: string[];
  /** Which warm container sent it (random per cold start), and when (epoch ms): a later invocation there supersedes it. */
  from: string;
  sentAt: number;
}

/** A name a SidecarSet can have (a DNS subdomain), so a self-requeue cannot smuggle a path or a query. */
const SET_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * The self-requeue an event asks for; undefined for any other event.
 * @throws AdmittedEventError naming the field when the event says it is one but is malformed or too large.
 */
export function parseContinueEvent(event: unknown): ContinueEvent | undefined {
  if (!isObject(event) || event.kind !== CONTINUE_EVENT_KIND) return undefined;
  const { sets, from, sentAt } = event;
  if (!Array.isArray(sets) || sets.length > MAX_CONTINUED_SETS) throw new AdmittedEventError(`${CONTINUE_EVENT_KIND} event: sets must be an array of at most ${MAX_CONTINUED_SETS} names`);
  const names: string[] = [];
  for (const name of sets as unknown[]) {
    if (typeof name !== 'string' || !SET_NAME.test(name)) throw new AdmittedEventError(`${CONTINUE_EVENT_KIND} event: sets must hold SidecarSet names, got ${typeof name === 'string' ? JSON.stringify(name.slice(0, 80)) : typeof name}`);
    names.push(name);
  }
  if (typeof from !== 'string' || from.length > 100) throw new AdmittedEventError(`${CONTINUE_EVENT_KIND} event: from must be a string`);
  if (typeof sentAt !== 'number' || !Number.isFinite(sentAt)) throw new AdmittedEventError(`${CONTINUE_EVENT_KIND} event: sentAt must be a number`);
  return { kind: CONTINUE_EVENT_KIND, sets: [...new Set(names)], from, sentAt };
}

/** The key two triggers of the same admitted change share. */
function triggerKey(change: AdmittedSidecarSet): string {
  return JSON.stringify([change.sidecarSet, change.uid, change.operation, change.resourceVersion]);
}

/**
 * The admitted changes one warm container handled lately, so that the same
 * trigger again (Lambda may deliver an event twice; a forged review sent
 * again) costs no API request at all. Bounded: the oldest is forgotten
 * first, and none is remembered longer than `ttlMs`.
 */
export function recentTriggers(options: { ttlMs?: number; max?: number } = {}): { seen(change: AdmittedSidecarSet, nowMs: number): boolean } {
  const ttlMs = options.ttlMs ?? 60_000;
  const max = options.max ?? 256;
  const handled = new Map<string, number>();
  return {
    /** Whether the same change was handled within `ttlMs`; records it otherwise. */
    seen(change, nowMs) {
      const key = triggerKey(change);
      const at = handled.get(key);
      if (at !== undefined && nowMs - at < ttlMs) return true;
      handled.delete(key);
      handled.set(key, nowMs);
      while (handled.size > max) handled.delete(handled.keys().next().value as string);
      return false;
    },
  };
}

/**
 * The webhook URL prefixes the stack deployed, as its schedule hands them to
 * each scheduled reconcile (`detail.deployedWebhookUrls`, infra/aws/stack.ts):
 * the only URLs the rotation writes a secret into. Undefined when the event
 * carries none (then nothing is written).
 * @throws CallerSecretError naming a malformed entry.
 */
export function deployedUrlsOfScheduledEvent(event: unknown): string[] | undefined {
  const detail = isObject(event) && isObject(event.detail) ? event.detail : undefined;
  const urls = detail?.deployedWebhookUrls;
  if (urls === undefined) return undefined;
  if (!Array.isArray(urls)) throw new CallerSecretError('the scheduled event\'s detail.deployedWebhookUrls must be a list of URL prefixes');
  return parseDeployedWebhookUrls(urls, 'the scheduled event\'s detail.deployedWebhookUrls');
}
