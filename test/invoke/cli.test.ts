/**
 * The invoke command's interface, exercised as a user runs it: a real
 * Node 22 process on files and standard input.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parse, stringify } from 'yaml';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { parseSingleObject } from '../../lib/kube/yaml-objects.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { LABEL_CUSTOM_VERSION, newRevision, type ControllerRevision } from '../../lib/sidecarset/revisions.ts';

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = join(here, '..', '..');
const fixture = (name: string) => join(here, 'fixtures', name);

function invoke(args: string[], stdin: string | Buffer = '') {
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

  it('exits 1 when a namespaceSelector needs a Namespace that was not given, saying to pass it with --namespaces FILE', () => {
    const r = invoke(['pod-inject', '--event', fixture('pod-create.json'), '--sidecarsets', fixture('sidecarsets-ns-selector.yaml')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/namespace "shop" is unknown/);
    expect(r.stderr).toContain('no --namespaces FILE was given: pass the Namespace objects with --namespaces FILE (for example kubectl get namespace shop -o yaml > namespaces.yaml)');
  });

  it('names the --namespaces file that lacks the pod\'s Namespace', () => {
    const dir = mkdtempSync(join(tmpdir(), 'invoke-ns-'));
    try {
      const other = join(dir, 'other.yaml');
      writeFileSync(other, stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cart', labels: { env: 'prod' } } }));
      const r = invoke(['pod-inject', '--event', fixture('pod-create.json'), '--sidecarsets', fixture('sidecarsets-ns-selector.yaml'), '--namespaces', other]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`Namespace "shop" and ${other} does not hold it: pass the Namespace objects with --namespaces FILE`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exits 1 (cannot decide), never injecting the current spec, for a set that pins a revision and no --revisions, naming the flag', () => {
    const dir = mkdtempSync(join(tmpdir(), 'invoke-pinned-'));
    try {
      const sets = join(dir, 'sets.yaml');
      writeFileSync(sets, stringify(pinningSet('3')));
      const r = invoke(['pod-inject', '--event', fixture('pod-create.json'), '--sidecarsets', sets]);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/SidecarSet log-agent pins custom version "3" .*ControllerRevisions are read from --revisions FILE here, and none was given/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The fixture's set pinning a custom version. */
function pinningSet(customVersion: string): SidecarSet {
  const set = parse(readFileSync(fixture('sidecarsets.yaml'), 'utf8')) as SidecarSet;
  return { ...set, spec: { ...set.spec, injectionStrategy: { revision: { customVersion } } } };
}

/** The revision Kruise would have recorded for the fixture's set with another image, labelled with a custom version. */
function olderRevision(image: string, customVersion: string): ControllerRevision {
  const set = parse(readFileSync(fixture('sidecarsets.yaml'), 'utf8')) as SidecarSet;
  const older = defaultSidecarSet({ ...set, spec: { ...set.spec, containers: set.spec!.containers!.map((c) => ({ ...c, image })) } });
  const revision = newRevision(older, 'kruise-system', 1, 0);
  return { ...revision, metadata: { ...revision.metadata, labels: { ...revision.metadata!.labels, [LABEL_CUSTOM_VERSION]: customVersion } } };
}

