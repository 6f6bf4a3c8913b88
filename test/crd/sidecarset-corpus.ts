/**
 * Every SidecarSet the project ships or tests with, for the CRD's acceptance
 * tests: the examples, the golden cases (injection and reviews) and the
 * samples written after OpenKruise's documentation.
 */
import { internalSidecarSet } from '../../lib/conversion/internal-model.ts';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isObject } from '../../lib/kube/json.ts';
import { parseObjects } from '../../lib/kube/yaml-objects.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface CorpusEntry {
  /** Where it comes from, e.g. `test/golden/reviews/default-create.yaml#request.object`. */
  source: string;
  set: SidecarSet;
  /** False for the golden review that the validating webhook must deny. */
  valid: boolean;
  /**
   * Fields the set carries on purpose that no SidecarSet has (a golden review
   * proves the webhooks keep such keys), as the API server names them in its
   * warning; the CRD prunes them.
   */
  unknownFields: string[];
}

/** The corpus's deliberate unknown fields, by entry source. */
const DELIBERATELY_UNKNOWN: Readonly<Record<string, string[]>> = {
  'test/golden/reviews/default-create.yaml#request.object': ['spec.containers[0].x-future-field'],
};

/** SidecarSet objects anywhere inside a parsed file (reviews nest them under request.object, sidecarSets…). */
function findSets(value: unknown, where: string, out: { where: string; set: SidecarSet }[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      findSets(item, `${where}[${i}]`, out);
    });
  } else if (isObject(value)) {
    if (value.kind === 'SidecarSet' && value.apiVersion === 'apps.kruise.io/v1alpha1') {
      out.push({ where, set: value });
      return;
    }
    // A v1beta1 set (the examples are written in v1beta1) joins the corpus as its v1alpha1 conversion.
    if (value.kind === 'SidecarSet' && value.apiVersion === 'apps.kruise.io/v1beta1') {
      out.push({ where, set: internalSidecarSet(value) });
      return;
    }
    for (const [key, child] of Object.entries(value)) findSets(child, where === '' ? key : `${where}.${key}`, out);
  }
}

function fromFile(path: string, valid: boolean): CorpusEntry[] {
  const found: { where: string; set: SidecarSet }[] = [];
  const objects = parseObjects(readFileSync(path, 'utf8'), path);
  objects.forEach((object, i) => {
    findSets(object, objects.length > 1 ? `[${i}]` : '', found);
  });
  return found.map(({ where, set }) => {
    const source = `${relative(projectRoot, path)}${where === '' ? '' : `#${where}`}`;
    return { source, set, valid, unknownFields: DELIBERATELY_UNKNOWN[source] ?? [] };
  });
}

const yamlFiles = (dir: string): string[] =>
  readdirSync(join(projectRoot, dir))
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .map((name) => join(projectRoot, dir, name));

/** The YAML files of a directory and of its subdirectories (examples/rollout/, examples/hot-upgrade/), in name order. */
const yamlFilesBelow = (dir: string): string[] => [
  ...yamlFiles(dir),
  ...readdirSync(join(projectRoot, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .flatMap((name) => yamlFilesBelow(join(dir, name))),
];

export function sidecarSetCorpus(): CorpusEntry[] {
  const injectCases = readdirSync(join(projectRoot, 'test/golden/inject')).sort();
  return [
    ...yamlFilesBelow('examples').flatMap((file) => fromFile(file, true)),
    ...injectCases.flatMap((name) => fromFile(join(projectRoot, 'test/golden/inject', name, 'sidecarsets.yaml'), true)),
    ...yamlFiles('test/golden/reviews').flatMap((file) => fromFile(file, !file.endsWith('validate-invalid.yaml'))),
    ...fromFile(join(projectRoot, 'test/crd/kruise-samples.yaml'), true),
  ];
}
