/** `npm run -s status` (functions/status-view/cli.ts, compose.ts) over sources in memory. */
import { describe, expect, it } from '@jest/globals';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { KubeconfigError } from '../../lib/adapters/kubeconfig-reader.ts';
import { memoryNamespaceSource } from '../../lib/adapters/memory.ts';
import { memoryPods } from '../../lib/adapters/memory-rollout.ts';
import { memorySidecarSets } from '../../lib/adapters/memory-status-view.ts';
import { cursorUp } from '../../lib/status-view/display.ts';
import type { StatusViewDeps } from '../../lib/status-view/look.ts';
import { NO_SETS } from '../../lib/status-view/table.ts';
import { parseStatusOptions, runStatusView, STATUS_USAGE, type StatusIo } from '../../functions/status-view/cli.ts';
import { chooseCluster, LOCAL_CLUSTER_KUBECONFIG } from '../../functions/status-view/compose.ts';
import { ConfigurationError } from '../../functions/shared/compose.ts';
import { rolloutPod, rolloutSet } from '../rollout/fixtures.ts';

function io(tty = false, signal: AbortSignal = new AbortController().signal) {
  const out: string[] = [];
  const err: string[] = [];
  let resize: (() => void) | undefined;
  const value: StatusIo = {
    out: { write: (t) => out.push(t), isTTY: tty, ...(tty ? { columns: 200, rows: 40 } : {}) },
    err: (t) => err.push(t),
    onResize: (listener) => {
      resize = listener;
      return () => { resize = undefined; };
    },
    signal,
    follow: { debounceMs: 0, minGapMs: 0 },
  };
  return { io: value, out, err, resize: () => resize?.() };
}

function cluster() {
  const set = rolloutSet({ name: 'logs' });
  const sets = memorySidecarSets([set]);
  const pods = memoryPods([rolloutPod(set, { name: 'a' }), rolloutPod(set, { name: 'b', updated: true })]);
  const deps: StatusViewDeps = { sets, pods: pods.source, namespaces: () => memoryNamespaceSource([]) };
  return { set, sets, pods, deps };
}

describe('options', () => {
  it.each<[string[], ReturnType<typeof parseStatusOptions>]>([
    [[], { watch: false }],
    [['-w'], { watch: true }],
    [['--watch', '--kubeconfig', 'k.yaml'], { kubeconfig: 'k.yaml', watch: true }],
    [['--kubeconfig=k.yaml'], { kubeconfig: 'k.yaml', watch: false }],
    [['--help'], 'help'],
    [['--pods', 'logs'], { watch: false, pods: 'logs' }],
    [['--pods=logs', '-w'], { watch: true, pods: 'logs' }],
  ])('%j', (argv, expected) => {
    expect(parseStatusOptions(argv)).toEqual(expected);
  });

  it.each([[['--kubeconfig']], [['--kubeconfig=']], [['--kubeconfig', 'a', '--kubeconfig', 'b']], [['--interval', '5']], [['get']], [['--pods']], [['--pods=']], [['--pods', '-w']], [['--pods', 'a', '--pods', 'b']]])('refuses %j with usage, exit 2', async (argv) => {
    const run = io();
    expect(await runStatusView(argv, run.io, () => Promise.reject(new Error('not reached')))).toBe(2);
    expect(run.err.join('')).toMatch(/^status: .+\nusage: npm run -s status/);
    expect(run.out).toEqual([]);
  });

  it('prints the usage for --help, exit 0', async () => {
    const run = io();
    expect(await runStatusView(['--help'], run.io, () => Promise.reject(new Error('not reached')))).toBe(0);
    expect(run.out.join('')).toBe(`${STATUS_USAGE}\n`);
  });
});

