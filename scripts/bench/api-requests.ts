/**
 * API requests counted by the API server itself: apiserver_request_total
 * from /metrics (read as the admin), before and after a run. Only the
 * resources the reconciler touches are counted, so the server's own
 * background requests (leases) and the scrapes do not blur the figure.
 */
import type { ControlPlane } from '../../control-plane/harness.ts';

export const COUNTED_RESOURCES = ['pods', 'sidecarsets', 'namespaces', 'events', 'controllerrevisions'] as const;

/** `VERB resource[/subresource]` → count, from the Prometheus text format. */
export function requestCounts(metrics: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const close = line.lastIndexOf('}');
    const labels = new Map<string, string>();
    for (const m of line.slice(line.indexOf('{') + 1, close).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels.set(m[1] ?? '', m[2] ?? '');
    const resource = labels.get('resource') ?? '';
    if (!(COUNTED_RESOURCES as readonly string[]).includes(resource)) continue;
    const subresource = labels.get('subresource') ?? '';
    const key = `${labels.get('verb') ?? '?'} ${resource}${subresource === '' ? '' : `/${subresource}`}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(line.slice(close + 1).trim()));
  }
  return counts;
}

/** What `after` counted beyond `before`, largest first; zero rows left out. */
export function countDelta(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): [string, number][] {
  return [...after]
    .map(([key, n]): [string, number] => [key, n - (before.get(key) ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

export async function scrapeCounts(cp: ControlPlane): Promise<Map<string, number>> {
  const res = await cp.request('admin', 'GET', '/metrics');
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
  return requestCounts(res.body);
}

/** Runs `task` and returns the API requests the server counted meanwhile. */
export async function countRequests<T>(cp: ControlPlane, task: () => Promise<T>): Promise<{ value: T; requests: [string, number][] }> {
  const before = await scrapeCounts(cp);
  const value = await task();
  return { value, requests: countDelta(before, await scrapeCounts(cp)) };
}
