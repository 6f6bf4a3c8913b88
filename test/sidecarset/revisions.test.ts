import { describe, expect, it } from '@jest/globals';
import { earlierRevisionData, revisionData, revisionJsonText, withRawData } from '../../lib/sidecarset/revision-data.ts';
import { revisionHash, revisionName } from '../../lib/sidecarset/revision-name.ts';
import { currentRevisionName, foreignController, newRevision, setHistory, withOwnerApiVersion } from '../../lib/sidecarset/revisions.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { GO_ESCAPED, goReencoded, NON_ASCII, shellSet } from '../rollout/escape-fixtures.ts';
import { hashOf, OLD_IMAGE, rolloutSet, storedRevision, withoutImageOf, withSecret } from '../rollout/fixtures.ts';

/** rollout.md §2.2, exact bytes. */
const DATA_6_7 =
  '{"spec":{"$patch":"replace","containers":[{"command":["sleep","999d"],"image":"centos:6.7","imagePullPolicy":"IfNotPresent","name":"sidecar1","podInjectPolicy":"BeforeAppContainer","resources":{},"shareVolumePolicy":{"type":"disabled"},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","upgradeStrategy":{"upgradeType":"ColdUpgrade"},"volumeMounts":[{"mountPath":"/var/log","name":"log-volume"}]}],"imagePullSecrets":null,"initContainers":null,"patchPodMetadata":null,"volumes":[{"emptyDir":{},"name":"log-volume"}]}}';

describe('revision data and name (rollout.md §2.2)', () => {
  const set67 = rolloutSet({ image: OLD_IMAGE });
  const set68 = rolloutSet();

  it('the set hashes are the example ones', () => {
    expect(hashOf(set67)).toBe('4zbdc2xzc8w7c4x2c6984266bc9d7zf87x946v7xdfv988f6c6fc9b7dz47w8zd5');
    expect(withoutImageOf(set67)).toBe('wcv47954b7xv5w4fbw682bbf78cw2449448vbf4fvvwv77947bc7fcv7fw89f98x');
    expect(hashOf(set68)).toBe('88v5cd6b6bb8vwf45wfd54w62c9xb4wxv4v7cc4zf6xfv9xb9w96cbv8wb7z2vbw');
    expect(withoutImageOf(set68)).toBe(withoutImageOf(set67));
  });

  it('Data.Raw is byte for byte Kruise’s', () => {
    expect(revisionData(set67)).toBe(DATA_6_7);
  });

  it.each<[string, string, number, string]>([
    ['centos:6.7, collisionCount 0', OLD_IMAGE, 0, 'test-sidecarset-cf4bf7796'],
    ['centos:6.7, collisionCount 1', OLD_IMAGE, 1, 'test-sidecarset-cf4bf7797'],
    ['centos:6.8, collisionCount 0', 'centos:6.8', 0, 'test-sidecarset-78bb8d68cc'],
  ])('name for %s', (_n, image, collisions, name) => {
    expect(currentRevisionName(rolloutSet({ image }), collisions)).toBe(name);
  });

  it('FNV-1 (not FNV-1a) over the data then the decimal collision count', () => {
    // fnv.New32 over nothing is the offset basis 2166136261; SafeEncodeString maps
    // each digit's code point mod 27 into "bcdfghjklmnpqrstvwxz2456789".
    expect(revisionHash('')).toBe('65bb57b6b5');
    // One byte tells FNV-1 (multiply, then xor) from FNV-1a: 'a' gives 0x050c5d7e (FNV-1a: 0xe40c292c).
    expect(revisionHash('a')).toBe(String(0x050c5d7e).replace(/\d/g, (d) => 'bcdfghjklmnpqrstvwxz2456789'.charAt(d.charCodeAt(0) % 27)));
    expect(revisionHash(DATA_6_7, 0)).toBe('cf4bf7796');
  });

  it('a long set name is cut to 223 characters before the hash', () => {
    expect(revisionName('a'.repeat(250), 'h')).toBe(`${'a'.repeat(223)}-h`);
  });

  it('absent fields are null, present ones sorted and Go-escaped; selector and strategies are not recorded', () => {
    const set: SidecarSet = {
      ...set67,
      spec: {
        ...set67.spec,
        imagePullSecrets: [{ name: 'reg' }, {}],
        patchPodMetadata: [{ patchPolicy: 'Overwrite', annotations: { 'b<': 'x&y', a: '1' } }],
        selector: { matchLabels: { other: 'x' } },
      },
    };
    const data = revisionData(set);
    expect(data).toContain('"imagePullSecrets":[{"name":"reg"},{}]');
    expect(data).toContain('"patchPodMetadata":[{"annotations":{"a":"1","b\\u003c":"x\\u0026y"},"patchPolicy":"Overwrite"}]');
    expect(data).not.toContain('selector');
  });

  it('the ControllerRevision object carries the set’s labels and annotations, the name and hash labels, and a controlling owner', () => {
    const set: SidecarSet = { ...set67, metadata: { ...set67.metadata, labels: { team: 'a', 'apps.kruise.io/sidecarset-custom-version': 'v1' } } };
    expect(newRevision(set, 'kruise-system', 1, 0)).toEqual({
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name: 'test-sidecarset-cf4bf7796',
        namespace: 'kruise-system',
        labels: {
          team: 'a',
          'apps.kruise.io/sidecarset-custom-version': 'v1',
          'kruise.io/sidecarset-name': 'test-sidecarset',
          'controller.kubernetes.io/hash': 'cf4bf7796',
        },
        annotations: set67.metadata!.annotations,
        ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', name: 'test-sidecarset', uid: 'uid-1', controller: true, blockOwnerDeletion: true }],
      },
      data: JSON.parse(DATA_6_7),
      revision: 1,
    });
  });
});

