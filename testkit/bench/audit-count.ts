/** The rollout bench's count of the functions' requests in the API server's audit log (pure: no control plane). */

/** Counts the audit log's requests by verb and resource; a request for no resource (discovery, /version) by its path. */
export function countAudit(text: string): [string, number][] {
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const event = JSON.parse(line) as { verb?: string; requestURI?: string; objectRef?: { resource?: string; subresource?: string } };
    const ref = event.objectRef;
    const what = ref?.resource ?? event.requestURI?.split('?')[0] ?? '?';
    const key = `${event.verb ?? '?'} ${what}${ref?.subresource === undefined ? '' : `/${ref.subresource}`}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}
