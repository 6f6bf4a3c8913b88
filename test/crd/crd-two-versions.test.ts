/**
 * The CRD rendered with both versions (`npm run crd -- --v1beta1 ...`), as
 * OpenKruise 1.9's: v1alpha1 and v1beta1 served, v1beta1 stored, the same
 * printer columns, v1beta1 without `namespace` and with `customVersion`, and
 * a Webhook conversion to the caller's URL or Service. The default render
 * (infra/k8s/crd.yaml is the two-version CRD with the placeholder URL: crd.test.ts).
 * On the API server: crd-two-versions.integration.test.ts.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseOpenApiSubset } from '../../lib/crd/openapi-subset.ts';
import { sidecarSetCrd, type ConversionClientConfig } from '../../lib/crd/sidecarset-crd.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { generateCrd, main, openApiFile, parseConversionService } from '../../scripts/crd.ts';

const subset = parseOpenApiSubset(readFileSync(openApiFile, 'utf8'), openApiFile);
const URL_CONFIG: ConversionClientConfig = { url: 'https://127.0.0.1:9443/convert' };
const twoVersions = (config: ConversionClientConfig = URL_CONFIG): JsonObject =>
  sidecarSetCrd(subset.schemas, { served: 'v1alpha1+v1beta1', conversion: config });
const versions = (crd: JsonObject): JsonObject[] => (crd.spec as JsonObject).versions as JsonObject[];
const specOf = (version: JsonObject): JsonObject =>
  ((((version.schema as JsonObject).openAPIV3Schema as JsonObject).properties as JsonObject).spec as JsonObject).properties as JsonObject;

describe('the two-version SidecarSet CRD', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('serves v1alpha1 and v1beta1 and stores v1beta1, as OpenKruise 1.9', () => {
    expect(versions(twoVersions()).map((v) => ({ name: v.name, served: v.served, storage: v.storage, subresources: v.subresources }))).toEqual([
      { name: 'v1alpha1', served: true, storage: false, subresources: { status: {} } },
      { name: 'v1beta1', served: true, storage: true, subresources: { status: {} } },
    ]);
  });

  it('gives both versions OpenKruise 1.9\'s printer columns, and the resourceVersion that pod-inject reads (shown by -o wide only)', () => {
    for (const version of versions(twoVersions())) {
      expect((version.additionalPrinterColumns as JsonObject[]).map((c) => [c.name, c.type, c.jsonPath, c.priority])).toEqual([
        ['MATCHED', 'integer', '.status.matchedPods', undefined],
        ['UPDATED', 'integer', '.status.updatedPods', undefined],
        ['READY', 'integer', '.status.readyPods', undefined],
        ['AGE', 'date', '.metadata.creationTimestamp', undefined],
        ['RESOURCEVERSION', 'string', '.metadata.resourceVersion', 1],
      ]);
    }
  });

  it('gives v1beta1 customVersion and no namespace; v1alpha1 keeps namespace and has no customVersion', () => {
    const [alpha, beta] = versions(twoVersions()) as [JsonObject, JsonObject];
    expect(specOf(beta).customVersion).toMatchObject({ type: 'string' });
    expect(specOf(beta).namespace).toBeUndefined();
    expect(specOf(beta).namespaceSelector).toMatchObject({ type: 'object' });
    expect(specOf(alpha).namespace).toMatchObject({ type: 'string' });
    expect(specOf(alpha).customVersion).toBeUndefined();
    // Everything else is the same schema in both versions.
    const rest = (spec: JsonObject) => Object.fromEntries(Object.entries(spec).filter(([k]) => !['namespace', 'namespaceSelector', 'customVersion'].includes(k)));
    expect(rest(specOf(beta))).toEqual(rest(specOf(alpha)));
  });

  it('v1alpha1 of the two-version CRD is the schema of today\'s v1alpha1-only CRD', () => {
    const alone = versions(sidecarSetCrd(subset.schemas))[0] as JsonObject;
    expect({ ...versions(twoVersions())[0], storage: true }).toEqual(alone);
    expect((sidecarSetCrd(subset.schemas).spec as JsonObject).conversion).toBeUndefined();
  });

  it('converts with a Webhook at the caller\'s URL or Service, ConversionReview v1 only', () => {
    expect((twoVersions().spec as JsonObject).conversion).toEqual({
      strategy: 'Webhook',
      webhook: { clientConfig: { url: 'https://127.0.0.1:9443/convert' }, conversionReviewVersions: ['v1'] },
    });
    const service = twoVersions({ service: { namespace: 'kruise-system', name: 'convert', path: '/convert', port: 8443 }, caBundle: 'QUJD' });
    expect((service.spec as JsonObject).conversion).toEqual({
      strategy: 'Webhook',
      webhook: {
        clientConfig: { service: { namespace: 'kruise-system', name: 'convert', path: '/convert', port: 8443 }, caBundle: 'QUJD' },
        conversionReviewVersions: ['v1'],
      },
    });
  });

  it.each([
    [{ url: 'http://127.0.0.1/convert' }, 'must use https'],
    [{ url: 'not a url' }, 'is not a URL'],
    [{ url: 'https://127.0.0.1/convert?x=1' }, 'must not have a query'],
    [{ url: 'https://127.0.0.1/convert#x' }, 'must not have a fragment'],
    [{ url: 'https://u:p@127.0.0.1/convert' }, 'must not hold a user'],
    [{ service: { namespace: '', name: 'x' } }, 'needs a namespace and a name'],
    [{ service: { namespace: 'a', name: 'x', path: 'convert' } }, 'path must start with "/"'],
    [{ service: { namespace: 'a', name: 'x', port: 70000 } }, 'port must be 1 to 65535'],
    [{ url: 'https://127.0.0.1/convert', caBundle: '-----BEGIN' }, 'caBundle must be base64'],
  ] as [ConversionClientConfig, string][])('refuses a client config the API server would refuse: %j', (config, message) => {
    expect(() => twoVersions(config)).toThrow(message);
  });

  it('npm run crd -- --v1beta1 writes the two-version CRD to --out, with a CA bundle from a PEM file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crd-two-'));
    jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
      await writeFile(join(dir, 'ca.pem'), pem);
      const out = join(dir, 'crd.yaml');
      expect(await main(['--v1beta1', '--conversion-service', 'kruise-system/convert:8443/convert', '--ca-bundle', join(dir, 'ca.pem'), '--out', out])).toBe(0);
      const text = await readFile(out, 'utf8');
      const config: ConversionClientConfig = { service: { namespace: 'kruise-system', name: 'convert', port: 8443, path: '/convert' }, caBundle: Buffer.from(pem).toString('base64') };
      expect(text).toBe(generateCrd(subset, { served: 'v1alpha1+v1beta1', conversion: config }));
      expect(text).toContain('apps.kruise.io/v1alpha1 and v1beta1 (stored)');
      expect(parse(text)).toEqual(twoVersions(config));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [['--v1beta1'], 'exactly one of --conversion-url and --conversion-service'],
    [['--v1beta1', '--conversion-url', 'https://a/x', '--conversion-service', 'a/b'], 'exactly one of'],
    [['--conversion-url', 'https://a/x'], 'only go with --v1beta1'],
    [['--v1beta1', '--check', '--conversion-url', 'https://a/x'], 'cannot be combined with --check'],
    [['--v1beta1', '--conversion-url'], '--conversion-url needs a value'],
    [['--v1beta1', '--conversion-url', 'http://a/x'], 'must use https'],
    [['--v1beta1', '--conversion-service', 'justaname'], 'NAMESPACE/NAME[:PORT][/PATH]'],
    [['--v1beta1', '--conversion-url', 'https://a/x', '--ca-bundle', '/nonexistent/ca.pem'], '--ca-bundle /nonexistent/ca.pem'],
  ])('npm run crd %j exits 2 naming the problem', async (argv, message) => {
    const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(await main(argv)).toBe(2);
    expect(String(err.mock.calls[0]?.[0])).toContain(message);
  });

  it('reads NAMESPACE/NAME[:PORT][/PATH]', () => {
    expect(parseConversionService('ns/svc')).toEqual({ namespace: 'ns', name: 'svc' });
    expect(parseConversionService('ns/svc:443/a/b')).toEqual({ namespace: 'ns', name: 'svc', port: 443, path: '/a/b' });
    expect(parseConversionService('ns/svc/convert')).toEqual({ namespace: 'ns', name: 'svc', path: '/convert' });
  });
});
