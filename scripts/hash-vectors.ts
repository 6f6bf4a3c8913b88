/**
 * Writes the golden SidecarSet hash vectors of OpenKruise v1.9.0, computed by
 * its own Go code (control-plane/tools/kruise-reference/hashvectors, built
 * here into a temporary directory and removed after):
 *
 *   npx node scripts/hash-vectors.ts
 *
 * - test/sidecarset/hash-kruise-1.9.vectors.json: SidecarSets generated with
 *   Kruise 1.9's fields (testkit/conformance/generator.ts sidecarSetArbOf('1.9'):
 *   resourcesPolicy, shareVolumeDevicePolicy, the custom version), every
 *   other one defaulted, plus a few written by hand (characters Go's JSON
 *   escapes, quantities it rewrites), each in v1alpha1 and as written in
 *   v1beta1, with the hashes Kruise's defaulting webhook writes on the set as
 *   sent and those its controller computes over the stored v1beta1 set.
 * - test/sidecarset/hash-kruise-1.8-1.9.vectors.json: the 1.8.2 vectors'
 *   sets gain their `kruise-1.9.0` hashes (the stored v1beta1 set's, which
 *   must equal the v1alpha1 webhook's: the script stops if they differ).
 *
 * Needs Go and the module cache of the reference (its go.sum pins v1.9.0,
 * which the Go checksum database lacks: nothing is fetched once the
 * reference has been built).
 */
import fc from 'fast-check';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOne } from '../control-plane/build.ts';
import type { JsonObject } from '../lib/kube/types.ts';
import { defaultSidecarSet } from '../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../lib/sidecarset/types.ts';
import { sidecarSetArbOf, writtenInBeta } from '../testkit/conformance/generator.ts';
import { KRUISE_REFERENCE_MODULE_DIR, kruiseReferenceVersion } from '../testkit/conformance/kruise-reference.ts';
import { startLineProcess, type LineProcess } from '../testkit/line-process.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const VECTORS_19 = join(projectRoot, 'test', 'sidecarset', 'hash-kruise-1.9.vectors.json');
const VECTORS_18_19 = join(projectRoot, 'test', 'sidecarset', 'hash-kruise-1.8-1.9.vectors.json');

/** The generator's seed and how many sets it draws. */
const SEED = 19;
const SETS = 60;

export interface Hashes {
  hash: string;
  withoutImage: string;
}
interface KruiseAnswer {
  asWritten?: Hashes;
  stored?: Hashes;
  error?: string;
}

/** Sets written by hand: what generated ones rarely hold. */
const HANDWRITTEN: SidecarSet[] = [
  {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'escapes', labels: { 'apps.kruise.io/sidecarset-custom-version': 'v<1>&2' } },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [
        {
          name: 'agent',
          image: 'registry.example.com/agent@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
          env: [{ name: 'HTML', value: '<b>&amp;</b>\u2028\u2029 é 😀' }],
          resources: { limits: { cpu: '0.5', memory: '1Gi' }, requests: { cpu: '250m', memory: '1e3' } },
          resourcesPolicy: { targetContainersMode: 'max', targetContainersNameRegex: '^app-.*$', resourcesExpr: { limits: { cpu: 'max(cpu*50%, 100m)', memory: 'min(memory, 2Gi) - 10Mi' } } },
          shareVolumeDevicePolicy: { type: 'disabled' },
        },
      ],
    },
  },
  {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'native-only' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      namespace: 'shop',
      containers: [],
      initContainers: [
        { name: 'init-a', image: 'busybox:1.36' },
        { name: 'proxy', image: 'envoy:1.30', restartPolicy: 'Always', resourcesPolicy: { targetContainersMode: 'sum', resourcesExpr: { requests: { cpu: 'cpu/2', memory: '128Mi' } } } },
      ],
    },
  },
];

/** The generated and handwritten v1alpha1 sets, every other generated one defaulted. */
function sets19(): SidecarSet[] {
  const generated = fc.sample(sidecarSetArbOf('1.9'), { seed: SEED, numRuns: SETS }).map((set, i) => (i % 2 === 1 ? defaultSidecarSet(set) : set));
  return [...generated, ...HANDWRITTEN, ...HANDWRITTEN.map(defaultSidecarSet)];
}

