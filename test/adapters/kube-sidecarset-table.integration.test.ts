/**
 * pod-inject's warm reads on a real kube-apiserver with this project's CRD:
 * which sets changed is told by a Table of their resourceVersions
 * (kube-sidecarset-table.ts), so that what a warm review reads does not grow
 * with the sets' labels, annotations and managedFields, while every review
 * still sees every set stored before it began.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { crdPath, waitForCrd, waitForFunctionsAccess } from '../../functions/server/local-stack.ts';
import { kubeClient, settingsConnection, type KubeClient } from '../../lib/adapters/kube-request.ts';
import { discoveredSidecarSetVersion } from '../../lib/adapters/kube-sidecarsets-version.ts';
import { kubeClusterReader, kubeSidecarSetSource, type ClusterReader } from '../../lib/adapters/kube-sources.ts';
import { RESOURCE_VERSION_COLUMN } from '../../lib/crd/sidecarset-crd.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { countingClient } from '../../testkit/counting-client.ts';

const PATH = '/apis/apps.kruise.io/v1alpha1/sidecarsets';

/** `count` labels of about 90 bytes each (key and value), as heavy as a tenant may make a set's metadata. */
function heavyLabels(count: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`example.com/heavy-label-${String(i).padStart(5, '0')}`, 'v'.repeat(60)]));
}

const setNamed = (name: string, image = 'agent:1', labels: Record<string, string> = {}) => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name, labels },
  spec: { selector: { matchLabels: { app: name } }, containers: [{ name: 'agent', image }] },
});

const versionsOf = (sets: readonly SidecarSet[]) => sets.map((set) => [set.metadata?.name, set.metadata?.resourceVersion]);