describe('invoke --revisions', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'invoke-revisions-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const injectedImage = (stdout: string) => (parse(stdout) as { spec: { containers: { name: string; image: string }[] } }).spec.containers.find((c) => c.name === 'log-agent')?.image;

  it.each<[string, () => string]>([
    ['one ControllerRevision (YAML)', () => stringify(olderRevision('fluent-bit:3.0', '3'))],
    ['a List (JSON)', () => JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [olderRevision('fluent-bit:2.9', '2'), olderRevision('fluent-bit:3.0', '3')] })],
    ['several YAML documents', () => `${stringify(olderRevision('fluent-bit:2.9', '2'))}---\n${stringify(olderRevision('fluent-bit:3.0', '3'))}`],
  ])('pod-inject injects the pinned revision read from %s', (_, text) => {
    const sets = file('pinning.yaml', stringify(pinningSet('3')));
    const r = invoke(['pod-inject', '-f', fixture('pod-create.json'), '--sidecarsets', sets, '--revisions', file('revisions', text()), '-o', 'yaml']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(injectedImage(r.stdout)).toBe('fluent-bit:3.0');
  });

  it('sidecarset-validate decides a pin with --revisions: allowed when it resolves, denied when it does not; without the file it names the flag', () => {
    const revisions = file('revision.yaml', stringify(olderRevision('fluent-bit:3.0', '3')));
    const resolves = file('pins-3.yaml', stringify(pinningSet('3')));
    const allowed = invoke(['sidecarset-validate', '-f', resolves, '--revisions', revisions, '-o', 'json']);
    expect({ code: allowed.code, stderr: allowed.stderr }).toEqual({ code: 0, stderr: '' });
    const missing = invoke(['sidecarset-validate', '-f', file('pins-9.yaml', stringify(pinningSet('9'))), '--revisions', revisions, '-o', 'json']);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/pins custom version 9, but no ControllerRevision carries it/);
    const without = invoke(['sidecarset-validate', '-f', resolves, '-o', 'json']);
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(/--revisions FILE/);
  });

  it('refuses --revisions where the function reads none, a file of another kind, and revisions of two namespaces', () => {
    const revision = olderRevision('fluent-bit:3.0', '3');
    const revisions = file('r.yaml', stringify(revision));
    const plainSet = file('set.yaml', stringify(pinningSet('3')));
    expect(invoke(['sidecarset-default', '-f', plainSet, '--revisions', revisions])).toMatchObject({ code: 2, stderr: 'invoke: sidecarset-default reads no ControllerRevisions: it takes no --revisions\n' });
    expect(invoke(['status-sync', '--sidecarsets', plainSet, '--pods', fixture('pod-create.json'), '--revisions', revisions])).toMatchObject({ code: 2, stderr: 'invoke: status-sync takes no --revisions\n' });
    const notRevisions = invoke(['pod-inject', '-f', fixture('pod-create.json'), '--revisions', fixture('namespaces.yaml')]);
    expect(notRevisions.code).toBe(2);
    expect(notRevisions.stderr).toMatch(/namespaces\.yaml: object 1 is a "Namespace", expected ControllerRevision/);
    const elsewhere = { ...revision, metadata: { ...revision.metadata, name: 'other', namespace: 'history' } };
    const two = invoke(['pod-inject', '-f', fixture('pod-create.json'), '--revisions', file('two.yaml', `${stringify(revision)}---\n${stringify(elsewhere)}`)]);
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(/two\.yaml: the ControllerRevisions are in 2 namespaces \(kruise-system, history\)/);
  });
});

