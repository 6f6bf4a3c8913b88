/**
 * The event the SidecarSet validating webhook sends the reconciler when it
 * admits a change (on AWS: the payload of an asynchronous invoke of the
 * status-sync function; locally: handed to the loop directly). The
 * reconciler tells it from EventBridge's scheduled events by `kind`.
 */
import { isObject } from '../kube/json.ts';
import type { AdmittedSidecarSet } from '../ports.ts';

export const ADMITTED_EVENT_KIND = 'SidecarSetAdmitted';

export interface AdmittedEvent extends AdmittedSidecarSet {
  kind: typeof ADMITTED_EVENT_KIND;
}

/** A payload that claims to be an admitted-change event but is not one. */
export class AdmittedEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdmittedEventError';
  }
}

export function admittedEvent(change: AdmittedSidecarSet): AdmittedEvent {
  return { kind: ADMITTED_EVENT_KIND, sidecarSet: change.sidecarSet, uid: change.uid, operation: change.operation, resourceVersion: change.resourceVersion };
}

/**
 * The change an event announces; undefined for any other event (a scheduled
 * one).
 * @throws AdmittedEventError naming the field when the event says it is one but is malformed.
 */
export function parseAdmittedEvent(event: unknown): AdmittedSidecarSet | undefined {
  if (!isObject(event) || event.kind !== ADMITTED_EVENT_KIND) return undefined;
  const { sidecarSet, uid, operation, resourceVersion } = event;
  if (typeof sidecarSet !== 'string' || sidecarSet === '') throw new AdmittedEventError(`${ADMITTED_EVENT_KIND} event: sidecarSet must be a non-empty string`);
  if (typeof uid !== 'string') throw new AdmittedEventError(`${ADMITTED_EVENT_KIND} event: uid must be a string`);
  if (operation !== 'CREATE' && operation !== 'UPDATE') throw new AdmittedEventError(`${ADMITTED_EVENT_KIND} event: operation must be CREATE or UPDATE`);
  if (typeof resourceVersion !== 'string') throw new AdmittedEventError(`${ADMITTED_EVENT_KIND} event: resourceVersion must be a string`);
  return { sidecarSet, uid, operation, resourceVersion };
}
