/**
 * infra/k8s/crd.yaml is what `npm run crd` generates: OpenKruise 1.9's two
 * versions (v1beta1 stored, converted by webhook), a structural schema
 * kubectl can apply (server-side) and explain, and it keeps every field of
 * OpenKruise's SidecarContainer (the fields the SidecarSet hash covers), so
 * that pruning never changes a hash. On the API server: crd-server.test.ts.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { isObject } from '../../lib/kube/json.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { SIDECAR_CONTAINER, type GoType } from '../../lib/sidecarset/go-json.ts';
import { parseOpenApiSubset } from '../../lib/crd/openapi-subset.ts';
import { crdFile, generateCrd, main, openApiFile } from '../../scripts/crd.ts';
import { CONVERSION_URL_PLACEHOLDER } from '../../lib/crd/sidecarset-crd.ts';

const committed = readFileSync(crdFile, 'utf8');
const crd = parse(committed) as JsonObject;
const version = ((crd.spec as JsonObject).versions as JsonObject[])[0] as JsonObject;
const root = (version.schema as JsonObject).openAPIV3Schema as JsonObject;
const spec = (root.properties as JsonObject).spec as JsonObject;
const prop = (schema: JsonObject, name: string): JsonObject => (schema.properties as Record<string, JsonObject>)[name] as JsonObject;

/** Every schema node with its path (`.spec.containers[].image`). */
function nodes(schema: JsonObject, path = ''): [string, JsonObject][] {
  const out: [string, JsonObject][] = [[path, schema]];
  if (isObject(schema.properties)) for (const [k, v] of Object.entries(schema.properties)) out.push(...nodes(v as JsonObject, `${path}.${k}`));
  if (isObject(schema.items)) out.push(...nodes(schema.items, `${path}[]`));
  if (isObject(schema.additionalProperties)) out.push(...nodes(schema.additionalProperties, `${path}{}`));
  return out;
}
const all = nodes(root);

const subset = parseOpenApiSubset(readFileSync(openApiFile, 'utf8'), openApiFile);
/** 36 for v1.36.3: the Kubernetes minor whose types the CRD embeds. */
const serverMinor = Number(/^v1\.(\d+)\./.exec(subset.server)?.[1]);

