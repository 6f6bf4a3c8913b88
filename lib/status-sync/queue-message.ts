/**
 * What the controller's queue carries on AWS (SQS, docs/OPERATIONS.md "The
 * queue"): one message per set name. An admitted change (or a pod trigger)
 * travels as its SidecarSetAdmitted event, so its reconcile still waits until the
 * change is stored; a name the resync or a self-requeue hands over travels
 * as a SidecarSetKey. Each message's group is its set's name (FIFO: one set
 * is never handed to two invocations at once), and its deduplication id
 * coalesces the same set's messages within a second.
 */
import { isObject } from '../kube/json.ts';
import type { AdmittedSidecarSet } from '../ports.ts';
import { admittedEvent, AdmittedEventError, parseAdmittedEvent } from './admitted-event.ts';

export const SET_KEY_KIND = 'SidecarSetKey';

/** One message to send: its body, its group and its deduplication id. */
export interface SetMessage {
  body: string;
  group: string;
  deduplicationId: string;
}

/** A set's name handed over (the resync's in-flight sets, a self-requeue), or an admitted change. */
export type SetWork = { sidecarSet: string; change?: undefined } | { sidecarSet: string; change: AdmittedSidecarSet };

/** The message for `work`, sent at `nowMs`. */
export function setMessage(work: SetWork, nowMs: number = Date.now()): SetMessage {
  const body = work.change === undefined ? { kind: SET_KEY_KIND, sidecarSet: work.sidecarSet, sentAt: nowMs } : admittedEvent(work.change, nowMs);
  const second = Math.floor(nowMs / 1000);
  // A change of the set itself is never coalesced with a name or a pod trigger: its own wait for visibility matters.
  const what = work.change === undefined ? 'key' : work.change.operation === 'PODS' ? 'pods' : `${work.change.operation}-${work.change.resourceVersion}`;
  return { body: JSON.stringify(body), group: work.sidecarSet, deduplicationId: dedupId(`${work.sidecarSet}.${what}.${second}`) };
}

/** SQS allows 128 characters of [A-Za-z0-9!-/:-@[-`{-~] in an id: a set name (at most 253) is cut and hashed in. */
function dedupId(text: string): string {
  if (text.length <= 128) return text;
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return `${text.slice(0, 119)}.${(hash >>> 0).toString(16).padStart(8, '0')}`;
}

/** A message that cannot be read: it is dropped (retrying it would not help), and told. */
export class SetMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SetMessageError';
  }
}

/** What a message asks for, with its `sentAt` when it says. */
export function parseSetMessage(body: string): SetWork & { sentAt?: number } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new SetMessageError(`a queue message is not JSON (${JSON.stringify(body.slice(0, 80))})`);
  }
  try {
    const change = parseAdmittedEvent(parsed);
    if (change !== undefined) return { sidecarSet: change.sidecarSet, change, ...(change.sentAt === undefined ? {} : { sentAt: change.sentAt }) };
  } catch (error) {
    throw new SetMessageError((error as AdmittedEventError).message);
  }
  if (!isObject(parsed) || parsed.kind !== SET_KEY_KIND) throw new SetMessageError(`a queue message is neither ${SET_KEY_KIND} nor SidecarSetAdmitted`);
  const { sidecarSet, sentAt } = parsed;
  if (typeof sidecarSet !== 'string' || sidecarSet === '') throw new SetMessageError(`${SET_KEY_KIND} message: sidecarSet must be a non-empty string`);
  return { sidecarSet, ...(typeof sentAt === 'number' && Number.isFinite(sentAt) ? { sentAt } : {}) };
}

/** One message of a batch, as Lambda's SQS event carries it. */
export interface QueueRecord {
  messageId: string;
  body: string;
}

/** A batch read: each message's work, and the messages that could not be read (dropped, and told). */
export interface QueueBatch {
  work: { messageId: string; work: SetWork & { sentAt?: number } }[];
  refused: { messageId: string; reason: string }[];
}

export function readBatch(records: readonly QueueRecord[]): QueueBatch {
  const batch: QueueBatch = { work: [], refused: [] };
  for (const record of records) {
    try {
      batch.work.push({ messageId: record.messageId, work: parseSetMessage(record.body) });
    } catch (error) {
      batch.refused.push({ messageId: record.messageId, reason: (error as SetMessageError).message });
    }
  }
  return batch;
}

/**
 * The messages to report failed (SQS hands them out again, and after its
 * receive limit moves them to the dead-letter queue): those of sets whose
 * reconciles failed, or every one when a failure names no set.
 */
export function failedMessages(batch: QueueBatch, failedSets: ReadonlySet<string>, failedAll: boolean): string[] {
  return batch.work.filter((w) => failedAll || failedSets.has(w.work.sidecarSet)).map((w) => w.messageId);
}