describe('invoke on a JSON file', () => {
  it('reads a 1 MB AdmissionReview as JSON and answers it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'invoke-json-'));
    try {
      const event = JSON.parse(readFileSync(fixture('pod-create.json'), 'utf8')) as { request: { object: { spec: { containers: Record<string, unknown>[] } } } };
      event.request.object.spec.containers[0]!.env = Array.from({ length: 6300 }, (_, i) => ({ name: `VAR_${i}`, value: `value-${i}-${'x'.repeat(50)}` }));
      const path = join(dir, 'big.json');
      writeFileSync(path, JSON.stringify(event, null, 2));
      const r = invoke(['pod-inject', '-f', path, '--sidecarsets', fixture('sidecarsets.yaml'), '-o', 'json']);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      const pod = JSON.parse(r.stdout) as { spec: { containers: { name: string; env?: unknown[] }[] } };
      expect(pod.spec.containers.map((c) => c.name)).toEqual(['log-agent', 'app']);
      expect(pod.spec.containers[1]!.env).toHaveLength(6300);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the file and the problem for JSON it refuses: a duplicate key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'invoke-json-'));
    try {
      const path = join(dir, 'dup.json');
      writeFileSync(path, '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "name": "b"}, "spec": {"containers": []}}');
      const r = invoke(['pod-inject', '-f', path]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`invoke: ${path}: not valid JSON or YAML: Map keys must be unique ("name" twice in one object)\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('invoke rollout', () => {
  const example = (name: string) => join(projectRoot, 'examples/rollout', name);
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'invoke-rollout-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  /** examples/rollout/sidecarset.yaml restricted to namespaces labelled env=prod. */
  const scopedSet = () => {
    const set = parse(readFileSync(example('sidecarset.yaml'), 'utf8'));
    set.spec.namespaceSelector = { matchLabels: { env: 'prod' } };
    const path = join(dir, 'scoped.yaml');
    writeFileSync(path, stringify(set));
    return path;
  };

  it('prints the reconcile’s decisions: one pod updated to the new image (maxUnavailable 1), the set waiting', () => {
    const r = invoke(['rollout', '--sidecarsets', example('sidecarset.yaml'), '--pods', example('pods.yaml')]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      flips: [],
      updates: [{ sidecarSet: 'log-agent', namespace: 'default', name: 'web-0', images: { 'log-agent': 'fluent/fluent-bit:3.2' } }],
      notUpgradable: [],
      waiting: [{ sidecarSet: 'log-agent', reason: 'max-unavailable', message: expect.stringMatching(/^maxUnavailable 1 reached/) }],
    });
  });

  it('says the rollout is finished when the pods already run the set’s image', () => {
    const r = invoke(['rollout', '--sidecarsets', join(projectRoot, 'examples/sidecarset.yaml'), '--pods', example('pods.yaml')]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ flips: [], updates: [], notUpgradable: [], waiting: [{ sidecarSet: 'log-agent', reason: 'finished', message: expect.any(String) }] });
  });

  it('uses the Namespaces file for a namespaceSelector', () => {
    const namespaces = join(dir, 'namespaces.yaml');
    writeFileSync(namespaces, stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default', labels: { env: 'prod' } } }));
    const r = invoke(['rollout', '--sidecarsets', scopedSet(), '--pods', example('pods.yaml'), '--namespaces', namespaces]);
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout) as { updates: { name: string }[] };
    expect(plan.updates.map((u) => u.name)).toEqual(['web-0']);
  });

  it('exits 1 with one line and nothing on stdout when a namespaceSelector needs a Namespace that was not given', () => {
    const r = invoke(['rollout', '--sidecarsets', scopedSet(), '--pods', example('pods.yaml')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^invoke: rollout cannot decide: SidecarSet log-agent: namespace "default" is unknown[^\n]*\n$/);
    expect(r.stderr).toContain('Namespace "default" and no --namespaces FILE was given: pass the Namespace objects with --namespaces FILE');
  });

  it.each<[string, string[], RegExp]>([
    ['missing --pods', ['rollout', '--sidecarsets', example('sidecarset.yaml')], /rollout needs --pods FILE/],
    ['missing --sidecarsets', ['rollout', '--pods', example('pods.yaml')], /rollout needs --sidecarsets FILE/],
    ['an unreadable Pods file', ['rollout', '--sidecarsets', example('sidecarset.yaml'), '--pods', '/nonexistent/pods.yaml'], /cannot read Pods file \/nonexistent\/pods\.yaml: ENOENT/],
    ['a Pods file holding a SidecarSet', ['rollout', '--sidecarsets', example('sidecarset.yaml'), '--pods', example('sidecarset.yaml')], /is a "SidecarSet", expected Pod/],
    ['a Namespaces file holding a Pod', ['rollout', '--sidecarsets', example('sidecarset.yaml'), '--pods', example('pods.yaml'), '--namespaces', example('pods.yaml')], /is a "Pod", expected Namespace/],
    ['an event', ['rollout', '-f', example('sidecarset.yaml'), '--sidecarsets', example('sidecarset.yaml'), '--pods', example('pods.yaml')], /rollout takes no --event/],
    ['-o', ['rollout', '--sidecarsets', example('sidecarset.yaml'), '--pods', example('pods.yaml'), '-o', 'yaml'], /rollout takes no --output/],
  ])('exits 2 with one line on stderr for %s', (_d, args, message) => {
    const r = invoke(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
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
        'serverless-sidecarset/injection-path': 'policy',
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

describe('invoke on plain objects, as kubectl apply -f takes them', () => {
  const example = (name: string) => join(projectRoot, 'examples', name);
  const exampleSet = () => parseSingleObject(readFileSync(example('sidecarset.yaml'), 'utf8'), 'example') as SidecarSet;
  let dir: string;
  const file = (name: string, content: unknown): string => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : stringify(content));
    return path;
  };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'invoke-plain-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('sidecarset-default wraps a plain SidecarSet in a CREATE review and answers with the defaulting patch', () => {
    const r = invoke(['sidecarset-default', '--event', example('sidecarset.yaml')]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const { response } = JSON.parse(r.stdout);
    expect(response).toMatchObject({ allowed: true, patchType: 'JSONPatch', uid: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(applyPatch(exampleSet(), decodePatch(response.patch))).toEqual(defaultSidecarSet(exampleSet()));
  });

  it('-o yaml prints the defaulted SidecarSet', () => {
    const r = invoke(['sidecarset-default', '-f', example('sidecarset.yaml'), '-o', 'yaml']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(parse(r.stdout)).toEqual(defaultSidecarSet(exampleSet()));
  });

  it('sidecarset-validate defaults a plain SidecarSet first, as the API server runs mutating webhooks before validating ones', () => {
    const r = invoke(['sidecarset-validate', '-f', example('sidecarset.yaml')]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).response).toEqual({ uid: expect.any(String), allowed: true });
    // With -o, the object printed is the one validated: the defaulted set.
    const o = invoke(['sidecarset-validate', '-f', example('sidecarset.yaml'), '-o', 'json']);
    expect(JSON.parse(o.stdout)).toEqual(defaultSidecarSet(exampleSet()));
  });

  it('with -o, a denial prints its reasons on stderr and exits 3; without -o the review is printed and the exit is 0', () => {
    const invalid = file('invalid.yaml', { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'bad' }, spec: { containers: [{ name: 'x' }] } });
    const o = invoke(['sidecarset-validate', '-f', invalid, '-o', 'yaml']);
    expect(o.code).toBe(3);
    expect(o.stdout).toBe('');
    expect(o.stderr).toMatch(/^invoke: sidecarset-validate denied the request \(422\): .*spec\.containers\[0\]\.image: Required value/);
    expect(o.stderr).not.toContain('Unsupported value');
    const r = invoke(['sidecarset-validate', '-f', invalid]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).response).toMatchObject({ allowed: false, status: { code: 422 } });
  });

  it('pod-inject -f pod.yaml --sidecarsets sets.yaml -o yaml shows the pod as it would be stored, plain sets defaulted on read', () => {
    const r = invoke(['pod-inject', '-f', example('pod.yaml'), '--sidecarsets', example('sidecarset.yaml'), '-o', 'yaml']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const pod = parse(r.stdout) as { metadata: { namespace: string; annotations: Record<string, string> }; spec: { containers: { name: string; env?: { name: string }[] }[] } };
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['log-agent', 'app']);
    expect(pod.spec.containers[0]!.env?.map((e) => e.name)).toEqual(['LOG_LEVEL', 'IS_INJECTED']);
    expect(pod.metadata.namespace).toBe('default');
    const hash = defaultSidecarSet(exampleSet()).metadata!.annotations!['kruise.io/sidecarset-hash'];
    expect(JSON.parse(pod.metadata.annotations['kruise.io/sidecarset-hash']!)['log-agent'].hash).toBe(hash);
  });

  it('uses a set that carries its hash annotation as given', () => {
    const r = invoke(['pod-inject', '-f', example('pod.yaml'), '--sidecarsets', fixture('sidecarsets.yaml'), '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(JSON.parse(r.stdout).metadata.annotations['kruise.io/sidecarset-hash'])['log-agent'].hash).toBe('hash-a');
  });

  it('reads a plain pod from standard input (-f -), puts it in --namespace and keeps generateName', () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'web-', labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } };
    const r = invoke(['pod-inject', '-f', '-', '--namespace', 'shop', '--sidecarsets', example('sidecarset.yaml'), '-ojson'], JSON.stringify(pod));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const injected = JSON.parse(r.stdout) as { metadata: Record<string, unknown>; spec: { containers: { name: string }[] } };
    expect(injected.metadata).toMatchObject({ generateName: 'web-', namespace: 'shop' });
    expect(injected.metadata).not.toHaveProperty('name');
    expect(injected.spec.containers.map((c) => c.name)).toEqual(['log-agent', 'app']);
  });

  it('prints the object a review leaves with -o as well', () => {
    const r = invoke(['pod-inject', '--event', fixture('pod-create.json'), '--sidecarsets', fixture('sidecarsets.yaml'), '--output=yaml']);
    expect(r.code).toBe(0);
    expect((parse(r.stdout) as { spec: { containers: { name: string }[] } }).spec.containers.map((c) => c.name)).toEqual(['log-agent', 'app']);
  });

  it('validates an UPDATE against the old object (--operation UPDATE --old FILE)', () => {
    const old = file('old.yaml', exampleSet());
    const newImage = file('new-image.yaml', { ...exampleSet(), spec: { ...exampleSet().spec, containers: [{ ...exampleSet().spec!.containers![0]!, image: 'fluent/fluent-bit:3.2' }] } });
    const allowed = invoke(['sidecarset-validate', '-f', newImage, '--operation', 'UPDATE', '--old', old, '-o', 'yaml']);
    expect({ code: allowed.code, stderr: allowed.stderr }).toEqual({ code: 0, stderr: '' });
    const added = file('new-container.yaml', { ...exampleSet(), spec: { ...exampleSet().spec, containers: [...exampleSet().spec!.containers!, { name: 'metrics', image: 'metrics:1' }] } });
    const denied = invoke(['sidecarset-validate', '-f', added, '--operation', 'UPDATE', '--old', old, '-o', 'yaml']);
    expect(denied.code).toBe(3);
    expect(denied.stderr).toMatch(/spec\.containers\[1\]/);
  });

  it.each<[string, RegExp, string[], string[]]>([
    ['sidecarset-default', /^usage: invoke sidecarset-default /, ['--operation CREATE|UPDATE, --old FILE', '-o, --output yaml|json', 'exit codes:'], ['--sidecarsets', '--pods', '--revisions']],
    ['sidecarset-validate', /^usage: invoke sidecarset-validate /, ['--sidecarsets, --namespaces, --pods FILE', 'through sidecarset-default first', '--revisions FILE', 'exit codes:'], ['waiting reasons']],
    ['pod-inject', /^usage: invoke pod-inject \[-f\|--event FILE\] \[--namespace NS\] \[--sidecarsets FILE\] \[--namespaces FILE\]\s+\[--revisions FILE\]\s+\[--pods FILE\]/, ['--namespace NS', '--sidecarsets, --namespaces, --pods FILE', '--revisions FILE', 'exit codes:'], ['--operation']],
    ['status-sync', /^usage: invoke status-sync --sidecarsets FILE --pods FILE/, ['"status": <its new status>', 'exit codes:'], ['-o, --output', 'AdmissionReview']],
    [
      'rollout',
      /^usage: invoke rollout --sidecarsets FILE --pods FILE/,
      ['"flips"', '"updates"', '"notUpgradable"', '"waiting"', ...['not-update', 'finished', 'hot-swapping', 'paused', 'max-unavailable', 'partition', 'nothing-waiting', 'invalid-strategy'].map((r) => `  ${r} `), 'exit codes:'],
      ['hot-upgrade-unsupported', '-o, --output', 'AdmissionReview'],
    ],
  ])('%s --help prints its own usage and exits 0', (fn, head, has, hasNot) => {
    for (const argv of [[fn, '--help'], ['--help', fn], [fn, '-h', '--pods', 'x.yaml']]) {
      const r = invoke(argv);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(head);
      for (const text of has) expect(r.stdout).toContain(text);
      for (const text of hasNot) expect(r.stdout).not.toContain(text);
    }
  });

  it('--help alone lists every function, each with what it does', () => {
    const r = invoke(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^usage: invoke <function> \[options\]/);
    for (const fn of ['sidecarset-default', 'sidecarset-validate', 'pod-inject', 'status-sync', 'rollout']) expect(r.stdout).toMatch(new RegExp(`^  ${fn} +\\S`, 'm'));
  });
});

describe('invoke alone', () => {
  it('prints the usage on stderr, exit 2', () => {
    const r = invoke([]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^usage: invoke <function> \[options\]/);
  });
});

describe('invoke errors: one line on stderr, exit 2, nothing on stdout', () => {
  it.each<[string, string[], string, RegExp]>([
    ['an unknown function', ['pod-eject', '--event', fixture('pod-create.json')], '', /unknown function "pod-eject" \(did you mean pod-inject\?\); expected one of/],
    ['a function nothing is close to, without a guess', ['nonsense'], '', /^invoke: unknown function "nonsense"; expected one of/],
    ['a missing function', ['-o', 'json'], '', /missing <function>/],
    ['an unknown option', ['pod-inject', '--evnt', 'x'], '', /unknown option --evnt \(did you mean --event\?\)/],
    ['a misspelt option', ['pod-inject', '--sidecarset', 'x'], '', /unknown option --sidecarset \(did you mean --sidecarsets\?\)/],
    ['an option without its file', ['pod-inject', '--event'], '', /--event needs a file path$/m],
    ['-f without its file, named as typed', ['pod-inject', '-f'], '', /^invoke: -f needs a file path \(--event\)$/m],
    ['an unreadable event file', ['pod-inject', '--event', fixture('nope.json')], '', /cannot read event file .*nope\.json: ENOENT/],
    ['an unreadable SidecarSets file', ['pod-inject', '--event', fixture('pod-create.json'), '--sidecarsets', '/nonexistent/sets.yaml'], '', /cannot read SidecarSets file/],
    ['standard input that is not JSON or YAML', ['pod-inject'], '{"apiVersion": ', /standard input: not valid JSON or YAML/],
    ['an event that is not an AdmissionReview', ['pod-inject'], '{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}', /not an AdmissionReview v1 request: apiVersion is "admission.k8s.io\/v1beta1"/],
    ['a plain Pod without a name', ['pod-inject'], '{"apiVersion":"v1","kind":"Pod"}', /the Pod has no metadata\.name \(nor metadata\.generateName\)/],
    ['an object of another kind', ['pod-inject'], '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"}}', /standard input: not an AdmissionReview v1 request nor a Pod \(apiVersion "apps\/v1", kind "Deployment"\)/],
    ['a Pod given to a SidecarSet function', ['sidecarset-default', '--event', join(projectRoot, 'examples/pod.yaml')], '', /sidecarset-default is called for a SidecarSet, not a Pod/],
    ['a SidecarSet of another apiVersion', ['sidecarset-default'], '{"apiVersion":"apps.kruise.io/v1beta2","kind":"SidecarSet","metadata":{"name":"s"}}', /a SidecarSet has apiVersion "apps\.kruise\.io\/v1alpha1" or "apps\.kruise\.io\/v1beta1", not "apps\.kruise\.io\/v1beta2"/],
    ['--operation with a review', ['pod-inject', '--event', fixture('pod-create.json'), '--operation', 'UPDATE'], '', /--operation is for a plain object; .*pod-create\.json is an AdmissionReview/],
    ['an UPDATE without --old', ['sidecarset-default', '-f', join(projectRoot, 'examples/sidecarset.yaml'), '--operation', 'UPDATE'], '', /UPDATE needs the stored object \(--old FILE\)/],
    ['--old without UPDATE', ['sidecarset-default', '-f', join(projectRoot, 'examples/sidecarset.yaml'), '--old', join(projectRoot, 'examples/sidecarset.yaml')], '', /an old object is only for UPDATE/],
    ['an operation the CLI cannot make', ['sidecarset-default', '-f', join(projectRoot, 'examples/sidecarset.yaml'), '--operation', 'DELETE'], '', /--operation must be CREATE or UPDATE, got "DELETE"/],
    ['--namespace for a cluster-scoped SidecarSet', ['sidecarset-default', '-f', join(projectRoot, 'examples/sidecarset.yaml'), '--namespace', 'shop'], '', /a SidecarSet is cluster-scoped: --namespace does not apply/],
    ['a namespace that disagrees with the Pod\'s', ['pod-inject', '-f', join(projectRoot, 'examples/pod.yaml'), '--namespace', 'shop'], '', /the Pod's namespace "default" does not match --namespace "shop"/],
    ['an output format other than yaml or json', ['pod-inject', '-f', join(projectRoot, 'examples/pod.yaml'), '-o', 'wide'], '', /--output must be yaml or json, got "wide"/],
    ['-o without a format', ['pod-inject', '-f', join(projectRoot, 'examples/pod.yaml'), '-o'], '', /^invoke: -o needs a value \(--output\)$/m],
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

/** Nine levels of nine-fold aliases: 387 million strings if expanded. */
const ALIAS_BOMB = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
  .concat(['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map((k, i) => `${k}: &${k} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`))
  .join('\n');

describe('invoke on hostile YAML: one line naming the file and the problem, exit 2', () => {
  let dir: string;
  const file = (name: string, content: string | Buffer): string => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'invoke-hostile-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it.each<[string, string, string | Buffer, string]>([
    ['an alias bomb', 'bomb.yaml', ALIAS_BOMB, 'not valid JSON or YAML: its aliases expand more than 100 times (a YAML alias bomb?)'],
    ['flow collections nested 100,000 deep', 'deep-flow.yaml', `a: ${'['.repeat(100_000)}${']'.repeat(100_000)}`, 'not valid JSON or YAML: it nests more than 200 levels deep'],
    ['JSON nested 100,000 deep', 'deep.json', `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, 'not valid JSON or YAML: it nests more than 200 levels deep'],
    ['block mappings nested 2,000 deep', 'deep-block.yaml', Array.from({ length: 2000 }, (_, i) => `${' '.repeat(i)}k:`).join('\n'), 'not valid JSON or YAML: it nests more than 200 levels deep'],
    ['!!binary', 'binary.yaml', 'kind: SidecarSet\ndata: !!binary aGVsbG8=\n', 'not valid JSON or YAML: Unresolved tag: tag:yaml.org,2002:binary at line 2, column 7 (only JSON\'s types are accepted)'],
    ['!!binary under a YAML 1.1 directive', 'binary11.yaml', '%YAML 1.1\n---\nkind: SidecarSet\ndata: !!binary aGVsbG8=\n', 'not valid JSON or YAML: "data" holds binary data (!!binary), which JSON cannot'],
    ['a timestamp under a YAML 1.1 directive', 'time11.yaml', '%YAML 1.1\n---\nkind: SidecarSet\nwhen: 2001-12-14\n', 'not valid JSON or YAML: "when" holds a timestamp (!!timestamp), which JSON cannot'],
    ['a custom tag', 'custom.yaml', 'kind: SidecarSet\nspec: !include other.yaml\n', 'not valid JSON or YAML: Unresolved tag: !include at line 2, column 7 (only JSON\'s types are accepted)'],
    ['.inf', 'inf.yaml', 'kind: SidecarSet\nspec: {n: .inf}\n', 'not valid JSON or YAML: "n" holds the number Infinity, which JSON cannot'],
    ['a collection as a key', 'key.yaml', 'kind: SidecarSet\n? [a, b]\n: 1\n', 'not valid JSON or YAML: With stringKeys, all keys must be strings at line 2, column 3'],
    ['a duplicate key', 'dup.yaml', 'kind: SidecarSet\nspec: {}\nspec: {}\n', 'not valid JSON or YAML: Map keys must be unique at line 3, column 1'],
    ['bytes that are not UTF-8', 'latin1.yaml', Buffer.from('kind: SidecarSet\nmetadata: {name: caf\xe9}\n', 'latin1'), 'not UTF-8 text'],
  ])('refuses %s in the SidecarSets file', (_name, name, content, problem) => {
    const path = file(name, content);
    const r = invoke(['pod-inject', '--event', fixture('pod-create.json'), '--sidecarsets', path]);
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 2, stdout: '', stderr: `invoke: ${path}: ${problem}\n` });
  });

  it('refuses an alias bomb as the event on standard input', () => {
    const r = invoke(['pod-inject'], ALIAS_BOMB);
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
      code: 2,
      stdout: '',
      stderr: 'invoke: standard input: not valid JSON or YAML: its aliases expand more than 100 times (a YAML alias bomb?)\n',
    });
  });

  it('refuses standard input that is not UTF-8', () => {
    const r = invoke(['pod-inject'], Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: 'invoke: standard input: not UTF-8 text\n' });
  });

  it('still reads anchors and aliases used as intended, after a byte order mark', () => {
    const withAlias = readFileSync(fixture('sidecarsets.yaml'), 'utf8')
      .replace('metadata:\n', 'metadata:\n  labels: &labels\n    app: web\n')
      .replace('    matchLabels:\n      app: web\n', '    matchLabels: *labels\n');
    expect(withAlias).toContain('*labels');
    const r = invoke(['pod-inject', '--event', fixture('pod-create.json'), '--sidecarsets', file('aliases.yaml', `\ufeff${withAlias}`)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).response.patchType).toBe('JSONPatch');
  });
});

describe('npm run -s invoke', () => {
  it('runs the command through the package script', () => {
    const result = spawnSync('npm', ['run', '-s', 'invoke', '--', 'pod-inject', '--event', fixture('pod-create.json')], { cwd: projectRoot, encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout).response.allowed).toBe(true);
  });
});
