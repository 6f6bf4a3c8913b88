/**
 * `invoke status-sync`, as a user runs it: a real Node 22 process on files,
 * one reconcile offline, only the statuses that would change on stdout.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseObjects } from '../../lib/kube/yaml-objects.ts';

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = join(here, '..', '..');
const fixture = (name: string) => join(here, 'fixtures', name);

function invoke(args: string[]) {
  const result = spawnSync(process.execPath, [join(projectRoot, 'functions/invoke/main.ts'), ...args], { encoding: 'utf8', cwd: projectRoot });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const logAgentStatus = { observedGeneration: 2, matchedPods: 2, updatedPods: 1, readyPods: 1, updatedReadyPods: 1, latestRevision: 'log-agent-abc' };

describe('invoke status-sync', () => {
  it('prints the new status of each set whose status would change, and only those', () => {
    const r = invoke(['status-sync', '--sidecarsets', fixture('sidecarsets.yaml'), '--pods', fixture('pods.yaml')]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([{ name: 'log-agent', status: logAgentStatus }]);
  });

  it('says on stderr which sets apply to pods they never injected', () => {
    const r = invoke(['status-sync', '--sidecarsets', fixture('sidecarsets.yaml'), '--pods', fixture('pods.yaml')]);
    expect(r.stderr).toBe('invoke: SidecarSet log-agent applies to 1 pod it never injected\n');
  });

  it('prints an empty array once the statuses it printed are stored', () => {
    const dir = mkdtempSync(join(tmpdir(), 'invoke-status-'));
    const printed = JSON.parse(invoke(['status-sync', '--sidecarsets', fixture('sidecarsets.yaml'), '--pods', fixture('pods.yaml')]).stdout) as { name: string; status: unknown }[];
    const sets = parseObjects(readFileSync(fixture('sidecarsets.yaml'), 'utf8'), 'sets').map((s) => {
      const change = printed.find((p) => p.name === (s.metadata as { name: string }).name);
      return change ? { ...s, status: change.status } : s;
    });
    writeFileSync(join(dir, 'sets.json'), JSON.stringify(sets));
    const r = invoke(['status-sync', '--sidecarsets', join(dir, 'sets.json'), '--pods', fixture('pods.yaml')]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
  });

  it('defaults a SidecarSet without its hash annotation on read, so pods injected with it count as updated', () => {
    const dir = mkdtempSync(join(tmpdir(), 'invoke-status-plain-'));
    const plainSet = join(projectRoot, 'examples', 'sidecarset.yaml');
    const injected = invoke(['pod-inject', '-f', join(projectRoot, 'examples', 'pod.yaml'), '--sidecarsets', plainSet, '-o', 'json']);
    expect(injected.code).toBe(0);
    writeFileSync(join(dir, 'pods.json'), injected.stdout);
    const r = invoke(['status-sync', '--sidecarsets', plainSet, '--pods', join(dir, 'pods.json')]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(r.stdout)).toEqual([{ name: 'log-agent', status: { observedGeneration: 0, matchedPods: 1, updatedPods: 1, readyPods: 0, updatedReadyPods: 0 } }]);
  });

  it('reads Namespace labels for a namespaceSelector', () => {
    const r = invoke(['status-sync', '--sidecarsets', fixture('sidecarsets-ns-selector.yaml'), '--pods', fixture('pods.yaml'), '--namespaces', fixture('namespaces.yaml')]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([{ name: 'prod-audit', status: { observedGeneration: 1, matchedPods: 0, updatedPods: 0, readyPods: 0, updatedReadyPods: 0 } }]);
    expect(r.stderr).toBe('invoke: SidecarSet prod-audit applies to 3 pods it never injected\n');
  });

  it('exits 1 with one line when a namespaceSelector needs a Namespace that was not given', () => {
    const r = invoke(['status-sync', '--sidecarsets', fixture('sidecarsets-ns-selector.yaml'), '--pods', fixture('pods.yaml')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^invoke: status-sync could not compute every status: SidecarSet prod-audit: match pods: namespace "shop" is unknown/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('is listed in the usage', () => {
    const r = invoke(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}status-sync {10}the statuses one resync would write$/m);
    const own = invoke(['status-sync', '--help']);
    expect(own.code).toBe(0);
    expect(own.stdout).toContain('invoke status-sync --sidecarsets FILE --pods FILE [--namespaces FILE]');
  });
});

describe('invoke status-sync on bad input: one line on stderr, exit 2, nothing on stdout', () => {
  it.each<[string, string[], RegExp]>([
    ['no SidecarSets file', ['--pods', fixture('pods.yaml')], /status-sync needs --sidecarsets FILE/],
    ['no Pods file', ['--sidecarsets', fixture('sidecarsets.yaml')], /status-sync needs --pods FILE/],
    ['an event', ['--sidecarsets', fixture('sidecarsets.yaml'), '--pods', fixture('pods.yaml'), '--event', fixture('pods.yaml')], /status-sync takes no --event/],
    ['an unreadable Pods file', ['--sidecarsets', fixture('sidecarsets.yaml'), '--pods', fixture('nope.yaml')], /cannot read Pods file .*nope\.yaml: ENOENT/],
    ['a Pods file holding SidecarSets', ['--sidecarsets', fixture('sidecarsets.yaml'), '--pods', fixture('sidecarsets.yaml')], /is a "SidecarSet", expected Pod/],
    ['a SidecarSets file holding Namespaces', ['--sidecarsets', join(here, '..', 'invoke', 'fixtures', 'namespaces.yaml'), '--pods', fixture('pods.yaml')], /is a "Namespace", expected SidecarSet/],
    ['a Namespaces file that is not YAML', ['--sidecarsets', fixture('sidecarsets.yaml'), '--pods', fixture('pods.yaml'), '--namespaces', join(here, 'invoke.test.ts')], /not valid JSON or YAML|is not an object/],
  ])('%s', (_name, args, message) => {
    const r = invoke(['status-sync', ...args]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
