/**
 * A KubeClient (lib/adapters/kube-request.ts) that counts the bytes of every
 * SidecarSet answer it reads and names each read: what the tests and the
 * benchmark of pod-inject's reads assert and report.
 */
import type { KubeClient } from '../lib/adapters/kube-request.ts';

/** One read of SidecarSets: `full list`, `metadata list`, `table` or `get <name>`, and its bytes after decompression. */
export interface CountedRead {
  what: string;
  bytes: number;
}

const whatOf = (path: string, accept: string | undefined, list: boolean): string => {
  if (!path.endsWith('/sidecarsets')) return `get ${path.split('/').pop() ?? ''}`;
  if (accept === undefined) return list ? 'full list' : 'list';
  return /as=Table/.test(accept) ? 'table' : 'metadata list';
};

/** `inner`, its SidecarSet reads recorded in `seen` (discovery and other resources are not). */
export function countingClient(inner: KubeClient): { client: KubeClient; seen: CountedRead[]; bytes: () => number } {
  const seen: CountedRead[] = [];
  const record = (path: string, accept: string | undefined, list: boolean, bytes: number) => {
    if (path.includes('/sidecarsets')) seen.push({ what: whatOf(path, accept, list), bytes });
  };
  const client: KubeClient = {
    server: inner.server,
    request: async (request) => {
      const answer = await inner.request(request);
      record(request.path, request.accept, false, answer.bytes);
      return answer;
    },
    list: async (request, keep, onHead) => {
      const answer = await inner.list(request, keep, onHead);
      record(request.path, request.accept, true, answer.bytes);
      return answer;
    },
    watch: (request, onEvent) => inner.watch(request, onEvent),
    requests: () => inner.requests(),
    close: () => {
      inner.close();
    },
  };
  return { client, seen, bytes: () => seen.reduce((sum, read) => sum + read.bytes, 0) };
}
