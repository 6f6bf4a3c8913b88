/**
 * `invoke explain` on plain YAML files, as a user runs it: a real Node 22
 * process; the pod goes through pod-inject as `invoke pod-inject` sends it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { Pod } from '../../lib/kube/types.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function invoke(args: string[]) {
  const result = spawnSync(process.execPath, [join(projectRoot, 'functions/invoke/main.ts'), 'explain', ...args], { encoding: 'utf8', cwd: projectRoot });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const SETS = `apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: logs}
spec:
  selector: {matchLabels: {app: web}}
  containers:
    - name: log-agent
      image: fluent-bit:3.1
      volumeMounts: [{name: log-config, mountPath: /etc/fluent}]
  initContainers: [{name: log-init, image: busybox:1}]
  volumes: [{name: log-config, configMap: {name: fluent}}]
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: mesh}
spec:
  selector:
    matchExpressions: [{key: tier, operator: In, values: [backend, api]}]
  containers: [{name: proxy, image: proxy:1}]
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: prod-only}
spec:
  namespace: prod
  selector: {matchLabels: {app: web}}
  containers: [{name: prod-agent, image: agent:1}]
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: stable}
spec:
  selector: {matchLabels: {app: web}}
  containers: [{name: s, image: s:1}]
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: stable-canary
  annotations: {apps.kruise.io/sidecarset-canary: "true", apps.kruise.io/sidecarset-base: stable}
spec:
  selector: {matchLabels: {app: web}}
  containers: [{name: s, image: s:2}]
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: held}
spec:
  selector: {matchLabels: {app: web}}
  injectionStrategy: {paused: true}
  containers: [{name: h, image: h:1}]
`;

const POD = `apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: default, labels: {app: web}}
spec:
  containers: [{name: app, image: nginx:1.27}]
`;

let dir: string;
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'invoke-explain-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('invoke explain', () => {
  it('tells for each set whether it applies, exactly why not, and what it injects', () => {
    const r = invoke(['-f', file('pod.yaml', POD), '--sidecarsets', file('sets.yaml', SETS)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('Pod default/web-0');
    expect(r.stdout).toContain('held: does not apply: injectionStrategy.paused is true: it injects no new pod (it would select this one)');
    expect(r.stdout).toContain('mesh: does not apply: spec.selector: matchExpressions[0] wants tier In [backend, api]; the pod has no label tier');
    expect(r.stdout).toContain('prod-only: does not apply: spec.namespace is prod; the pod is in default');
    expect(r.stdout).toContain('stable: does not apply: canary SidecarSet stable-canary (apps.kruise.io/sidecarset-base: stable) also selects the pod and injects in its place');
    // Both sets are the policy's: it injects them both, in either order (a set it left to pod-inject would send both there).
    const path = String.raw` {2}injection path \(where the injection policy is installed\): the injection policy: the policy computes everything it injects\n`;
    expect(r.stdout).toMatch(new RegExp(`logs: applies\n${path} {2}injects: containers: log-agent; init containers: log-init; volumes: log-config; revision: logs-\\w+\n`));
    expect(r.stdout).toMatch(new RegExp(`stable-canary: applies\n${path} {2}injects: containers: s; revision: stable-canary-\\w+\n`));
  });

  it('prints the verdicts with their failing term as JSON with -o json', () => {
    const r = invoke(['-f', file('pod.yaml', POD), '--sidecarsets', file('sets.yaml', SETS), '-o', 'json']);
    expect(r.code).toBe(0);
    const explanation = JSON.parse(r.stdout) as { sets: { set: string; applies: boolean; verdict: unknown }[] };
    expect(explanation.sets.find((s) => s.set === 'mesh')?.verdict).toEqual({
      set: 'mesh',
      injects: false,
      reason: 'not-selected',
      miss: { kind: 'selector', mismatch: { term: 'matchExpressions', index: 0, key: 'tier', operator: 'In', values: ['backend', 'api'] } },
    });
    expect(explanation.sets.filter((s) => s.applies).map((s) => s.set)).toEqual(['logs', 'stable-canary']);
  });

  it('names the namespaceSelector term the Namespace fails, and exits 1 naming the Namespace missing from --namespaces', () => {
    const sets = file('ns-sets.yaml', `apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: team}
spec:
  selector: {matchLabels: {app: web}}
  namespaceSelector: {matchLabels: {team: payments}}
  containers: [{name: t, image: t:1}]
`);
    const namespaces = file('namespaces.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata: {name: default, labels: {team: search}}\n');
    const told = invoke(['-f', file('pod.yaml', POD), '--sidecarsets', sets, '--namespaces', namespaces]);
    expect(told.code).toBe(0);
    expect(told.stdout).toContain('team: does not apply: spec.namespaceSelector: matchLabels wants team=payments; the namespace default has team=search');
    const missing = invoke(['-f', file('pod.yaml', POD), '--sidecarsets', sets]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/^invoke: explain: pod-inject could not decide .*Namespace "default".*--namespaces FILE/);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('tells a pod already injected whether it runs the current sidecars and what holds it, over the pods of --pods', () => {
    const old = defaultSidecarSet({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'agent' }, spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'agent', image: 'agent:1' }] } });
    const current: SidecarSet = defaultSidecarSet({ ...old, metadata: { name: 'agent' }, spec: { ...old.spec, containers: [{ name: 'agent', image: 'agent:2' }], updateStrategy: { type: 'RollingUpdate', partition: 1 } } });
    const running = (name: string): Pod => {
      const pod = injectPod({ pod: { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } }, namespace: 'default', sidecarSets: [old], namespaceLabels: new Map(), now: new Date() }).pod;
      const statuses = (pod.spec?.containers ?? []).map((c) => ({ name: c.name, image: c.image, imageID: `id-${c.image ?? ''}`, ready: true, restartCount: 0 }));
      return { ...pod, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: statuses } };
    };
    const sets = file('agent.yaml', stringify(current));
    const pods = file('pods.yaml', [running('web-0'), running('web-1')].map((p) => stringify(p)).join('---\n'));
    // web-1 is last in the update order (a tie broken by name): partition 1 holds it; web-0 goes next.
    const held = invoke(['-f', file('web-1.yaml', stringify(running('web-1'))), '--sidecarsets', sets, '--pods', pods]);
    expect(held.code).toBe(0);
    expect(held.stdout).toContain('agent: applies');
    expect(held.stdout).toContain('rollout: Waiting (not running the current sidecars yet)');
    expect(held.stdout).toContain('held by updateStrategy.partition 1 (1 pod(s) held back, this one among them)');
    const next = invoke(['-f', file('web-0.yaml', stringify(running('web-0'))), '--sidecarsets', sets, '--pods', pods, '-o', 'json']);
    expect(next.code).toBe(0);
    expect((JSON.parse(next.stdout) as { sets: { rollout: unknown }[] }).sets[0]?.rollout).toMatchObject({ matched: true, updated: false, current: false, state: 'Due', hold: { kind: 'next' } });
  });

  it('exits 3 with the explanation when pod-inject would refuse the pod', () => {
    const bad = file('bad-pod.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {name: web-0, labels: {app: web}}\nspec:\n  containers: [app]\n');
    const r = invoke(['-f', bad, '--sidecarsets', file('sets.yaml', SETS)]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('pod-inject: refuses the pod (400): the pod cannot be injected: spec.containers must be a list of objects');
  });

  it.each([
    ['a malformed YAML file', () => ['-f', file('broken.yaml', 'kind: Pod\nmetadata: {name: [\n'), '--sidecarsets', file('sets.yaml', SETS)], /^invoke: .*broken\.yaml/],
    ['a SidecarSet as the pod', () => ['-f', file('one-set.yaml', SETS.split('---\n')[0] ?? ''), '--sidecarsets', file('sets.yaml', SETS)], /is called for a Pod, not a SidecarSet/],
    ['no --sidecarsets', () => ['-f', file('pod.yaml', POD)], /explain needs --sidecarsets FILE/],
    ['a file that is not there', () => ['-f', join(dir, 'none.yaml'), '--sidecarsets', file('sets.yaml', SETS)], /cannot read event file .*none\.yaml: ENOENT/],
  ])('exits 2 with one line naming the problem for %s', (_what, args, message) => {
    const r = invoke(args());
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
