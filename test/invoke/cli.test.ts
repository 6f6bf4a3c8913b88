/**
 * The invoke command's interface, exercised as a user runs it: a real
 * Node 22 process on files and standard input.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch.ts';
import { parseSingleObject } from '../../lib/kube/manifests.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = join(here, '..', '..');
const fixture = (name: string) => join(here, 'fixtures', name);

function invoke(args: string[], stdin = '') {
  const result = spawnSync(process.execPath, [join(projectRoot, 'functions/invoke/main.ts'), ...args], {
    input: stdin,
    encoding: 'utf8',
    cwd: projectRoot,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('invoke pod-inject', () => {
  it('prints the AdmissionReview response with a patch that injects the sidecar', () => {
    const r = invoke(['pod-inject', '--event', fixture('pod-create.json'), '--sidecarsets', fixture('sidecarsets.yaml')]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const review = JSON.parse(r.stdout);
    expect(review).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: '0df28fbd-5f5f-4f8a-8f5e-3c3a6f8b2e11', allowed: true, patchType: 'JSONPatch' },
    });
    const event = JSON.parse(readFileSync(fixture('pod-create.json'), 'utf8'));
    const pod = applyPatch(event.request.object, decodePatch(review.response.patch)) as { spec: { containers: { name: string }[] }; metadata: { annotations: Record<string, string> } };
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['log-agent', 'app']);
    expect(pod.metadata.annotations['kruise.io/sidecarset-injected-list']).toBe('log-agent');
    expect(JSON.parse(pod.metadata.annotations['kruise.io/sidecarset-hash']!)['log-agent'].hash).toBe('hash-a');
  });

  it('allows without a patch when no SidecarSets are given', () => {
    const r = invoke(['pod-inject', '--event', fixture('pod-create.json')]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).response).toEqual({ uid: '0df28fbd-5f5f-4f8a-8f5e-3c3a6f8b2e11', allowed: true });
  });

  it('uses the Namespaces file for a namespaceSelector', () => {
    const r = invoke(['pod-inject', '--event', fixture('pod-create.json'), '--sidecarsets', fixture('sidecarsets-ns-selector.yaml'), '--namespaces', fixture('namespaces.yaml')]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).response.patchType).toBe('JSONPatch');
  });

  it('exits 1 with a message when a namespaceSelector needs a Namespace that was not given', () => {
    const r = invoke(['pod-inject', '--event', fixture('pod-create.json'), '--sidecarsets', fixture('sidecarsets-ns-selector.yaml')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/namespace "shop" is unknown/);
  });
});

describe('invoke sidecarset-default and sidecarset-validate', () => {
  it('reads a YAML event from standard input and returns the defaulting patch', () => {
    const r = invoke(['sidecarset-default'], readFileSync(fixture('sidecarset-create.yaml'), 'utf8'));
    expect(r.code).toBe(0);
    const { response } = JSON.parse(r.stdout);
    expect(response.uid).toBe('7a1c0e52-default');
    const ops = decodePatch(response.patch);
    expect(ops).toContainEqual({
      op: 'add',
      path: '/metadata/annotations',
      value: {
        'kruise.io/sidecarset-hash': '6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684',
        'kruise.io/sidecarset-hash-without-image': expect.any(String),
      },
    });
  });

  it('denies an invalid SidecarSet with 422 and every field error, exit 0', () => {
    const r = invoke(['sidecarset-validate', '--event', fixture('sidecarset-invalid.yaml')]);
    expect(r.code).toBe(0);
    const { response } = JSON.parse(r.stdout);
    expect(response).toMatchObject({ uid: '7a1c0e52-invalid', allowed: false, status: { code: 422 } });
    expect(response.status.message).toContain('spec.selector');
    expect(response.status.message).toContain('spec.containers[0].image: Required value');
    expect(response.status.message).toContain('spec.containers[0].name');
    expect(response).not.toHaveProperty('patch');
  });

  it('allows a valid SidecarSet once defaulted, as the API server would send it', () => {
    const event = parseSingleObject(readFileSync(fixture('sidecarset-create.yaml'), 'utf8'), 'event') as { request: { object: SidecarSet } };
    event.request.object = defaultSidecarSet(event.request.object);
    const r = invoke(['sidecarset-validate'], JSON.stringify(event));
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout).response).toEqual({ uid: '7a1c0e52-default', allowed: true });
  });
});

describe('invoke errors: one line on stderr, exit 2, nothing on stdout', () => {
  it.each<[string, string[], string, RegExp]>([
    ['an unknown function', ['pod-eject', '--event', fixture('pod-create.json')], '', /unknown function "pod-eject"/],
    ['a missing function', [], '', /missing <function>/],
    ['an unknown option', ['pod-inject', '--evnt', 'x'], '', /unknown option --evnt/],
    ['an option without its file', ['pod-inject', '--event'], '', /--event needs a file path/],
    ['an unreadable event file', ['pod-inject', '--event', fixture('nope.json')], '', /cannot read event file .*nope\.json: ENOENT/],
    ['an unreadable SidecarSets file', ['pod-inject', '--event', fixture('pod-create.json'), '--sidecarsets', '/nonexistent/sets.yaml'], '', /cannot read SidecarSets file/],
    ['standard input that is not JSON or YAML', ['pod-inject'], '{"apiVersion": ', /standard input: not valid JSON or YAML/],
    ['an event that is not an AdmissionReview', ['pod-inject'], '{"apiVersion":"v1","kind":"Pod"}', /not an AdmissionReview v1 request: apiVersion is "v1"/],
    ['an AdmissionReview without a uid', ['pod-inject'], '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}', /request\.uid/],
    ['an empty event', ['pod-inject'], '', /expected one JSON or YAML document, found 0/],
    ['a SidecarSets file holding something else', ['pod-inject', '--event', fixture('pod-create.json'), '--sidecarsets', fixture('namespaces.yaml')], '', /is a "Namespace", expected SidecarSet/],
    ['a SidecarSets file that is not YAML', ['pod-inject', '--event', fixture('pod-create.json'), '--sidecarsets', fixture('../cli.test.ts')], '', /not valid JSON or YAML|is not an object/],
  ])('%s', (_name, args, stdin, message) => {
    const r = invoke(args, stdin);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('npm run -s invoke', () => {
  it('runs the command through the package script', () => {
    const result = spawnSync('npm', ['run', '-s', 'invoke', '--', 'pod-inject', '--event', fixture('pod-create.json')], { cwd: projectRoot, encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout).response.allowed).toBe(true);
  });
});
