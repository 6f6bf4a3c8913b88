/** The rollout bench's count of the functions' requests in the API server's audit log (pure: no control plane). */

interface AuditEvent {
  verb?: string;
  requestURI?: string;
  objectRef?: { resource?: string; subresource?: string; name?: string };
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

function eventsOf(text: string): AuditEvent[] {
  return text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as AuditEvent);
}

/** `VERB resource[/subresource]`, or `VERB path` for a request for no resource (discovery, /version). */
function keyOf(event: AuditEvent): string {
  const ref = event.objectRef;
  const what = ref?.resource ?? event.requestURI?.split('?')[0] ?? '?';
  return `${event.verb ?? '?'} ${what}${ref?.subresource === undefined ? '' : `/${ref.subresource}`}`;
}

/** Counts the audit log's requests by verb and resource; a request for no resource (discovery, /version) by its path. */
export function countAudit(text: string): [string, number][] {
  const counts = new Map<string, number>();
  for (const event of eventsOf(text)) counts.set(keyOf(event), (counts.get(keyOf(event)) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/** How long the API server took to answer one kind of request: from its arrival to the response's end. */
export interface ServerTime {
  request: string;
  count: number;
  p50Ms: number;
  p90Ms: number;
}

/**
 * The API server's own time per kind of request (the audit event's
 * requestReceivedTimestamp to its ResponseComplete stageTimestamp, microsecond
 * precision), most frequent first; watches are left out (they last as long as
 * they are open).
 */
export function serverTimes(text: string): ServerTime[] {
  const times = new Map<string, number[]>();
  for (const { request, receivedMs, doneMs } of timedRequests(text)) {
    const all = times.get(request);
    if (all === undefined) times.set(request, [doneMs - receivedMs]);
    else all.push(doneMs - receivedMs);
  }
  return [...times]
    .map(([request, all]) => {
      const sorted = all.sort((a, b) => a - b);
      return { request, count: sorted.length, p50Ms: rank(sorted, 0.5), p90Ms: rank(sorted, 0.9) };
    })
    .sort((a, b) => b.count - a.count || a.request.localeCompare(b.request));
}

/** One request of the audit log, its times in milliseconds since the epoch (microsecond precision). */
export interface TimedRequest {
  /** `VERB resource[/subresource]`, as {@link countAudit} counts it. */
  request: string;
  name: string | undefined;
  receivedMs: number;
  doneMs: number;
}

/** The audit log's requests with their times, in the order the log holds them; watches left out. */
export function timedRequests(text: string): TimedRequest[] {
  return eventsOf(text).flatMap((event) => {
    const { requestReceivedTimestamp: received, stageTimestamp: done } = event;
    if (event.verb === 'watch' || received === undefined || done === undefined) return [];
    return [{ request: keyOf(event), name: event.objectRef?.name, receivedMs: epochMs(received), doneMs: epochMs(done) }];
  });
}

function epochMs(timestamp: string): number {
  return Date.parse(timestamp) + micros(timestamp) / 1000;
}

/** The sub-millisecond part of an RFC 3339 timestamp (Date.parse keeps milliseconds only), in microseconds. */
function micros(timestamp: string): number {
  const fraction = /\.(\d+)/.exec(timestamp)?.[1] ?? '';
  return Number(fraction.padEnd(6, '0').slice(3, 6));
}

/** The nearest-rank quantile of sorted values. */
function rank(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}
