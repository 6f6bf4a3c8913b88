/**
 * The worst reviews we can construct for each admission function, sized to a
 * byte budget, and a measurement of one against the JSON.parse floor of its
 * own body. Shared by `npm run reliability` (1, 3 and 6 MB) and the short
 * seeded version in `npm test` (small sizes, growth checks), so both run the
 * same inputs.
 *
 * Each input aims at a step whose work could grow with the product of two
 * user-sized lists: `$(VAR)` lookups in subPathExpr against a long env, the
 * array diff of two long env lists, sharing sidecars copying every app mount,
 * label selector requirements intersected with each other, a SidecarSet
 * compared with other sets name by name.
 */
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { DEFAULT_MAX_BODY_BYTES, serveAdmission, type HttpResponse } from '../../lib/webhooks/http-handler.ts';
import type { AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { deadlineFromTimeout } from '../../lib/webhooks/timeout.ts';
import { median } from '../bench/stats.ts';
import { discardingLogger, fuzzClock } from '../fuzz/handlers.ts';
import { appPod, podReview, sidecarSetReview, userSidecarSet } from '../reviews.ts';

export const MB = 1024 * 1024;
/** The largest body the reliability run sends: just under the handler's limit (Lambda's 6 MB). */
export const LARGEST_BODY = DEFAULT_MAX_BODY_BYTES - 16 * 1024;
/** The timeout the API server appends, as in the webhook configurations. */
export const TIMEOUT = '10s';

export interface AdversarialReview {
  body: string;
  sidecarSets: readonly SidecarSet[];
}

export interface AdversarialCase {
  fn: AdmissionFunctionName;
  name: string;
  /** What it attacks, in a sentence. */
  what: string;
  /** A review of about `bytes` bytes (never more). */
  build(bytes: number): AdversarialReview;
}

/** A SidecarSet selecting the fixtures' pods whose one sidecar shares the app's volumes. */
function sharingSet(name: string, sidecar = `${name}-c`): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name, annotations: { 'kruise.io/sidecarset-hash': 'h', 'kruise.io/sidecarset-hash-without-image': 'h' } },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: sidecar, image: 'sidecar:1.0', shareVolumePolicy: { type: 'enabled' } }],
    },
  };
}

/** How many items of `itemBytes` each fit in `bytes` once `fixed` bytes are spent. */
function fit(bytes: number, fixed: number, itemBytes: number): number {
  return Math.max(1, Math.floor((bytes - fixed) / itemBytes));
}

/** Serialises `make(n)` with n chosen so that the body is as close to `bytes` as possible without passing it. */
function sized(bytes: number, itemBytes: number, make: (n: number) => unknown): string {
  const empty = Buffer.byteLength(JSON.stringify(make(1)));
  let n = fit(bytes, empty, itemBytes);
  let body = JSON.stringify(make(n));
  // Item sizes grow with their index's digits: shrink until it fits.
  for (let size = Buffer.byteLength(body); size > bytes && n > 1; size = Buffer.byteLength(body)) {
    n = Math.max(1, Math.floor(n * (bytes / size) * 0.995));
    body = JSON.stringify(make(n));
  }
  return body;
}

