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
import { serveAdmission } from '../../lib/webhooks/http-door.ts';
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
    await r.review();
    const start = r.bytes();
    const latencies: number[] = [];
    for (let done = 0; done < reviews; done += atOnce) latencies.push(...(await Promise.all(Array.from({ length: Math.min(atOnce, reviews - done) }, () => r.review()))));
    return { latencies, bytesPerReview: (r.bytes() - start) / reviews };
  } finally {
    r.close();
  }
}

async function coldRow(cp: ControlPlane, mode: Mode, count: number) {
  const latencies: number[] = [];
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const r = reviewer(cp, mode);
    try {
      latencies.push(await r.review());
      bytes += r.bytes();
    } finally {
      r.close();
    }
  }
  return { latencies, bytesPerReview: bytes / count };
}

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
    for (const mode of ['before', 'now'] as const) {
      const label = mode === 'before' ? 'before (metadata list)' : 'now (Table of resourceVersions)';
      log(`bench: reads: ${label}...`);
      rows.push(row(`${label}: cold (new client, full list)`, await coldRow(cp, mode, settings.cold)));
      rows.push(row(`${label}: warm, one at a time`, await warmRow(cp, mode, settings.warm, 1)));
      rows.push(row(`${label}: warm, ${settings.concurrent} at once`, await warmRow(cp, mode, settings.concurrent, settings.concurrent)));
    }
    return {
      id: 'reads',
      title: `5b. pod-inject's reads among heavy SidecarSets (real API server, ${settings.sets} sets of ${bytesText(perSet)} each)`,
      method: [
        `The pinned kube-apiserver with this project's CRD and ${settings.sets} SidecarSets (section 1's, 5 selecting the bench pod), each carrying ${settings.labelsPerSet} labels of about 90 bytes, so that a set weighs ${bytesText(perSet)} as the admin lists it (labels and their managedFields entries; the spec is a few kB). The pod-inject review of section 1 through \`serveAdmission\` with the live sources the functions compose (the project's HTTPS client, the functions identity, the stored version found by discovery).`,
        `Cold: a new client and source per review (a new connection, then the full list, read in pages of bounded bytes, each set kept without its managedFields). Warm: one reviewer after its first review, ${settings.warm} reviews one after another, then ${settings.concurrent} at once (they share the next read). Bytes: SidecarSet answers read by the adapter (after decompression), per review. "Before" is the code before issue 44's item 3: which sets changed was told by the metadata list, which carries every label, annotation and managedFields entry; "now" by a Table of the sets' resourceVersions (\`as=Table\`, \`includeObject=None\`, the CRD's RESOURCEVERSION column); both GET the sets that changed (none here).`,
      ],
      table: { headers: ['reads', 'reviews', 'p50', 'max', 'SidecarSet bytes per review'], rows },
      verdicts: [],
      notes: [],
    };
  } finally {
    await cp.stop();
  }
}