describe('the set\'s history (ListControllerRevisions + SortControllerRevisions)', () => {
  it('history keeps revisions the set controls or that have no controller, sorted by revision, time, name', () => {
    const set = rolloutSet();
    const a = storedRevision(withSecret(1), 2);
    const b = { ...storedRevision(withSecret(2), 1), metadata: { ...storedRevision(withSecret(2), 1).metadata, ownerReferences: [] } };
    const foreign = { ...storedRevision(withSecret(3), 3), metadata: { ...storedRevision(withSecret(3), 3).metadata, ownerReferences: [{ uid: 'other', controller: true }] } };
    const otherSet = { ...storedRevision(withSecret(4), 0), metadata: { ...storedRevision(withSecret(4), 0).metadata, labels: { 'kruise.io/sidecarset-name': 'x' } } };
    expect(setHistory(set, [a, foreign, otherSet, b])).toEqual([b, a]);
  });
});

describe('the revision as written to the API server: data byte for byte as Go writes it', () => {
  const set = shellSet('shell:1');
  const revision = newRevision(set, 'kruise-system', 1, 0);
  const dataOf = (text: string) => text.slice(text.indexOf(',"data":') + ',"data":'.length, -1);

  it('escapes & < > U+2028 U+2029 as Go does (\\u0026 \\u003c \\u003e \\u2028 \\u2029) and leaves other text outside ASCII as it is', () => {
    const text = revisionJsonText(revision);
    const data = dataOf(text);
    expect(data).toBe(revisionData(set));
    for (const c of GO_ESCAPED) expect(data).not.toContain(c);
    for (const escape of ['\\u0026', '\\u003c', '\\u003e', '\\u2028', '\\u2029']) expect(data).toContain(escape);
    expect(data).toContain(NON_ASCII);
    expect(JSON.parse(text)).toEqual(revision);
  });

  it('is what the API server prints back after Go re-encodes it: a patch finds the same bytes', () => {
    const data = dataOf(revisionJsonText(revision));
    expect(goReencoded(data)).toBe(data);
  });

  it("data JSON.stringify wrote (this project's earlier form) is printed again exactly as stored, from the API server's Go re-encoding of it", () => {
    const earlier = JSON.stringify(revision.data);
    expect(goReencoded(earlier)).not.toBe(earlier);
    expect(earlierRevisionData({ data: JSON.parse(goReencoded(earlier)) })).toBe(earlier);
  });

  it('keeps the fields other than data as they are, data last, and writes data alone when there is nothing else', () => {
    expect(withRawData({ a: 1, data: { x: 1 }, b: 'c' }, '{"y":2}')).toBe('{"a":1,"b":"c","data":{"y":2}}');
    expect(withRawData({ data: null }, 'null')).toBe('{"data":null}');
  });

  it('a set without such characters keeps its revision name (rollout.md §2.2 example)', () => {
    expect(currentRevisionName(rolloutSet({ image: OLD_IMAGE }))).toBe('test-sidecarset-cf4bf7796');
    expect(dataOf(revisionJsonText(newRevision(rolloutSet({ image: OLD_IMAGE }), 'kruise-system', 1, 0)))).toBe(DATA_6_7);
  });
});

describe("the revision's owner: the SidecarSet in either version of its group", () => {
  const set: SidecarSet = { ...rolloutSet(), metadata: { ...rolloutSet().metadata, name: 'agent', uid: 'u-1' } };
  const revision = newRevision(set, 'kruise-system', 1, 0);
  const other = { apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'u-cm' };

  it('names the owner in the version written, and only the SidecarSet reference changes', () => {
    expect(revision.metadata?.ownerReferences).toEqual([{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', name: 'agent', uid: 'u-1', controller: true, blockOwnerDeletion: true }]);
    const beta = withOwnerApiVersion({ ...revision, metadata: { ...revision.metadata, ownerReferences: [...((revision.metadata?.ownerReferences as unknown[] | undefined) ?? []), other] } }, 'apps.kruise.io/v1beta1');
    expect(beta.metadata?.ownerReferences).toEqual([{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet', name: 'agent', uid: 'u-1', controller: true, blockOwnerDeletion: true }, other]);
    expect(beta.data).toBe(revision.data);
    // Already in that version: the same object.
    expect(withOwnerApiVersion(revision, 'apps.kruise.io/v1alpha1')).toBe(revision);
  });

  it.each<[string, unknown[], string | undefined]>([
    ['a v1alpha1 reference to the set (Kruise 1.8)', [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', name: 'agent', uid: 'u-1', controller: true }], undefined],
    ['a v1beta1 reference to the set (Kruise 1.9)', [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet', name: 'agent', uid: 'u-1', controller: true }], undefined],
    ['a reference to the set without a uid', [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet', name: 'agent', controller: true }], undefined],
    ['no controller (Kruise adopts such revisions)', [{ ...other, controller: false }], undefined],
    ['a reference to another set', [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet', name: 'other', uid: 'u-2', controller: true }], 'SidecarSet "other" (apps.kruise.io/v1beta1, uid u-2)'],
    ['a reference to an earlier set of that name', [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', name: 'agent', uid: 'u-0', controller: true }], 'SidecarSet "agent" (apps.kruise.io/v1alpha1, uid u-0)'],
    ['a reference to another group', [{ apiVersion: 'example.com/v1', kind: 'SidecarSet', name: 'agent', controller: true }], 'SidecarSet "agent" (example.com/v1)'],
  ])('knows the set owns a revision with %s', (_name, ownerReferences, foreign) => {
    expect(foreignController({ ...revision, metadata: { ...revision.metadata, ownerReferences } }, set)).toBe(foreign);
  });
});