function podWith(containers: unknown[]): unknown {
  const pod = appPod() as { spec: { containers: unknown[] } };
  pod.spec.containers = containers;
  return podReview('adversarial', pod);
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

export const ADVERSARIAL: readonly AdversarialCase[] = [
  {
    fn: 'pod-inject',
    name: 'subPathExpr $(VAR) against a long env',
    what: 'One app container with half the body in env vars and one mount whose subPathExpr is `$(NOPE)` repeated over the other half; a sharing sidecar looks every name up.',
    build(bytes) {
      const envBytes = '{"name":"E100000","value":"v"},'.length;
      const body = sized(bytes, envBytes * 1 + '$(NOPE)'.length * 4, (n) =>
        podWith([
          {
            name: 'app',
            image: 'nginx:1.27',
            env: range(n).map((i) => ({ name: `E${i}`, value: 'v' })),
            volumeMounts: [{ name: 'data', mountPath: '/data', subPathExpr: '$(NOPE)'.repeat(n * 4) }],
          },
        ]),
      );
      return { body, sidecarSets: [sharingSet('share')] };
    },
  },
  {
    fn: 'pod-inject',
    name: 'A container named like the sidecar, transferred env',
    what: 'A container named like the sidecar with n env vars, and an app container with 2n env vars and 2n mounts whose subPathExpr names them: the sidecar replaces the container, and the diff weighs an env list of n against one of 2n.',
    build(bytes) {
      const itemBytes = '{"name":"E100000","value":"v"},'.length * 3 + '{"name":"data","mountPath":"/m200000","subPathExpr":"$(E100000)"},'.length * 2;
      const body = sized(bytes, itemBytes, (n) =>
        podWith([
          { name: 'share-c', image: 'mine:1', env: range(n).map((i) => ({ name: `X${i}`, value: 'w' })) },
          {
            name: 'app',
            image: 'nginx:1.27',
            env: range(2 * n).map((i) => ({ name: `E${i}`, value: 'v' })),
            volumeMounts: range(2 * n).map((i) => ({ name: 'data', mountPath: `/m${i}`, subPathExpr: `$(E${i})` })),
          },
        ]),
      );
      return { body, sidecarSets: [sharingSet('share')] };
    },
  },
  {
    fn: 'pod-inject',
    name: 'Twenty sharing sidecars, many mounts',
    what: 'Twenty SidecarSets whose sidecars all share the volumes of a pod that is nearly all mounts: the answer would be twenty copies of the pod.',
    build(bytes) {
      const body = sized(bytes, '{"name":"data","mountPath":"/m200000"},'.length, (n) =>
        podWith([{ name: 'app', image: 'nginx:1.27', volumeMounts: range(n).map((i) => ({ name: 'data', mountPath: `/m${i}` })) }]),
      );
      return { body, sidecarSets: range(20).map((i) => sharingSet(`share-${String(i).padStart(2, '0')}`)) };
    },
  },
  {
    fn: 'sidecarset-validate',
    name: 'Selector requirements on one key',
    what: 'A selector whose requirements all constrain one key: two long `In` lists (one value in common) and many `NotIn` requirements, intersected with each other and with another set of the cluster.',
    build(bytes) {
      const make = (n: number) => {
        const set = defaultSidecarSet(userSidecarSet('wide')) as { spec: { selector: unknown } };
        set.spec.selector = {
          matchLabels: { app: 'web' },
          matchExpressions: [
            { key: 'tier', operator: 'In', values: ['shared', ...range(n).map((i) => `a${i}`)] },
            { key: 'tier', operator: 'In', values: ['shared', ...range(n).map((i) => `b${i}`)] },
            ...range(n).map((i) => ({ key: 'tier', operator: 'NotIn', values: [`c${i}`] })),
          ],
        };
        return sidecarSetReview('adversarial', set);
      };
      const itemBytes = '"a100000",'.length * 2 + '{"key":"tier","operator":"NotIn","values":["c100000"]},'.length;
      const other = userSidecarSet('other') as SidecarSet;
      (other.spec as Record<string, unknown>).selector = { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: range(50).map((i) => `d${i}`) }] };
      return { body: sized(bytes, itemBytes, make), sidecarSets: [other] };
    },
  },
  {
    fn: 'sidecarset-validate',
    name: 'Many containers, volumes and annotations against clashing sets',
    what: 'A set with thousands of containers, volumes and patchPodMetadata annotations, compared with five sets of the cluster selecting the same pods and using the same names: every name clashes.',
    build(bytes) {
      const make = (n: number) => {
        const set = userSidecarSet('wide') as { spec: Record<string, unknown> };
        set.spec.containers = range(n).map((i) => ({ name: `c${i}`, image: 'sidecar:1.0' }));
        set.spec.volumes = range(n).map((i) => ({ name: `v${i}`, emptyDir: {} }));
        set.spec.patchPodMetadata = [{ annotations: Object.fromEntries(range(n).map((i) => [`example.com/a${i}`, 'x'])), patchPolicy: 'Overwrite' }];
        return sidecarSetReview('adversarial', defaultSidecarSet(set));
      };
      const itemBytes = '{"name":"c100000","image":"sidecar:1.0"},{"name":"v100000","emptyDir":{}},"example.com/a100000":"x",'.length;
      const others = range(5).map((k) => {
        const other = userSidecarSet(`other-${k}`) as { spec: Record<string, unknown> };
        other.spec.containers = range(2000).map((i) => ({ name: `c${i * 7 + k}`, image: 'sidecar:1.0' }));
        other.spec.volumes = range(2000).map((i) => ({ name: `v${i * 7 + k}`, hostPath: { path: '/x' } }));
        other.spec.patchPodMetadata = [{ annotations: Object.fromEntries(range(2000).map((i) => [`example.com/a${i * 7 + k}`, 'y'])), patchPolicy: 'Retain' }];
        return other;
      });
      return { body: sized(bytes, itemBytes, make), sidecarSets: others };
    },
  },
  {
    fn: 'sidecarset-validate',
    name: 'One container with everything invalid',
    what: 'One container with a long list of env vars, ports and mounts that are all wrong (duplicate names, bad quantities and paths): every error is found, formatted and cut short.',
    build(bytes) {
      const make = (n: number) => {
        const set = userSidecarSet('bad') as { spec: Record<string, unknown> };
        set.spec.containers = [
          {
            name: 'c',
            image: 'sidecar:1.0',
            env: range(n).map(() => ({ name: '1-bad name', value: 'v' })),
            ports: range(n).map(() => ({ name: 'p--p', containerPort: 70000 })),
            volumeMounts: range(n).map(() => ({ name: 'nope', mountPath: 'relative' })),
            resources: { limits: { cpu: '1'.repeat(n % 900) + 'x' } },
          },
        ];
        return sidecarSetReview('adversarial', defaultSidecarSet(set));
      };
      const itemBytes = '{"name":"1-bad name","value":"v"},{"name":"p--p","containerPort":70000},{"name":"nope","mountPath":"relative"},'.length;
      return { body: sized(bytes, itemBytes, make), sidecarSets: [] };
    },
  },
  {
    fn: 'sidecarset-default',
    name: 'Thousands of containers to default and hash',
    what: 'A set made of containers with probes, env fieldRefs and ports left empty, and volumes with nothing set: each is defaulted, both hashes print every container, and the patch lists every new field.',
    build(bytes) {
      const container = (i: number) => ({
        name: `c${i}`,
        image: 'sidecar',
        env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
        ports: [{ containerPort: 80 }],
        livenessProbe: { httpGet: { port: 80 } },
      });
      const make = (n: number) => {
        const set = userSidecarSet('wide') as { spec: Record<string, unknown> };
        set.spec.containers = range(n).map(container);
        set.spec.volumes = range(n).map((i) => ({ name: `v${i}`, secret: { secretName: 's' } }));
        return sidecarSetReview('adversarial', set);
      };
      const itemBytes = JSON.stringify(container(100000)).length + '{"name":"v100000","secret":{"secretName":"s"}},'.length + 1;
      return { body: sized(bytes, itemBytes, make), sidecarSets: [] };
    },
  },
  {
    fn: 'sidecarset-default',
    name: 'Long strings in every hashed field',
    what: 'Containers whose args and env values are long strings full of characters Go escapes (`<`, `>`, `&`, U+2028, lone surrogates), which both hashes print.',
    build(bytes) {
      const text = '<>&\u2028\ud800x'.repeat(200);
      const make = (n: number) => {
        const set = userSidecarSet('escapes') as { spec: Record<string, unknown> };
        set.spec.containers = range(n).map((i) => ({ name: `c${i}`, image: 'sidecar:1.0', args: [text], env: [{ name: 'E', value: text }] }));
        return sidecarSetReview('adversarial', set);
      };
      return { body: sized(bytes, JSON.stringify(text).length * 2 + 80, make), sidecarSets: [] };
    },
  },
];

