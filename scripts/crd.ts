/**
 * `npm run crd`: writes infra/k8s/crd.yaml from lib/crd/sidecarset-crd.ts
 * and the core/v1 types in infra/k8s/openapi/core-v1.json.
 *
 *   npm run crd                 regenerate infra/k8s/crd.yaml: v1alpha1 and v1beta1 (stored), as OpenKruise 1.9's,
 *                               converted by the webhook whose URL `npm run manifests` (or npm start) renders in
 *   npm run crd -- --v1alpha1-only [--out FILE]
 *                               the CRD serving v1alpha1 alone, no conversion (to stdout, or FILE)
 *   npm run crd -- --check      exit 1 if infra/k8s/crd.yaml is not what would be generated
 *   npm run crd -- --refresh    first re-read the types from the pinned kube-apiserver
 *                               (starts the test control plane; needs Go, see docs/DEVELOPMENT.md)
 *   npm run crd -- --v1beta1 --conversion-url https://... [--ca-bundle ca.pem] [--out FILE]
 *   npm run crd -- --v1beta1 --conversion-service NAMESPACE/NAME[:PORT][/PATH] [--ca-bundle ca.pem] [--out FILE]
 *                               the CRD serving v1alpha1 and v1beta1 (stored), as OpenKruise 1.9's,
 *                               converted by the webhook given (to stdout, or FILE)
 */
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OpenApiSchemaError } from '../lib/crd/openapi-structural.ts';
import { formatOpenApiSubset, openApiSubset, parseOpenApiSubset, type OpenApiSubset } from '../lib/crd/openapi-subset.ts';
import { renderCrdYaml } from '../lib/crd/render.ts';
import { conversionClientConfigError, DEFAULT_CRD_VERSIONS, EMBEDDED_TYPES, sidecarSetCrd, type ConversionClientConfig, type ConversionService, type CrdVersions } from '../lib/crd/sidecarset-crd.ts';
import type { ControlPlane } from '../control-plane/harness.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const crdFile = join(projectRoot, 'infra', 'k8s', 'crd.yaml');
export const openApiFile = join(projectRoot, 'infra', 'k8s', 'openapi', 'core-v1.json');
/** The OpenAPI v3 document holding core/v1 and the meta/v1 types core/v1 uses (LabelSelector, ObjectMeta). */
const DOCUMENT = 'api/v1';

const usage = `usage: npm run crd -- [--check | --refresh]
       npm run crd -- --v1beta1 (--conversion-url URL | --conversion-service NS/NAME[:PORT][/PATH]) [--ca-bundle FILE] [--out FILE]
       npm run crd -- --v1alpha1-only [--out FILE]
  (no option)  write infra/k8s/crd.yaml from infra/k8s/openapi/core-v1.json: v1alpha1 and v1beta1 (stored), converted
               by the webhook at a placeholder URL that npm run manifests replaces with the deployment's
  --check      exit 1 if infra/k8s/crd.yaml differs from what would be written
  --refresh    read the types from the pinned kube-apiserver into infra/k8s/openapi/core-v1.json first
  --v1beta1    the CRD serving v1alpha1 and v1beta1 (stored), converted by the webhook at
               --conversion-url (https) or --conversion-service, trusting the PEM certificates
               in --ca-bundle; written to --out FILE, or to stdout
  --v1alpha1-only
               the CRD serving v1alpha1 alone, stored, no conversion: for a cluster that cannot run the conversion
               webhook and holds no v1beta1 objects (Kruise 1.8's shape); written to --out FILE, or to stdout
`;

/** The CRD file's text for these types (infra/k8s/crd.yaml's two versions unless `versions` says otherwise). */
export function generateCrd(subset: OpenApiSubset, versions: CrdVersions = DEFAULT_CRD_VERSIONS): string {
  return renderCrdYaml(sidecarSetCrd(subset.schemas, versions), subset.server);
}

/** `NS/NAME[:PORT][/PATH]` as a service reference, or the problem with it. */
export function parseConversionService(text: string): ConversionService | string {
  const match = /^([^/:\s]+)\/([^/:\s]+)(?::(\d{1,5}))?(\/\S*)?$/.exec(text);
  if (match === null) return `--conversion-service must be NAMESPACE/NAME[:PORT][/PATH], got ${JSON.stringify(text)}`;
  const [, namespace = '', name = '', port, path] = match;
  return { namespace, name, ...(port === undefined ? {} : { port: Number(port) }), ...(path === undefined ? {} : { path }) };
}

const FLAGS = ['--check', '--refresh', '--help', '-h', '--v1beta1', '--v1alpha1-only'];
const VALUED = ['--conversion-url', '--conversion-service', '--ca-bundle', '--out'];

interface Options {
  flags: Set<string>;
  values: Map<string, string>;
}