async function ask(kruise: LineProcess, set: JsonObject): Promise<Required<Omit<KruiseAnswer, 'error'>>> {
  const answer = (await kruise.ask({ set })) as KruiseAnswer;
  if (answer.error !== undefined || answer.asWritten === undefined || answer.stored === undefined) {
    throw new Error(`Kruise could not hash set ${JSON.stringify((set.metadata as JsonObject | undefined)?.name)}: ${answer.error ?? 'no hashes in its answer'}`);
  }
  return { asWritten: answer.asWritten, stored: answer.stored };
}

async function main(): Promise<void> {
  const version = await kruiseReferenceVersion('1.9');
  const dir = await mkdtemp(join(tmpdir(), 'hashvectors-'));
  try {
    const binary = join(dir, 'hashvectors');
    await buildOne(`Kruise ${version} hash vectors`, KRUISE_REFERENCE_MODULE_DIR, binary, '-s -w', './hashvectors');
    const kruise = startLineProcess(binary, { name: 'the Kruise hash vectors program' });
    try {
      const cases: JsonObject[] = [];
      for (const alpha of sets19()) {
        for (const set of [alpha as JsonObject, writtenInBeta(alpha)]) cases.push({ set, [`kruise-${version.slice(1)}`]: await ask(kruise, set) });
      }
      const count = (what: string) => cases.filter((c) => JSON.stringify(c.set).includes(what)).length;
      const about =
        `SidecarSets with OpenKruise 1.9's fields (testkit/conformance/generator.ts sidecarSetArbOf('1.9'), fast-check seed ${SEED}, ${SETS} sets, ` +
        `every other one defaulted, and ${HANDWRITTEN.length} written by hand, plain and defaulted), each in v1alpha1 and as written in v1beta1 ` +
        `(${count('"resourcesPolicy"')} cases with resourcesPolicy, ${count('"shareVolumeDevicePolicy"')} with shareVolumeDevicePolicy, ` +
        `${count('"customVersion"')} with spec.customVersion), and their hashes as OpenKruise ${version}'s code computes them: asWritten by its ` +
        `defaulting webhook on the set as sent (SetHashSidecarSet, SetHashSidecarSetV1beta1), stored by its controller over the set as stored ` +
        `(SidecarSetHashV1beta1 and SidecarSetHashWithoutImageV1beta1, a v1alpha1 set converted by Kruise's ConvertTo). ` +
        `Written by scripts/hash-vectors.ts (control-plane/tools/kruise-reference/hashvectors).`;
      await writeFile(VECTORS_19, `${JSON.stringify({ about, cases })}\n`);

      const old = JSON.parse(await readFile(VECTORS_18_19, 'utf8')) as { about: string; cases: JsonObject[] };
      for (const c of old.cases) {
        const answer = await ask(kruise, c.set as JsonObject);
        if (JSON.stringify(answer.asWritten) !== JSON.stringify(answer.stored)) {
          throw new Error(`Kruise ${version} hashes set ${JSON.stringify(((c.set as JsonObject).metadata as JsonObject).name)} differently as v1alpha1 and as stored v1beta1`);
        }
        c[`kruise-${version.slice(1)}`] = answer.stored;
      }
      old.about =
        `Generated v1alpha1 SidecarSets (testkit/conformance/generator.ts sidecarSetArb, fast-check seed 26, every third of 120, every other one defaulted) ` +
        `and their hashes as OpenKruise v1.8.2 computes them (sidecarcontrol.SidecarSetHash, SidecarSetHashWithoutImage), printed by a Go program importing its module, ` +
        `and as OpenKruise ${version} computes them over the set as stored (SidecarSetHashV1beta1 over the set converted by v1alpha1 ConvertTo; its v1alpha1 ` +
        `SidecarSetHash gives the same), written by scripts/hash-vectors.ts.`;
      await writeFile(VECTORS_18_19, `${JSON.stringify(old)}\n`);
      process.stdout.write(`wrote ${cases.length} cases to ${VECTORS_19} and ${old.cases.length} ${version} entries to ${VECTORS_18_19}\n`);
    } finally {
      await kruise.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
