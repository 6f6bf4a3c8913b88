/**
 * `invoke sidecarset-convert`: the CRD conversion webhook's handler on a
 * file, as a process (functions/invoke/main.ts): a ConversionReview, or a
 * plain SidecarSet of either version with --to, printed as the review or
 * (-o) the converted object; bad input named, exit 2.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let dir: string;
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

function invoke(args: string[], stdin = '') {
  const result = spawnSync(process.execPath, [join(projectRoot, 'functions/invoke/main.ts'), ...args], { input: stdin, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const ALPHA_YAML = `apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: in-shop
spec:
  namespace: shop
  selector: {matchLabels: {app: web}}
  containers: [{name: agent, image: agent:1}]
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'invoke-convert-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('invoke sidecarset-convert', () => {
  it('converts a plain v1alpha1 SidecarSet (YAML) to v1beta1 with -o yaml: Kruise\'s selector, the lossless annotation', () => {
    const r = invoke(['sidecarset-convert', '-f', file('alpha.yaml', ALPHA_YAML), '--to', 'v1beta1', '-o', 'yaml']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const beta = parse(r.stdout) as { apiVersion: string; metadata: { annotations: Record<string, string> }; spec: Record<string, unknown> };
    expect(beta.apiVersion).toBe('apps.kruise.io/v1beta1');
    expect(beta.spec.namespaceSelector).toEqual({ matchLabels: { 'kubernetes.io/metadata.name': 'shop' } });
    expect(beta.spec.namespace).toBeUndefined();
    expect(beta.metadata.annotations['sidecarset.kruise.io/converted-from']).toContain('"namespace":"shop"');
    // And back, as JSON: what was written.
    const back = invoke(['sidecarset-convert', '-f', file('beta.json', JSON.stringify(beta)), '--to=v1alpha1', '-ojson']);
    expect([back.code, back.stderr]).toEqual([0, '']);
    expect(JSON.parse(back.stdout)).toEqual(parse(ALPHA_YAML));
  });

  it('answers a ConversionReview from standard input with the review, its uid and objects in order', () => {
    const review = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'u-1', desiredAPIVersion: 'apps.kruise.io/v1beta1', objects: [parse(ALPHA_YAML)] } };
    const r = invoke(['sidecarset-convert'], JSON.stringify(review));
    expect([r.code, r.stderr]).toEqual([0, '']);
    const answer = JSON.parse(r.stdout) as { kind: string; response: { uid: string; result: { status: string }; convertedObjects: { apiVersion: string }[] } };
    expect([answer.kind, answer.response.uid, answer.response.result.status, answer.response.convertedObjects.map((o) => o.apiVersion)]).toEqual(['ConversionReview', 'u-1', 'Success', ['apps.kruise.io/v1beta1']]);
  });

  it('with -o, a review that cannot be converted exits 3 naming the object', () => {
    const review = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'u-2', desiredAPIVersion: 'apps.kruise.io/v1beta1', objects: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'broken' }, spec: 'no' }] } };
    const r = invoke(['sidecarset-convert', '-f', file('broken.json', JSON.stringify(review)), '-o', 'yaml']);
    expect([r.code, r.stdout]).toEqual([3, '']);
    expect(r.stderr).toBe('invoke: sidecarset-convert could not convert: objects[0] (name "broken"): cannot convert to apps.kruise.io/v1beta1: spec must be an object\n');
  });

  it.each([
    ['a plain SidecarSet without --to', () => ['-f', file('a.yaml', ALPHA_YAML)], 'invoke: sidecarset-convert needs --to v1alpha1|v1beta1 for a plain SidecarSet'],
    ['an unknown version', () => ['-f', file('a.yaml', ALPHA_YAML), '--to', 'v2'], 'invoke: --to must be v1alpha1 or v1beta1, got "v2"'],
    ['--to beside a review', () => ['-f', file('r.json', '{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"x"}}'), '--to', 'v1beta1'], 'invoke: --to is for a plain SidecarSet'],
    ['a Pod', () => ['-f', file('pod.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n'), '--to', 'v1beta1'], 'not a ConversionReview v1 request nor a SidecarSet of apps.kruise.io/v1alpha1 or apps.kruise.io/v1beta1'],
    ['a malformed review', () => ['-f', file('m.json', '{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}')], 'request is missing or not an object'],
    ['an admission option', () => ['-f', file('a.yaml', ALPHA_YAML), '--sidecarsets', 'x'], 'invoke: sidecarset-convert takes no --sidecarsets'],
    ['a bad output', () => ['-f', file('a.yaml', ALPHA_YAML), '--to', 'v1beta1', '-o', 'xml'], 'invoke: --output must be yaml or json, got "xml"'],
    ['a missing file', () => ['-f', join(dir, 'none.yaml'), '--to', 'v1beta1'], 'invoke: cannot read event file'],
    ['YAML that is not an object', () => ['-f', file('bad.yaml', '- a\n- b\n'), '--to', 'v1beta1'], 'invoke: '],
  ])('refuses %s with exit 2 and a message naming it', (_why, args, message) => {
    const r = invoke(['sidecarset-convert', ...args()]);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toContain(message);
  });

  it('has its own --help, and is listed in invoke --help', () => {
    const own = invoke(['sidecarset-convert', '--help']);
    expect(own.code).toBe(0);
    expect(own.stdout).toMatch(/^usage: invoke sidecarset-convert \[-f\|--event FILE\] \[--to v1alpha1\|v1beta1\] \[-o\|--output yaml\|json\]\n/);
    expect(own.stdout).toContain('exit codes:');
    expect(invoke(['--help']).stdout).toContain('  sidecarset-convert   convert a SidecarSet between v1alpha1 and v1beta1');
  });
});