describeWithControlPlane('the SidecarSets as a Table of resourceVersions, on a real kube-apiserver with the project CRD', () => {
  let cp: ControlPlane | undefined;
  const clients: KubeClient[] = [];
  const running = (): ControlPlane => {
    if (cp === undefined) throw new Error('the control plane did not start');
    return cp;
  };

  beforeAll(async () => {
    cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await cp.apply(await readFile(crdPath, 'utf8'));
    await waitForCrd(cp, 'sidecarsets.apps.kruise.io');
    await waitForFunctionsAccess(cp);
  }, 35 * 60_000);

  afterAll(async () => {
    for (const client of clients) client.close();
    await cp?.stop();
  }, 5 * 60_000);

  /** A source as pod-inject composes it (the stored version, found by discovery), its answers counted; `table: false` is the source before the Table. */
  function counted(options: { table: boolean } = { table: true }) {
    const control = running();
    const inner = kubeClient(settingsConnection({ server: control.url, ca: control.caCert, token: () => control.functionsToken }), { retryDelaysMs: [] });
    clients.push(inner);
    const counting = countingClient(inner);
    const reader = kubeClusterReader(counting.client, discoveredSidecarSetVersion(counting.client));
    const used: ClusterReader = options.table ? reader : { ...reader, listSidecarSetTable: undefined };
    return { ...counting, source: kubeSidecarSetSource(used) };
  }

  async function request(method: string, path: string, body?: unknown, contentType?: string): Promise<void> {
    const res = await running().request('admin', method, path, body, contentType);
    if (res.status < 200 || res.status > 299) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 300)}`);
  }

  /** The sets' names and resourceVersions as stored now, read as the admin. */
  async function stored(): Promise<(string | undefined)[][]> {
    let res = await running().request('admin', 'GET', PATH);
    // Right after the CRD changed, the API server answers 429 or 503 while it rebuilds the resource's storage.
    for (let i = 0; res.status !== 200 && i < 100; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      res = await running().request('admin', 'GET', PATH);
    }
    return (JSON.parse(res.body) as { items: SidecarSet[] }).items.map((set) => [set.metadata?.name, set.metadata?.resourceVersion]);
  }

  /** One review's read after `change` returned: what it asked for, and whether it equals the sets as stored. */
  async function review(reads: ReturnType<typeof counted>, change: () => Promise<unknown> = () => Promise.resolve()) {
    await change();
    reads.seen.length = 0;
    const sets = await reads.source.list();
    expect(versionsOf(sets)).toEqual(await stored());
    return { sets, asked: reads.seen.map((entry) => entry.what), bytes: reads.bytes() };
  }

  it('sees a set created just before the review, then a changed one and a deleted one, reading the Table and the changed sets only', async () => {
    const reads = counted();
    expect((await review(reads, () => request('POST', PATH, setNamed('fresh-a')))).asked).toEqual(['full list']);
    expect((await review(reads)).asked).toEqual(['table']);
    const created = await review(reads, () => request('POST', PATH, setNamed('fresh-b')));
    expect(created.asked).toEqual(['table', 'get fresh-b']);
    expect(created.sets.map((set) => set.metadata?.name)).toContain('fresh-b');
    const changed = await review(reads, () => request('PATCH', `${PATH}/fresh-a`, { spec: { containers: [{ name: 'agent', image: 'agent:2' }] } }, 'application/merge-patch+json'));
    expect(changed.asked).toEqual(['table', 'get fresh-a']);
    expect(changed.sets.find((set) => set.metadata?.name === 'fresh-a')?.spec?.containers?.[0]?.image).toBe('agent:2');
    const deleted = await review(reads, () => request('DELETE', `${PATH}/fresh-b`));
    expect(deleted.asked).toEqual(['table']);
    expect(deleted.sets.map((set) => set.metadata?.name)).not.toContain('fresh-b');
    // A status write changes the set's resourceVersion too: it is read again, never served as it was.
    const status = await review(reads, () => request('PATCH', `${PATH}/fresh-a/status`, { status: { matchedPods: 3 } }, 'application/merge-patch+json'));
    expect(status.asked).toEqual(['table', 'get fresh-a']);
    expect(status.sets.find((set) => set.metadata?.name === 'fresh-a')?.status?.matchedPods).toBe(3);
  });

  it("reads as many bytes per warm review whatever the sets' labels and managedFields weigh (the metadata list grows with them)", async () => {
    const names = Array.from({ length: 12 }, (_, i) => `heavy-${i}`);
    for (const name of names) await request('POST', PATH, setNamed(name));
    const reads = counted();
    const before = counted({ table: false });
    await review(reads);
    await review(before);
    const light = await review(reads);
    const lightBefore = await review(before);
    // About 200 kB of labels per set, and their managedFields entries.
    for (const name of names) await request('PATCH', `${PATH}/${name}`, { metadata: { labels: heavyLabels(2_000) } }, 'application/merge-patch+json');
    await review(reads);
    await review(before);
    const heavy = await review(reads);
    const heavyBefore = await review(before);
    expect(heavy.asked).toEqual(['table']);
    expect(heavyBefore.asked).toEqual(['metadata list']);
    // The rows are the same but for their resourceVersions' digits.
    expect(Math.abs(heavy.bytes - light.bytes)).toBeLessThan(names.length * 8);
    expect(heavyBefore.bytes - lightBefore.bytes).toBeGreaterThan(names.length * 200_000);
  });

  it("reads the metadata list instead when the CRD has no resourceVersion column (OpenKruise's), with the same answers", async () => {
    const reads = counted();
    await review(reads, () => request('POST', PATH, setNamed('kruise-crd')));
    const crd = (parse(await readFile(crdPath, 'utf8'), { maxAliasCount: -1 }) as { spec: { versions: { additionalPrinterColumns: { name: string }[] }[] } });
    for (const version of crd.spec.versions) version.additionalPrinterColumns = version.additionalPrinterColumns.filter((column) => column.name !== RESOURCE_VERSION_COLUMN.name);
    await running().apply(JSON.stringify(crd));
    await waitForCrd(running(), 'sidecarsets.apps.kruise.io');
    // The API server serves the new columns once the CRD's storage is rebuilt: until then a review may still read the Table.
    for (let i = 0; ; i++) {
      const { asked } = await review(reads);
      if (asked.includes('metadata list')) {
        expect(asked).toEqual(['table', 'metadata list']);
        break;
      }
      if (i > 100) throw new Error(`the Table still has the resourceVersion column: ${asked.join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const changed = await review(reads, () => request('PATCH', `${PATH}/kruise-crd`, { spec: { containers: [{ name: 'agent', image: 'agent:3' }] } }, 'application/merge-patch+json'));
    expect(changed.asked).toEqual(['table', 'metadata list', 'get kruise-crd']);
    await request('POST', PATH, setNamed('kruise-crd-2'));
    expect((await review(reads)).asked).toEqual(['table', 'metadata list', 'get kruise-crd-2']);
  });
});