describe('infra/k8s/crd.yaml', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('is exactly what npm run crd generates from infra/k8s/openapi/core-v1.json', () => {
    expect(committed).toBe(generateCrd(subset));
  });

  it('npm run crd -- --check agrees (exit 0), --help exits 0, an unknown option exits 2', async () => {
    const out = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(await main(['--check'])).toBe(0);
    expect(await main(['--help'])).toBe(0);
    expect(String(out.mock.calls[0]?.[0])).toContain('usage: npm run crd');
    expect(await main(['--chek'])).toBe(2);
    expect(String(err.mock.calls[0]?.[0])).toContain('unknown option --chek');
    expect(await main(['--check', '--refresh'])).toBe(2);
  });

  it('npm run crd -- --check exits 1 on a stale CRD, and npm run crd rewrites it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crd-'));
    try {
      const files = { crd: join(dir, 'crd.yaml'), openApi: openApiFile };
      await writeFile(files.crd, committed.replace('description: SidecarSet injects', 'description: edited by hand'));
      const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
      jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
      expect(await main(['--check'], files)).toBe(1);
      expect(String(err.mock.calls[0]?.[0])).toMatch(/is not what lib\/crd\/sidecarset-crd.ts generates: run npm run crd/);
      expect(await main([], files)).toBe(0);
      expect(await readFile(files.crd, 'utf8')).toBe(committed);
      expect(await main(['--check'], files)).toBe(0);
      await writeFile(join(dir, 'bad.json'), '{"server": "v1.36.3"}');
      await expect(main(['--check'], { ...files, openApi: join(dir, 'bad.json') })).rejects.toThrow(/bad.json: expected \{"server": string/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps the resource OpenKruise 1.9 defines: name, group, both versions (v1beta1 stored), scope, status subresource, printer columns (and the resourceVersion, -o wide only)', () => {
    expect((crd.metadata as JsonObject).name).toBe('sidecarsets.apps.kruise.io');
    expect(crd.spec).toMatchObject({ group: 'apps.kruise.io', scope: 'Cluster', names: { kind: 'SidecarSet', plural: 'sidecarsets' } });
    const versions = (crd.spec as JsonObject).versions as JsonObject[];
    expect(versions).toHaveLength(2);
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: false, subresources: { status: {} } });
    expect(versions[1]).toMatchObject({ name: 'v1beta1', served: true, storage: true, subresources: { status: {} } });
    for (const v of versions) expect((v.additionalPrinterColumns as JsonObject[]).map((c) => c.name)).toEqual(['MATCHED', 'UPDATED', 'READY', 'AGE', 'RESOURCEVERSION']);
  });

  it('converts by webhook at the placeholder URL that npm run manifests, npm start and the test harness replace', () => {
    expect((crd.spec as JsonObject).conversion).toEqual({
      strategy: 'Webhook',
      webhook: { clientConfig: { url: CONVERSION_URL_PLACEHOLDER }, conversionReviewVersions: ['v1'] },
    });
  });

  it('fits a request and an etcd object with room to spare (over the 256 KiB of client-side apply\'s annotation: it is applied server-side)', () => {
    const bytes = Buffer.byteLength(JSON.stringify(crd));
    process.stdout.write(`crd.yaml as compact JSON: ${bytes} bytes (etcd's default limit 1572864)\n`);
    expect(bytes).toBeLessThan(1_572_864 / 2);
  });

  it('npm run crd -- --v1alpha1-only renders the one-version CRD, stored as v1alpha1, with no conversion', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crd-'));
    try {
      jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
      expect(await main(['--v1alpha1-only', '--out', join(dir, 'one.yaml')])).toBe(0);
      const one = parse(await readFile(join(dir, 'one.yaml'), 'utf8')) as JsonObject;
      expect(((one.spec as JsonObject).versions as JsonObject[]).map((v) => [v.name, v.storage])).toEqual([['v1alpha1', true]]);
      expect((one.spec as JsonObject).conversion).toBeUndefined();
      const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
      expect(await main(['--v1alpha1-only', '--check'])).toBe(2);
      expect(String(err.mock.calls[0]?.[0])).toContain('--v1alpha1-only takes only --out, not --check');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is structural: a type (or int-or-string, or kept whole) everywhere, no references or combinators', () => {
    for (const [path, node] of all) {
      for (const key of ['$ref', 'allOf', 'oneOf', 'not', 'nullable', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys']) expect([path, key in node]).toEqual([path, false]);
      const typed = typeof node.type === 'string' || node['x-kubernetes-int-or-string'] === true || node['x-kubernetes-preserve-unknown-fields'] === true;
      expect([path, typed]).toEqual([path, true]);
      if (node['x-kubernetes-int-or-string'] === true) expect(node.anyOf).toEqual([{ type: 'integer' }, { type: 'string' }]);
      else expect([path, 'anyOf' in node]).toEqual([path, false]);
    }
  });

  it('prunes unknown fields everywhere except inside quantities and managed fields, which the server keeps whole too', () => {
    const keptWhole = all.filter(([, node]) => node['x-kubernetes-preserve-unknown-fields'] === true).map(([path]) => path);
    for (const path of keptWhole) expect(path).toMatch(/(\{\}|\.divisor|\.sizeLimit|\.fieldsV1)$/);
    expect(keptWhole).toContain('.spec.containers[].resources.limits{}');
    // An object with neither properties nor additionalProperties would prune everything written in it.
    const empty = all.filter(([path, node]) => path !== '.metadata' && node.type === 'object' && node.properties === undefined && node.additionalProperties === undefined && node['x-kubernetes-preserve-unknown-fields'] !== true);
    expect(empty.map(([path]) => path)).toEqual([]);
  });

  it('applies no default and checks no enum or required field except those OpenKruise\'s CRD has (1.9\'s for resourcesPolicy)', () => {
    const defaults = all.filter(([, node]) => 'default' in node).map(([path, node]) => [path, node.default]);
    expect(defaults).toEqual([
      ['.spec.initContainers[].resourcesPolicy.targetContainersNameRegex', '.*'],
      ['.spec.containers[].resourcesPolicy.targetContainersNameRegex', '.*'],
      ['.spec.injectionStrategy.revision.policy', 'Always'],
    ]);
    const enums = all.filter(([, node]) => 'enum' in node).map(([path, node]) => [path, node.enum]);
    expect(enums).toEqual([
      ['.spec.initContainers[].resourcesPolicy.targetContainersMode', ['sum', 'max']],
      ['.spec.containers[].resourcesPolicy.targetContainersMode', ['sum', 'max']],
      ['.spec.injectionStrategy.revision.policy', ['Always', 'Partial']],
    ]);
    expect(all.filter(([, node]) => 'required' in node).map(([path, node]) => [path, node.required])).toEqual([
      ['.spec.selector.matchExpressions[]', ['key', 'operator']],
      ['.spec.namespaceSelector.matchExpressions[]', ['key', 'operator']],
      ['.spec.initContainers[].resourcesPolicy', ['resourcesExpr', 'targetContainersMode']],
      ['.spec.initContainers[].transferEnv[].sourceContainerNameFrom.fieldRef', ['fieldPath']],
      ['.spec.containers[].resourcesPolicy', ['resourcesExpr', 'targetContainersMode']],
      ['.spec.containers[].transferEnv[].sourceContainerNameFrom.fieldRef', ['fieldPath']],
      ['.spec.updateStrategy.selector.matchExpressions[]', ['key', 'operator']],
      ['.spec.updateStrategy.priorityStrategy.weightPriority[]', ['weight', 'matchSelector']],
      ['.spec.updateStrategy.priorityStrategy.weightPriority[].matchSelector.matchExpressions[]', ['key', 'operator']],
      ['.spec.updateStrategy.priorityStrategy.orderPriority[]', ['orderedKey']],
      ['.spec.updateStrategy.scatterStrategy[]', ['key', 'value']],
    ]);
  });

  it('describes every field, for kubectl explain', () => {
    const undescribed = all.filter(([path, node]) => path !== '' && path !== '.metadata' && !/\[\]$|\{\}$/.test(path) && typeof node.description !== 'string').map(([path]) => path);
    expect(undescribed).toEqual([]);
    expect(prop(spec, 'containers').description).toMatch(/sidecar/i);
    expect(prop(prop(spec, 'containers').items as JsonObject, 'image').description).toMatch(/image/i);
  });

  describe.each(['containers', 'initContainers'])('spec.%s[] holds every field of OpenKruise\'s SidecarContainer (Go types up to the pinned server\'s Kubernetes)', (list) => {
    const item = prop(spec, list).items as JsonObject;
    /** The schema kinds a Go type's JSON may take. */
    const check = (type: GoType, schema: JsonObject, path: string): void => {
      switch (type.kind) {
        case 'string':
        case 'bool':
        case 'int32':
        case 'int64':
          expect([path, schema.type, schema.format ?? null]).toEqual([
            path,
            { string: 'string', bool: 'boolean', int32: 'integer', int64: 'integer' }[type.kind],
            { string: null, bool: null, int32: 'int32', int64: 'int64' }[type.kind],
          ]);
          return;
        case 'quantity':
          expect([path, schema['x-kubernetes-preserve-unknown-fields']]).toEqual([path, true]);
          return;
        case 'intOrString':
          expect([path, schema['x-kubernetes-int-or-string']]).toEqual([path, true]);
          return;
        case 'ptr':
          check(type.elem, schema, path);
          return;
        case 'slice':
          expect([path, schema.type]).toEqual([path, 'array']);
          check(type.elem, schema.items as JsonObject, `${path}[]`);
          return;
        case 'map':
          expect([path, schema.type]).toEqual([path, 'object']);
          check(type.elem, schema.additionalProperties as JsonObject, `${path}{}`);
          return;
        case 'struct':
          expect([path, schema.type]).toEqual([path, 'object']);
          // Fields newer than the pinned server are unknown to that server's pods too.
          for (const field of type.fields.filter((f) => (f.since ?? 0) <= serverMinor)) {
            const child = (schema.properties as Record<string, JsonObject> | undefined)?.[field.name];
            expect([`${path}.${field.name}`, child !== undefined]).toEqual([`${path}.${field.name}`, true]);
            if (child !== undefined) check(field.type, child, `${path}.${field.name}`);
          }
      }
    };
    it('with a matching type', () => {
      expect(serverMinor).toBeGreaterThanOrEqual(30);
      check(SIDECAR_CONTAINER, item, `.spec.${list}[]`);
    });
  });
});