export interface Measurement {
  bodyBytes: number;
  status: number;
  /** Median time of one review through the handler (parse, review, answer). */
  reviewMs: number;
  /** Median time of JSON.parse of the same body. */
  parseMs: number;
  /** The longest single review. */
  maxReviewMs: number;
  deadlineMs: number;
  answer: HttpResponse;
}

/** Runs a review `repetitions` times through the handler the Lambda handler and the server share. */
export async function measure(c: AdversarialCase, review: AdversarialReview, repetitions: number): Promise<Measurement> {
  const deps = { sidecarSets: memorySidecarSetSource(review.sidecarSets), namespaces: memoryNamespaceSource([]), clock: fuzzClock, logger: discardingLogger };
  const request = {
    method: 'POST',
    path: '/',
    headers: { 'content-type': 'application/json' },
    timeout: TIMEOUT,
    body: review.body,
    bodyBytes: Buffer.byteLength(review.body),
  };
  const config = { fn: c.fn, secrets: 'insecure' as const, maxBodyBytes: DEFAULT_MAX_BODY_BYTES };
  const reviews: number[] = [];
  const parses: number[] = [];
  let answer: HttpResponse | undefined;
  for (let i = 0; i < repetitions; i++) {
    const t0 = performance.now();
    JSON.parse(review.body);
    const t1 = performance.now();
    answer = await serveAdmission(request, config, deps);
    const t2 = performance.now();
    parses.push(t1 - t0);
    reviews.push(t2 - t1);
  }
  if (answer === undefined) throw new Error('no repetitions');
  return {
    bodyBytes: request.bodyBytes,
    status: answer.statusCode,
    reviewMs: median(reviews),
    parseMs: median(parses),
    maxReviewMs: Math.max(...reviews),
    deadlineMs: deadlineFromTimeout(TIMEOUT),
    answer,
  };
}

