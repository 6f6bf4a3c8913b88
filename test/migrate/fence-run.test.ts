import { describe, expect, it } from '@jest/globals';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import type { Pod } from '../../lib/kube/types.ts';
import type { FenceValues } from '../../lib/migrate/fence-backfill.ts';
import { formatFenceSummary, runFenceBackfill, type FenceCluster } from '../../lib/migrate/fence-run.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { runMigrate, parseMigrateOptions, type Connected } from '../../functions/migrate/cli.ts';

const agentSet: SidecarSet = defaultSidecarSet({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'a' },
  spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'agent', image: 'agent:1' }], patchPodMetadata: [{ patchPolicy: 'Overwrite', annotations: { 'example.com/team': 'x' } }] },
});

/** A pod as Kruise injected it: set a's entry listing `sidecarList`, no fence. */
function kruisePod(name: string, sidecarList: string[] = ['agent'], extra: Record<string, string> = {}): Pod {
  const hash = JSON.stringify({ a: { updateTimestamp: '2026-01-01T00:00:00Z', hash: 'h', sidecarSetName: 'a', sidecarList } });
  return {
    metadata: { name, namespace: 'shop', uid: `uid-${name}`, resourceVersion: '10', labels: { app: 'web' }, annotations: { 'kruise.io/sidecarset-hash': hash, ...extra } },
    spec: { containers: [{ name: 'agent', image: 'agent:1' }, { name: 'app' }] },
  };
}

/** An in-memory cluster: `conflicts` names how many writes of each pod answer a conflict first; `restartAfterFirstPage` starts the list over once (as after an expired continue token). */
function memoryCluster(pods: Pod[], opts: { conflicts?: Record<string, number>; restartAfterFirstPage?: boolean; writeError?: Error } = {}) {
  const stored = new Map(pods.map((p) => [p.metadata?.name ?? '', structuredClone(p)]));
  const writes: { name: string; resourceVersion: string | undefined; fence: FenceValues }[] = [];
  const cluster: FenceCluster = {
    async *podPages() {
      const all = await Promise.resolve([...stored.values()].map((p) => structuredClone(p)));
      yield all.slice(0, 1);
      if (opts.restartAfterFirstPage === true) yield all.map((p) => structuredClone(stored.get(p.metadata?.name ?? '') ?? p));
      else yield all.slice(1);
    },
    sidecarSets: () => Promise.resolve([agentSet]),
    namespaceLabels: () => Promise.resolve(new Map([['shop', {}]])),
    podWebhook: () => Promise.resolve({}),
    revisions: () => Promise.resolve([]),
    getPod: (_ns, name) => Promise.resolve(structuredClone(stored.get(name))),
    patchPod(read, fence) {
      const name = read.metadata?.name ?? '';
      writes.push({ name, resourceVersion: read.metadata?.resourceVersion, fence });
      if (opts.writeError !== undefined) return Promise.reject(opts.writeError);
      const pod = stored.get(name);
      if (pod === undefined) return Promise.resolve('gone' as const);
      const left = opts.conflicts?.[name] ?? 0;
      if (left > 0) {
        (opts.conflicts as Record<string, number>)[name] = left - 1;
        // Someone else changed the pod meanwhile.
        pod.metadata = { ...pod.metadata, resourceVersion: String(Number(pod.metadata?.resourceVersion) + 1) };
        return Promise.resolve('conflict' as const);
      }
      if (read.metadata?.resourceVersion !== pod.metadata?.resourceVersion) return Promise.resolve('conflict' as const);
      pod.metadata = { ...pod.metadata, annotations: { ...pod.metadata?.annotations, 'serverless-sidecarset/rollout-containers': fence.containers, 'serverless-sidecarset/rollout-annotations': fence.keys } };
      return Promise.resolve('written' as const);
    },
  };
  return { cluster, stored, writes };
}

async function run(cluster: FenceCluster, dryRun = false) {
  const lines: string[] = [];
  const summary = await runFenceBackfill(cluster, { dryRun }, (line) => lines.push(line));
  return { lines, summary };
}

