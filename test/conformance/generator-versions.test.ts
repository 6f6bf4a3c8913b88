/**
 * The versions the conformance generator writes SidecarSets in: Kruise 1.9
 * serves v1alpha1 and v1beta1 (and stores v1beta1), so its cases send both,
 * in every class that carries a set; Kruise 1.8 knows v1alpha1 only. This
 * project's side reviews each object in its own version.
 */
import { describe, expect, it } from '@jest/globals';
import type { JsonObject } from '../../lib/kube/types.ts';
import { LABEL_CUSTOM_VERSION } from '../../lib/sidecarset/revisions.ts';
import { BAD_CUSTOM_VERSION, generateCases, type CaseClass, type ConformanceCase } from '../../testkit/conformance/generator.ts';
import { ourVerdict } from '../../testkit/conformance/ours.ts';

const ALPHA = 'apps.kruise.io/v1alpha1';
const BETA = 'apps.kruise.io/v1beta1';
const CLASSES_WITH_SETS: readonly CaseClass[] = ['default', 'validate', 'inject', 'status', 'rollout'];

/** Every SidecarSet a case carries: the admitted object and its old one, the set whose reconcile runs, the cluster's. */
function setsOf(c: ConformanceCase): JsonObject[] {
  switch (c.class) {
    case 'default':
      return [c.object, ...(c.oldObject === undefined ? [] : [c.oldObject])] as JsonObject[];
    case 'validate':
      return [c.object, ...(c.oldObject === undefined ? [] : [c.oldObject]), ...c.cluster.sidecarSets] as JsonObject[];
    case 'inject':
      return c.cluster.sidecarSets;
    case 'status':
    case 'rollout':
      return [c.sidecarSet, ...c.cluster.sidecarSets] as JsonObject[];
    case 'convert':
      return [];
  }
}

const spec = (set: JsonObject) => (set.spec ?? {}) as JsonObject;
const labels = (set: JsonObject) => ((set.metadata as JsonObject | undefined)?.labels ?? {}) as Record<string, string>;

const nineteen = generateCases(400, 1201, '1.9');

describe('the conformance generator', () => {
  it.each(CLASSES_WITH_SETS)('writes the SidecarSets of 1.9 %s cases in v1beta1 and in v1alpha1', (k) => {
    const versions = new Set(nineteen.filter((c) => c.class === k).flatMap(setsOf).map((s) => s.apiVersion));
    expect([...versions].sort()).toEqual([ALPHA, BETA]);
  });

  it("writes v1beta1 sets in v1beta1's own fields: no namespace, the custom version in the spec, namespaceSelector and resourcesPolicy among them", () => {
    const beta = nineteen.flatMap(setsOf).filter((s) => s.apiVersion === BETA);
    expect(beta.filter((s) => 'namespace' in spec(s) || LABEL_CUSTOM_VERSION in labels(s))).toEqual([]);
    expect(beta.some((s) => typeof spec(s).customVersion === 'string')).toBe(true);
    expect(beta.some((s) => JSON.stringify(spec(s).namespaceSelector ?? {}).includes('kubernetes.io/metadata.name'))).toBe(true);
    expect(beta.some((s) => ((spec(s).containers ?? []) as JsonObject[]).some((c) => c.resourcesPolicy !== undefined))).toBe(true);
  });

  it('sends an admission request its object and old object in one version, as the API server does', () => {
    const updates = nineteen.flatMap((c) => ((c.class === 'default' || c.class === 'validate') && c.oldObject !== undefined ? [c] : []));
    expect(updates.some((c) => c.object.apiVersion === BETA)).toBe(true);
    expect(updates.filter((c) => c.object.apiVersion !== c.oldObject?.apiVersion)).toEqual([]);
  });

  it('holds the set of a status or rollout case in the cluster in the version the case gives it', () => {
    const reconcileCases = nineteen.flatMap((c) => (c.class === 'status' || c.class === 'rollout' ? [c] : []));
    const mismatched = reconcileCases.filter((c) => {
      const stored = c.cluster.sidecarSets.find((s) => s.metadata?.name === c.sidecarSet.metadata?.name);
      return stored !== undefined && stored.apiVersion !== c.sidecarSet.apiVersion;
    });
    expect(mismatched).toEqual([]);
  });

  it('writes every set of a 1.8 case in v1alpha1, the only version Kruise 1.8 serves', () => {
    const versions = new Set(generateCases(200, 1201, '1.8').flatMap(setsOf).map((s) => s.apiVersion));
    expect([...versions]).toEqual([ALPHA]);
  });
});

describe("this project's side of a v1beta1 case", () => {
  it('reviews a v1beta1 object as v1beta1, so that the rules of that version apply (a customVersion no label may hold)', async () => {
    const [c] = nineteen.filter((k) => k.class === 'validate' && spec(k.object as JsonObject).customVersion === BAD_CUSTOM_VERSION);
    expect(c).toBeDefined();
    const verdict = await ourVerdict(c as ConformanceCase);
    expect(verdict.kind).toBe('denied');
    expect((verdict as { message: string }).message).toContain(`spec.customVersion: Invalid value: "${BAD_CUSTOM_VERSION}"`);
  });
});
