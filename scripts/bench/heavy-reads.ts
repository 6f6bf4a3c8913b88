/**
 * Section 5b (issue 44): what pod-inject reads per review when the
 * SidecarSets carry heavy metadata: 61 sets of about 1.2 MB of labels and
 * managedFields each, on the pinned kube-apiserver. "Before" tells which sets
 * changed with the metadata list (PartialObjectMetadataList, which carries
 * every label and managedFields entry); "now" with the Table of their
 * resourceVersions (lib/adapters/kube-sidecarset-table.ts). Both read the
 * full list on a cold start. Each review is section 1's pod-inject review
 * through `serveAdmission` with the live sources as the functions compose
 * them (the stored version found by discovery, the functions identity).
 */
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { kubeClient, settingsConnection } from '../../lib/adapters/kube-request.ts';
import { discoveredSidecarSetVersion } from '../../lib/adapters/kube-sidecarsets-version.ts';
import { kubeClusterReader, kubeNamespaceSource, kubeSidecarSetSource } from '../../lib/adapters/kube-sources.ts';
import { serveAdmission } from '../../lib/webhooks/http-handler.ts';
import { admissionRuntime } from '../../functions/shared/compose.ts';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { SECRET } from '../../testkit/reviews.ts';
import { countingClient } from '../../testkit/counting-client.ts';
import { benchBodies, benchNamespaces, clusterSidecarSets } from '../../testkit/bench/admission-inputs.ts';
import { benchControlPlane, create, forCreate, inParallel, SIDECARSETS_PATH } from '../../testkit/bench/cluster.ts';
import { quantile } from '../../testkit/bench/stats.ts';
import { doorRequest } from './admission-compute.ts';
import { bytesText, num } from './format.ts';
import type { SectionReport } from './report.ts';

export interface HeavyReadsSettings {
  /** SidecarSets stored, and labels on each (each label and its managedFields entry about 130 bytes). */
  sets: number;
  labelsPerSet: number;
  /** Cold reviews (a new client and source each), warm reviews one after another, and reviews at once. */
  cold: number;
  warm: number;
  concurrent: number;
}

type Mode = 'before' | 'now';

/** One pod-inject runtime over live sources, its SidecarSet reads counted; `before` without the Table. */
function reviewer(cp: ControlPlane, mode: Mode) {
  const inner = kubeClient(settingsConnection({ server: cp.url, ca: cp.caCert, token: () => cp.functionsToken }), { retryDelaysMs: [] });
  const counting = countingClient(inner);
  const reader = kubeClusterReader(counting.client, discoveredSidecarSetVersion(counting.client));
  // A read may take several seconds among 75 MB of sets: bounded as the functions bound it (LIST_LOAD_CALLS calls), not less.
  const sidecarSets = kubeSidecarSetSource(mode === 'now' ? reader : { ...reader, listSidecarSetTable: undefined });
  const runtime = admissionRuntime('pod-inject', { current: SECRET }, { sidecarSets, namespaces: kubeNamespaceSource(reader) }, jsonLogger({ function: 'pod-inject' }, () => undefined));
  const request = doorRequest(benchBodies().podInject);
  return {
    bytes: counting.bytes,
    /** The SidecarSets read alone, without the review's deadline: a cold read of many megabytes may take longer. */
    async read(): Promise<number> {
      const started = performance.now();
      await sidecarSets.list();
      return performance.now() - started;
    },
    async review(): Promise<number> {
      const started = performance.now();
      const answer = await serveAdmission(request, runtime.config, runtime.deps);
      const elapsed = performance.now() - started;
      const body = JSON.parse(answer.body) as { response?: { patch?: unknown } };
      if (answer.statusCode !== 200 || typeof body.response?.patch !== 'string') throw new Error(`pod-inject did not inject the bench pod: ${answer.statusCode} ${answer.body.slice(0, 300)}`);
      return elapsed;
    },
    close: () => {
      inner.close();
    },
  };
}

/** `count` labels of about 90 bytes (key and value). */
function heavyLabels(count: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`example.com/heavy-label-${String(i).padStart(5, '0')}`, 'v'.repeat(60)]));
}

/** Latencies and bytes per review of `reviews` reviews, `atOnce` at a time, on one warm reviewer. */
async function warmRow(cp: ControlPlane, mode: Mode, reviews: number, atOnce: number) {
  const r = reviewer(cp, mode);
  try {
    await r.read();
    const start = r.bytes();
    const latencies: number[] = [];
    for (let done = 0; done < reviews; done += atOnce) latencies.push(...(await Promise.all(Array.from({ length: Math.min(atOnce, reviews - done) }, () => r.review()))));
    return { latencies, bytesPerReview: (r.bytes() - start) / reviews };
  } finally {
    r.close();
  }
}

/** `count` cold reads of each mode, alternating, so that the machine's drift hits both alike. */
async function coldRows(cp: ControlPlane, count: number): Promise<Record<Mode, { latencies: number[]; bytesPerReview: number }>> {
  const out = { before: { latencies: [] as number[], bytes: 0 }, now: { latencies: [] as number[], bytes: 0 } };
  for (let i = 0; i < count; i++) {
    for (const mode of ['before', 'now'] as const) {
      const r = reviewer(cp, mode);
      try {
        out[mode].latencies.push(await r.read());
        out[mode].bytes += r.bytes();
      } finally {
        r.close();
      }
    }
  }
  const of = (mode: Mode) => ({ latencies: out[mode].latencies, bytesPerReview: out[mode].bytes / count });
  return { before: of('before'), now: of('now') };
}