describe('runFenceBackfill', () => {
  it('fences the unfenced pods and reports every pod with a reason', async () => {
    const { cluster, stored } = memoryCluster([
      kruisePod('p1'),
      kruisePod('p2', ['agent', 'app']),
      kruisePod('p3', ['agent'], { 'serverless-sidecarset/rollout-containers': 'agent' }),
      { metadata: { name: 'plain', namespace: 'shop' }, spec: { containers: [{ name: 'app' }] } },
    ]);
    const { lines, summary } = await run(cluster);
    expect(lines).toEqual([
      'fenced shop/p1: rollout-containers="agent" rollout-annotations="example.com/team"',
      'skipped shop/p2: sidecarList of a names app, which SidecarSet a does not declare as a sidecar',
      'skipped shop/p3: already fenced (its fence is never changed)',
    ]);
    expect(summary).toEqual({ injected: 3, fenced: 1, alreadyFenced: 1, skipped: 1, failed: 0 });
    expect(stored.get('p1')?.metadata?.annotations).toMatchObject({ 'serverless-sidecarset/rollout-containers': 'agent', 'serverless-sidecarset/rollout-annotations': 'example.com/team' });
    expect(stored.get('p3')?.metadata?.annotations?.['serverless-sidecarset/rollout-annotations']).toBeUndefined();
  });

  it('writes nothing on a dry run', async () => {
    const { cluster, writes } = memoryCluster([kruisePod('p1')]);
    const { lines, summary } = await run(cluster, true);
    expect(writes).toEqual([]);
    expect(lines).toEqual(['would fence shop/p1: rollout-containers="agent" rollout-annotations="example.com/team"']);
    expect(formatFenceSummary(summary, true)).toBe('1 pod(s) carry kruise.io/sidecarset-hash: 1 would be fenced, 0 already fenced, 0 skipped, 0 failed (dry run: nothing written)');
  });

  it('reads a pod changed meanwhile again once and writes with its new resourceVersion', async () => {
    const { cluster, writes } = memoryCluster([kruisePod('p1')], { conflicts: { p1: 1 } });
    const { summary } = await run(cluster);
    expect(summary.fenced).toBe(1);
    expect(writes.map((w) => w.resourceVersion)).toEqual(['10', '11']);
  });

  it('reports a pod that changed again failed, after two writes', async () => {
    const { cluster, writes } = memoryCluster([kruisePod('p1')], { conflicts: { p1: 2 } });
    const { lines, summary } = await run(cluster);
    expect(writes).toHaveLength(2);
    expect(lines).toEqual(['failed shop/p1: the pod changed while it was being fenced, twice; run the command again']);
    expect(summary.failed).toBe(1);
  });

  it('reports a refused write failed, naming the answer', async () => {
    const { cluster } = memoryCluster([kruisePod('p1')], { writeError: new KubeApiError('patch pod "shop/p1"', 'forbidden', 403) });
    const { lines } = await run(cluster);
    expect(lines).toEqual(['failed shop/p1: forbidden']);
  });

  it('reports no pod twice when the list starts over (an expired continue token)', async () => {
    const { cluster } = memoryCluster([kruisePod('p1'), kruisePod('p2')], { restartAfterFirstPage: true });
    const { lines, summary } = await run(cluster);
    expect(lines).toEqual([
      'fenced shop/p1: rollout-containers="agent" rollout-annotations="example.com/team"',
      'fenced shop/p2: rollout-containers="agent" rollout-annotations="example.com/team"',
    ]);
    expect(summary.fenced).toBe(2);
  });
});

describe('npm run migrate -- fence', () => {
  it.each<[string[], string]>([
    [['fence', '--kruise-namespace', 'x'], 'unknown option --kruise-namespace'],
    [['fence', '-n'], '-n needs a value'],
    [['fence', '-n', 'Bad_NS'], '-n must be a namespace name'],
    [['fence', '--namespace', 'a', '-n', 'b'], '--namespace given twice'],
    [['check', '--dry-run'], 'unknown option --dry-run'],
  ])('%j is a usage error: %s', (argv, message) => {
    expect(() => parseMigrateOptions(argv)).toThrow(message);
  });

  it('reads its options', () => {
    expect(parseMigrateOptions(['fence', '--dry-run', '-n', 'shop', '--kubeconfig=k.yaml'])).toEqual({ command: 'fence', kubeconfig: 'k.yaml', namespace: 'shop', dryRun: true });
    expect(parseMigrateOptions(['fence'])).toEqual({ command: 'fence', dryRun: false });
  });

  const connected = (fence: FenceCluster): Connected => ({ reads: undefined as never, revisionNamespace: 'kruise-system', server: 'https://k', fence });
  async function cli(argv: string[], fence: FenceCluster) {
    let out = '';
    let err = '';
    const code = await runMigrate(argv, { out: (t) => (out += t), err: (t) => (err += t) }, () => Promise.resolve(connected(fence)));
    return { code, out, err };
  }

  it('prints a line per pod and the summary, and exits 0', async () => {
    const { cluster } = memoryCluster([kruisePod('p1')]);
    expect(await cli(['fence'], cluster)).toEqual({
      code: 0,
      out: 'fenced shop/p1: rollout-containers="agent" rollout-annotations="example.com/team"\n1 pod(s) carry kruise.io/sidecarset-hash: 1 fenced, 0 already fenced, 0 skipped, 0 failed\n',
      err: '',
    });
  });

  it('exits 1 when a pod failed', async () => {
    const { cluster } = memoryCluster([kruisePod('p1')], { conflicts: { p1: 2 } });
    expect((await cli(['fence'], cluster)).code).toBe(1);
  });

  it('exits 2 with one line when the pods cannot be listed', async () => {
    const { cluster } = memoryCluster([]);
    const refused: FenceCluster = { ...cluster, sidecarSets: () => Promise.reject(new KubeApiError('list SidecarSets', 'sidecarsets is forbidden', 403)) };
    const result = await cli(['fence'], refused);
    expect(result.code).toBe(2);
    expect(result.out).toBe('');
    expect(result.err).toBe("migrate: the kubeconfig's user may not read what fence needs (list SidecarSets: sidecarsets is forbidden); it needs list on pods and SidecarSets, and get and patch on pods\n");
  });
});