/** The options, or the problem with them. */
function parseOptions(argv: readonly string[]): Options | string {
  const flags = new Set<string>();
  const values = new Map<string, string>();
  const unknown: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (FLAGS.includes(arg)) flags.add(arg);
    else if (VALUED.includes(arg)) {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) return `${arg} needs a value`;
      if (values.has(arg)) return `${arg} is given twice`;
      values.set(arg, value);
      i++;
    } else unknown.push(arg);
  }
  if (unknown.length > 0) return `unknown option ${unknown.join(' ')}`;
  if (flags.has('--check') && flags.has('--refresh')) return '--check and --refresh cannot be combined';
  if (flags.has('--v1alpha1-only')) {
    const others = [...[...flags].filter((f) => f !== '--v1alpha1-only'), ...[...values.keys()].filter((name) => name !== '--out')];
    if (others.length > 0) return `--v1alpha1-only takes only --out, not ${others.join(', ')}`;
    return { flags, values };
  }
  const twoVersionOptions = VALUED.filter((name) => values.has(name));
  if (!flags.has('--v1beta1') && twoVersionOptions.length > 0) return `${twoVersionOptions.join(', ')} only go with --v1beta1`;
  if (flags.has('--v1beta1')) {
    if (flags.has('--check')) return '--v1beta1 cannot be combined with --check (infra/k8s/crd.yaml carries the placeholder conversion URL)';
    if (values.has('--conversion-url') === values.has('--conversion-service')) return '--v1beta1 needs exactly one of --conversion-url and --conversion-service';
  }
  return { flags, values };
}

async function conversionConfig(values: Map<string, string>): Promise<ConversionClientConfig | string> {
  const caFile = values.get('--ca-bundle');
  let caBundle: string | undefined;
  if (caFile !== undefined) {
    const pem = await readFile(caFile, 'utf8').catch((error: unknown) => `--ca-bundle ${caFile}: ${(error as Error).message}`);
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) return pem.startsWith('--ca-bundle') ? pem : `--ca-bundle ${caFile} holds no PEM certificate`;
    caBundle = Buffer.from(pem).toString('base64');
  }
  const url = values.get('--conversion-url');
  let config: ConversionClientConfig;
  if (url !== undefined) config = { url };
  else {
    const service = parseConversionService(values.get('--conversion-service') ?? '');
    if (typeof service === 'string') return service;
    config = { service };
  }
  if (caBundle !== undefined) config.caBundle = caBundle;
  return conversionClientConfigError(config) ?? config;
}

export async function readOpenApiSubset(file = openApiFile): Promise<OpenApiSubset> {
  return parseOpenApiSubset(await readFile(file, 'utf8'), relative(projectRoot, file));
}

/** What the running API server serves of the types the CRD embeds. */
export async function fetchOpenApiSubset(cp: ControlPlane): Promise<OpenApiSubset> {
  const get = async (path: string): Promise<unknown> => {
    const res = await cp.request('admin', 'GET', path);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.body.slice(0, 300)}`);
    return JSON.parse(res.body) as unknown;
  };
  const version = (await get('/version')) as { gitVersion?: unknown };
  if (typeof version.gitVersion !== 'string') throw new Error('GET /version: no gitVersion');
  const index = (await get('/openapi/v3')) as { paths?: Record<string, { serverRelativeURL?: unknown }> };
  const url = index.paths?.[DOCUMENT]?.serverRelativeURL;
  if (typeof url !== 'string') throw new Error(`GET /openapi/v3: the server lists no ${DOCUMENT} document`);
  return openApiSubset(await get(url), EMBEDDED_TYPES, version.gitVersion, DOCUMENT);
}

/** Where the script reads and writes; tests point it elsewhere. */
export interface CrdFiles {
  crd: string;
  openApi: string;
}

async function refresh(file: string): Promise<void> {
  // Loaded here so that generating and checking never build or start a control plane.
  const { startControlPlane } = await import('../control-plane/harness.ts');
  const cp = await startControlPlane();
  try {
    const subset = await fetchOpenApiSubset(cp);
    await writeFile(file, formatOpenApiSubset(subset));
    process.stdout.write(`wrote ${relative(projectRoot, file)}: ${Object.keys(subset.schemas).length} definitions from kube-apiserver ${subset.server}\n`);
  } finally {
    await cp.stop();
  }
}

/** Exit code: 0 done, 1 --check found a difference, 2 bad usage. */
export async function main(argv: readonly string[], files: CrdFiles = { crd: crdFile, openApi: openApiFile }): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(usage);
    return 0;
  }
  const options = parseOptions(argv);
  const conversion = typeof options === 'string' || !options.flags.has('--v1beta1') ? undefined : await conversionConfig(options.values);
  if (typeof options === 'string' || typeof conversion === 'string') {
    process.stderr.write(`${typeof options === 'string' ? options : (conversion as string)}\n${usage}`);
    return 2;
  }
  if (options.flags.has('--refresh')) await refresh(files.openApi);
  const versions: CrdVersions | undefined = conversion !== undefined ? { served: 'v1alpha1+v1beta1', conversion } : options.flags.has('--v1alpha1-only') ? { served: 'v1alpha1' } : undefined;
  if (versions !== undefined) {
    const rendered = generateCrd(await readOpenApiSubset(files.openApi), versions);
    const out = options.values.get('--out');
    if (out === undefined) process.stdout.write(rendered);
    else {
      await writeFile(out, rendered);
      process.stdout.write(`wrote ${out}: ${Buffer.byteLength(rendered)} bytes (${versions.served === 'v1alpha1' ? 'v1alpha1 alone' : 'v1alpha1 and v1beta1, v1beta1 stored'})\n`);
    }
    return 0;
  }
  const text = generateCrd(await readOpenApiSubset(files.openApi));
  const name = relative(projectRoot, files.crd);
  if (options.flags.has('--check')) {
    const current = await readFile(files.crd, 'utf8').catch(() => '');
    if (current === text) return 0;
    process.stderr.write(`${name} is not what lib/crd/sidecarset-crd.ts generates: run npm run crd and commit the result\n`);
    return 1;
  }
  await writeFile(files.crd, text);
  process.stdout.write(`wrote ${name}: ${Buffer.byteLength(text)} bytes\n`);
  return 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof OpenApiSchemaError || error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
