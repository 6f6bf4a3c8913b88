/**
 * `npm run crd`: writes infra/k8s/crd.yaml from lib/crd/sidecarset-crd.ts
 * and the core/v1 types in infra/k8s/openapi/core-v1.json.
 *
 *   npm run crd                 regenerate infra/k8s/crd.yaml
 *   npm run crd -- --check      exit 1 if infra/k8s/crd.yaml is not what would be generated
 *   npm run crd -- --refresh    first re-read the types from the pinned kube-apiserver
 *                               (starts the test control plane; needs Go, see README)
 */
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OpenApiSchemaError } from '../lib/crd/openapi-structural.ts';
import { formatOpenApiSubset, openApiSubset, parseOpenApiSubset, type OpenApiSubset } from '../lib/crd/openapi-subset.ts';
import { renderCrdYaml } from '../lib/crd/render.ts';
import { EMBEDDED_TYPES, sidecarSetCrd } from '../lib/crd/sidecarset-crd.ts';
import type { ControlPlane } from '../control-plane/harness.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const crdFile = join(projectRoot, 'infra', 'k8s', 'crd.yaml');
export const openApiFile = join(projectRoot, 'infra', 'k8s', 'openapi', 'core-v1.json');
/** The OpenAPI v3 document holding core/v1 and the meta/v1 types core/v1 uses (LabelSelector, ObjectMeta). */
const DOCUMENT = 'api/v1';

const usage = `usage: npm run crd -- [--check | --refresh]
  (no option)  write infra/k8s/crd.yaml from infra/k8s/openapi/core-v1.json
  --check      exit 1 if infra/k8s/crd.yaml differs from what would be written
  --refresh    read the types from the pinned kube-apiserver into infra/k8s/openapi/core-v1.json first
`;

/** The CRD file's text for these types. */
export function generateCrd(subset: OpenApiSubset): string {
  return renderCrdYaml(sidecarSetCrd(subset.schemas), subset.server);
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
  const unknown = argv.filter((arg) => !['--check', '--refresh', '--help', '-h'].includes(arg));
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(usage);
    return 0;
  }
  if (unknown.length > 0 || (argv.includes('--check') && argv.includes('--refresh'))) {
    process.stderr.write(`${unknown.length > 0 ? `unknown option ${unknown.join(' ')}` : '--check and --refresh cannot be combined'}\n${usage}`);
    return 2;
  }
  if (argv.includes('--refresh')) await refresh(files.openApi);
  const text = generateCrd(await readOpenApiSubset(files.openApi));
  const name = relative(projectRoot, files.crd);
  if (argv.includes('--check')) {
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