/** The sizes `npm run reliability` sends: 1 MB, 3 MB and the largest body the handler accepts. */
export const RELIABILITY_SIZES = [MB, 3 * MB, LARGEST_BODY] as const;
/** The target: no review slower than this many times JSON.parse of its body. */
export const PARSE_FLOOR_TARGET = 20;
/**
 * How much the ratio to the parse floor may grow from the smallest to the
 * largest size before the growth counts as worse than linear (a quadratic
 * step grows it six times from 1 to 6 MB). The ratio rather than the time per
 * byte: a larger heap slows parsing and reviewing alike, so it cancels out.
 */
export const LINEAR_GROWTH_LIMIT = 3;

/**
 * Every case of one function at each size: a row of figures per review.
 * @throws Error when a review is not answered inside its deadline, or its
 * ratio to the parse floor grows more than {@link LINEAR_GROWTH_LIMIT} times across the sizes.
 */
export async function adversarialRows(fn: AdmissionFunctionName, sizes: readonly number[], repetitions: number): Promise<Record<string, number | string>[]> {
  const rows: Record<string, number | string>[] = [];
  const problems: string[] = [];
  for (const c of ADVERSARIAL.filter((x) => x.fn === fn)) {
    const ratios: number[] = [];
    for (const size of sizes) {
      const m = await measure(c, c.build(size), repetitions);
      const ratio = m.reviewMs / m.parseMs;
      ratios.push(ratio);
      if (m.maxReviewMs > m.deadlineMs) problems.push(`${c.name} at ${m.bodyBytes} bytes: a review took ${Math.round(m.maxReviewMs)} ms, past the ${m.deadlineMs} ms deadline`);
      rows.push({
        input: c.name,
        MB: Number((m.bodyBytes / MB).toFixed(2)),
        status: m.status,
        reviewMs: Number(m.reviewMs.toFixed(1)),
        parseMs: Number(m.parseMs.toFixed(1)),
        ratio: Number(ratio.toFixed(1)),
        [`within ${PARSE_FLOOR_TARGET}x`]: ratio <= PARSE_FLOOR_TARGET ? 'yes' : 'no',
        maxMs: Number(m.maxReviewMs.toFixed(0)),
        deadlineMs: m.deadlineMs,
      });
    }
    const growth = (ratios[ratios.length - 1] ?? 0) / (ratios[0] ?? 1);
    if (sizes.length > 1 && growth > LINEAR_GROWTH_LIMIT) {
      problems.push(`${c.name}: the ratio to the parse floor grew ${growth.toFixed(1)} times from the smallest size to the largest (${ratios.map((r) => r.toFixed(1)).join(', ')})`);
    }
  }
  if (problems.length > 0) throw new Error([...problems, '', ...rows.map((row) => JSON.stringify(row))].join('\n'));
  return rows;
}