describe('once', () => {
  it.each<[string, boolean | undefined, string]>([
    ['the rule’s path where the injection policy is installed', true, 'policy'],
    ['the rule’s path where it cannot tell (the policy unreadable)', undefined, 'policy'],
    ['the webhook path for every set where the policy is not installed', false, 'webhook'],
  ])('shows %s', async (_what, installed, path) => {
    const run = io();
    const { deps } = cluster();
    expect(await runStatusView([], run.io, () => Promise.resolve({ ...deps, injectionPolicyInstalled: () => Promise.resolve(installed) }))).toBe(0);
    expect(run.out.join('').split('\n')[1]).toMatch(new RegExp(`^logs .* Progressing +${path} +\\[`));
  });

  it('prints one table and exits 0', async () => {
    const run = io();
    expect(await runStatusView([], run.io, () => Promise.resolve(cluster().deps))).toBe(0);
    const lines = run.out.join('').split('\n');
    expect(lines[0]).toMatch(/^NAME +MATCHED +UPDATED +READY +UPDATED-READY +STATE +PATH +PROGRESS +WHY$/);
    expect(lines[1]).toMatch(/^logs +2\* +1\* +2\* +1\* +Progressing +policy +\[##########\.{10}\] +50% +1 pod\(s\) due for update$/);
    expect(run.err).toEqual([]);
  });

  it('says there are no SidecarSets', async () => {
    const { deps, sets } = cluster();
    sets.replace([]);
    const run = io();
    expect(await runStatusView([], run.io, () => Promise.resolve(deps))).toBe(0);
    expect(run.out.join('')).toBe(`${NO_SETS}\n`);
  });

  it.each<[string, Error, number, string]>([
    ['a bad kubeconfig', new KubeconfigError('file /k.yaml', 'it has no current-context'), 2, 'status: kubeconfig from file /k.yaml: it has no current-context\n'],
    ['no cluster at all', new ConfigurationError('no cluster: give --kubeconfig FILE'), 2, 'status: no cluster: give --kubeconfig FILE\n'],
  ])('names %s in one line, exit %d', async (_d, error, code, line) => {
    const run = io();
    expect(await runStatusView([], run.io, () => Promise.reject(error))).toBe(code);
    expect(run.err).toEqual([line]);
  });

  it('names an unreachable API server or a missing CRD in one line, exit 1, nothing on standard output', async () => {
    for (const error of [new KubeApiError('list SidecarSets', 'the request failed: fetch failed: connect ECONNREFUSED 127.0.0.1:1'), new KubeApiError('list SidecarSets', 'the SidecarSet CRD is not installed\n(kubectl apply)', 404)]) {
      const { deps, sets } = cluster();
      sets.failLists(error);
      const run = io();
      expect(await runStatusView([], run.io, () => Promise.resolve(deps))).toBe(1);
      expect(run.err).toHaveLength(1);
      expect(run.err[0]).toMatch(/^status: list SidecarSets: [^\n]+\n$/);
      expect(run.out).toEqual([]);
    }
  });
});

describe('--watch', () => {
  it('appends a table for each change when not on a terminal, and exits 0 when stopped', async () => {
    const { deps, set, sets } = cluster();
    const stop = new AbortController();
    const run = io(false, stop.signal);
    const running = runStatusView(['--watch'], run.io, () => Promise.resolve(deps));
    await until(() => run.out.length === 1);
    sets.replace([{ ...set, spec: { ...set.spec, updateStrategy: { type: 'NotUpdate' } } }]);
    await until(() => run.out.length === 2);
    stop.abort();
    expect(await running).toBe(0);
    expect(run.out[1]).toMatch(/^\nNAME .*\nlogs +2\* +1\* +2\* +1\* +NotUpdate +policy +updateStrategy.type is NotUpdate/);
  });

  it('redraws in place on a terminal, also after a resize', async () => {
    const { deps, set, sets } = cluster();
    const stop = new AbortController();
    const run = io(true, stop.signal);
    const running = runStatusView(['-w'], run.io, () => Promise.resolve(deps));
    await until(() => run.out.length === 1);
    sets.replace([{ ...set, spec: { ...set.spec, updateStrategy: { type: 'RollingUpdate', paused: true } } }]);
    await until(() => run.out.length === 2);
    run.resize();
    stop.abort();
    expect(await running).toBe(0);
    expect(run.out[1]?.startsWith(cursorUp(lines(run.out[0])))).toBe(true);
    expect(run.out[1]).toContain('Paused');
    expect(run.out).toHaveLength(3);
  });

  it('exits 1 naming a lost connection when a later look gets no answer', async () => {
    const { deps, sets } = cluster();
    const run = io();
    const running = runStatusView(['--watch'], run.io, () => Promise.resolve(deps));
    await until(() => run.out.length === 1);
    sets.failLists(new KubeApiError('list SidecarSets', 'the request failed: fetch failed: connect ECONNREFUSED 127.0.0.1:1'));
    sets.replace([]);
    expect(await running).toBe(1);
    expect(run.err).toEqual(['status: lost the connection to the API server: list SidecarSets: the request failed: fetch failed: connect ECONNREFUSED 127.0.0.1:1\n']);
  });

  it('exits 1 saying the cluster can no longer be read when a later look is refused', async () => {
    const { deps, sets } = cluster();
    const run = io();
    const running = runStatusView(['--watch'], run.io, () => Promise.resolve(deps));
    await until(() => run.out.length === 1);
    sets.failLists(new KubeApiError('list SidecarSets', 'the API server answered 403: forbidden', 403));
    sets.replace([]);
    expect(await running).toBe(1);
    expect(run.err).toEqual(['status: the cluster can no longer be read: list SidecarSets: the API server answered 403: forbidden\n']);
  });
});

describe('--pods SET', () => {
  it('prints the set’s line, then each pod it matches, and exits 0', async () => {
    const run = io();
    expect(await runStatusView(['--pods', 'logs'], run.io, () => Promise.resolve(cluster().deps))).toBe(0);
    const lines = run.out.join('').split('\n');
    expect(lines.slice(0, 2)).toEqual([expect.stringMatching(/^NAME +MATCHED/), expect.stringMatching(/^logs +2\* +1\* +2\* +1\* +Progressing /)]);
    expect(lines.slice(4)).toEqual([
      'POD         UPDATED   READY   STATE     KUBELET   WHY',
      'default/a   no        yes     Due       -         the next reconcile updates it',
      'default/b   yes       yes     Updated   -',
      '',
    ]);
    expect(run.err).toEqual([]);
  });

  it('reads the sets and one pod list, however many sets there are', async () => {
    const { deps, set, sets } = cluster();
    sets.replace([set, { ...rolloutSet({ name: 'other' }), spec: { ...set.spec, selector: { matchLabels: { app: 'other' } } } }, rolloutSet({ name: 'third' })]);
    const scopes: unknown[] = [];
    const counted: StatusViewDeps = { ...deps, pods: { ...deps.pods, list: (scope, signal) => { scopes.push(scope); return deps.pods.list(scope, signal); } } };
    const run = io();
    expect(await runStatusView(['--pods', 'logs'], run.io, () => Promise.resolve(counted))).toBe(0);
    expect(sets.lists).toBe(1);
    expect(scopes).toEqual([{ labelSelector: 'app=web' }]);
  });

  it('names a set that does not exist in one line, exit 1, nothing on standard output', async () => {
    const run = io();
    expect(await runStatusView(['--pods', 'nope'], run.io, () => Promise.resolve(cluster().deps))).toBe(1);
    expect(run.err).toEqual(['status: SidecarSet "nope" not found. (npm run -s status lists them)\n']);
    expect(run.out).toEqual([]);
  });

  it('names an unreachable API server in one line, exit 1', async () => {
    const { deps, sets } = cluster();
    sets.failLists(new KubeApiError('list SidecarSets', 'the request failed: fetch failed: connect ECONNREFUSED 127.0.0.1:1'));
    const run = io();
    expect(await runStatusView(['--pods', 'logs'], run.io, () => Promise.resolve(deps))).toBe(1);
    expect(run.err).toEqual(['status: list SidecarSets: the request failed: fetch failed: connect ECONNREFUSED 127.0.0.1:1\n']);
  });

  it('--watch shows a pod’s change, then that the set went, and exits 0 when stopped', async () => {
    const { deps, set, sets, pods } = cluster();
    const stop = new AbortController();
    const run = io(false, stop.signal);
    const running = runStatusView(['--pods', 'logs', '--watch'], run.io, () => Promise.resolve(deps));
    await until(() => run.out.length === 1);
    pods.update('default', 'a', (pod) => {
      const next = rolloutPod(set, { name: 'a', updated: true, inconsistent: true });
      Object.assign(pod, { metadata: { ...next.metadata, resourceVersion: pod.metadata?.resourceVersion }, spec: next.spec, status: next.status });
    });
    await until(() => run.out.length === 2);
    sets.replace([]);
    await until(() => run.out.length === 3);
    stop.abort();
    expect(await running).toBe(0);
    expect(run.out[1]).toMatch(/\ndefault\/a {3}yes {7}no {6}Updating +- +its sidecars have not restarted on the new image yet\n/);
    expect(run.out[2]).toBe('\nSidecarSet "logs" not found.\n');
  });
});

describe('which cluster', () => {
  const none = () => false;
  it('takes --kubeconfig over anything the environment names', () => {
    expect(chooseCluster('k.yaml', { KUBECONFIG_CONTENT: 'x', EKS_CLUSTER_NAME: 'c' }, none).env).toMatchObject({ KUBECONFIG: 'k.yaml', KUBECONFIG_CONTENT: '', EKS_CLUSTER_NAME: '' });
  });

  it('takes the environment as the functions read it', () => {
    expect(chooseCluster(undefined, { KUBECONFIG: '/e.yaml' }, () => true)).toEqual({ env: { KUBECONFIG: '/e.yaml' }, how: 'KUBECONFIG=/e.yaml' });
    expect(chooseCluster(undefined, { EKS_CLUSTER_NAME: 'prod' }, () => true).how).toBe('EKS_CLUSTER_NAME set');
    expect(chooseCluster('k.yaml', {}, () => true).how).toBe('--kubeconfig k.yaml');
  });

  it('then a running npm start’s embedded cluster, then ~/.kube/config, saying which', () => {
    expect(chooseCluster(undefined, {}, (p) => p === LOCAL_CLUSTER_KUBECONFIG, '/home/u')).toMatchObject({ env: { KUBECONFIG: LOCAL_CLUSTER_KUBECONFIG }, note: expect.stringContaining('npm start') as unknown });
    expect(chooseCluster(undefined, {}, (p) => p === '/home/u/.kube/config', '/home/u')).toMatchObject({ env: { KUBECONFIG: '/home/u/.kube/config' }, note: 'the cluster of /home/u/.kube/config' });
  });

  it('refuses with what to do when there is none', () => {
    expect(() => chooseCluster(undefined, {}, none, homedir())).toThrow(ConfigurationError);
    expect(() => chooseCluster(undefined, {}, none, join('/nowhere'))).toThrow(/^no cluster: give --kubeconfig FILE or set KUBECONFIG/);
  });
});

/** The lines a redraw wrote (each ends in a clear-to-end and a line break). */
const lines = (frame: string | undefined): number => (frame ?? '').split('\n').length - 1;

async function until(test: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !test(); ) {
    if (Date.now() > deadline) throw new Error('not within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