/** Why the warm reads are a Table rather than a watch-fed copy; checked in k8s.io/apiserver v0.36.3. */
const READS_FINDINGS = [
  'Not a watch-fed copy: a resourceVersion is an etcd revision, global across resources, so the consistent list that starts a review names a revision that every unrelated write (leases, events, pods) moves on. The copy is proven current only once its watch has told an event or bookmark at or past that revision, and kube-apiserver 1.36 sends a plain watch its bookmarks about once a minute and 2 s before its timeout (pkg/storage/cacher/cache_watcher.go, nextBookmarkTime), sooner only to a watch-list (sendInitialEvents=true), whose initial events are every set whole. A review would wait for a bookmark or read everything; on Lambda the watch is gone after every freeze anyway. A list with resourceVersionMatch=NotOlderThan returns its items whole too, and as=PartialObjectMetadata keeps labels, annotations and managedFields.',
  'Chosen: a Table of the sets with includeObject=None (pkg/endpoints/handlers/response.go drops each row\'s object) and a printer column on .metadata.resourceVersion (a CRD printer column may name any simple JSONPath; selectableFields may not name metadata). A list without a resourceVersion is a consistent read whatever its form, so the freshness guarantee is the one the metadata list gave; a Table without the column (OpenKruise\'s CRD) falls back to the metadata list.',
  'Not chosen: bounding the metadata validation admits. managedFields are written by the API server, not the user, and sets stored before a bound would keep their weight.',
];

const seconds = (ms: number) => (ms < 1_000 ? `${num(ms, 1)} ms` : `${num(ms / 1000, 2)} s`);
const row = (label: string, { latencies, bytesPerReview }: { latencies: number[]; bytesPerReview: number }) => {
  const sorted = [...latencies].sort((a, b) => a - b);
  return [label, String(sorted.length), seconds(quantile(sorted, 0.5)), seconds(sorted[sorted.length - 1] ?? 0), bytesText(bytesPerReview)];
};

/** The stored sets' average size on the wire, read once as the admin. */
async function storedBytesPerSet(cp: ControlPlane, sets: number): Promise<number> {
  const res = await cp.request('admin', 'GET', SIDECARSETS_PATH);
  return Buffer.byteLength(res.body) / sets;
}

export async function heavyReadsSection(settings: HeavyReadsSettings, log: (line: string) => void): Promise<SectionReport> {
  log(`bench: reads: starting the control plane and storing ${settings.sets} SidecarSets of ${settings.labelsPerSet} labels each...`);
  const cp = await benchControlPlane();
  try {
    for (const ns of benchNamespaces()) await create(cp, '/api/v1/namespaces', ns);
    const labels = heavyLabels(settings.labelsPerSet);
    await inParallel(clusterSidecarSets(settings.sets), 2, (set) => create(cp, SIDECARSETS_PATH, forCreate({ ...set, metadata: { ...set.metadata, labels: { ...set.metadata?.labels, ...labels } } })));
    const perSet = await storedBytesPerSet(cp, settings.sets);
    const rows: string[][] = [];
    const cold = await coldRows(cp, settings.cold);
    for (const mode of ['before', 'now'] as const) {
      const label = mode === 'before' ? 'before (metadata list)' : 'now (Table of resourceVersions)';
      log(`bench: reads: ${label}...`);
      rows.push(row(`${label}: cold read (new client, full list)`, cold[mode]));
      rows.push(row(`${label}: warm, one at a time`, await warmRow(cp, mode, settings.warm, 1)));
      rows.push(row(`${label}: warm, ${settings.concurrent} at once`, await warmRow(cp, mode, settings.concurrent, settings.concurrent)));
    }
    return {
      id: 'reads',
      title: `5b. pod-inject's reads among heavy SidecarSets (real API server, ${settings.sets} sets of ${bytesText(perSet)} each)`,
      method: [
        `The pinned kube-apiserver with this project's CRD and ${settings.sets} SidecarSets (section 1's, 5 selecting the bench pod), each carrying ${settings.labelsPerSet} labels of about 90 bytes, so that a set weighs ${bytesText(perSet)} as the admin lists it (labels and their managedFields entries; the spec is a few kB). The pod-inject review of section 1 through \`serveAdmission\` with the live sources the functions compose (the project's HTTPS client, the functions identity, the stored version found by discovery).`,
        `Cold (measured first, the two modes alternating): a new client and source, the time of its first read of the SidecarSets alone (a new connection, then the full list, read in pages of bounded bytes, each set kept without its managedFields), without the review's 10 s deadline, which it may pass on a loaded machine (the review then fails and the read goes on to serve the next ones). Warm: one reviewer after its first review, ${settings.warm} reviews one after another, then ${settings.concurrent} at once (they share the next read). Bytes: SidecarSet answers read by the adapter (after decompression), per review. "Before" is the metadata list, the fallback: which sets changed is told by it, which carries every label, annotation and managedFields entry; "now" by a Table of the sets' resourceVersions (\`as=Table\`, \`includeObject=None\`, the CRD's RESOURCEVERSION column); both GET the sets that changed (none here).`,
      ],
      table: { headers: ['reads', 'reviews', 'p50', 'max', 'SidecarSet bytes per review'], rows },
      verdicts: [],
      notes: READS_FINDINGS,
    };
  } finally {
    await cp.stop();
  }
}
