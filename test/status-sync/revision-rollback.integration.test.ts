/**
 * Rolling a SidecarSet back on a real kube-apiserver when its sidecar holds
 * what Go's encoding/json escapes (`&`, `<`, `>`, U+2028, U+2029) and text
 * outside ASCII, in command, args and env (issue 23 item 1). A revision's
 * `data` is immutable and kept as the bytes it was created with, and the
 * renumbering that a rollback is goes through a patch, which makes the API
 * server re-encode the object with Go first: unless the bytes were Go's to
 * begin with, it refuses (422 "data: Invalid value … field is immutable").
 *
 * The stored bytes are read as the API server keeps them, through its
 * protobuf encoding (its JSON would print them Go-escaped whatever they are).
 * A failed write is recorded as a Warning Event on the SidecarSet, through the
 * real event sink.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { request as httpsRequest } from 'node:https';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { kubeRevisionStore } from '../../lib/adapters/kube-revisions.ts';
import { kubeEventSink } from '../../lib/adapters/kube-events.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { memoryNamespaceSource } from '../../lib/adapters/memory.ts';
import { memoryPods } from '../../lib/adapters/memory-rollout.ts';
import { memoryPodEventSink, memoryStatusWriter } from '../../lib/adapters/memory-status-sync.ts';
import { revisionData, withRawData } from '../../lib/sidecarset/revision-data.ts';
import { currentRevisionName, LABEL_CUSTOM_VERSION, newRevision } from '../../lib/sidecarset/revisions.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { REVISION_WRITE_FAILED } from '../../lib/status-sync/revision-failure.ts';
import { registerRevision } from '../../lib/status-sync/revision-register.ts';
import { rolloutStateEvents } from '../../lib/status-sync/rollout-state.ts';
import { reconcileSet } from '../../lib/status-sync/set-reconcile.ts';
import { shellSet } from '../rollout/escape-fixtures.ts';

const REVISIONS = 'kruise-system';

/** Protobuf fields of one message: number → the last value (length-delimited as bytes, varints as numbers). */
function protoFields(bytes: Buffer): Map<number, Buffer | number> {
  const fields = new Map<number, Buffer | number>();
  let at = 0;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = bytes[at++] ?? 0;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (at < bytes.length) {
    const tag = varint();
    const wire = tag % 8;
    const field = Math.floor(tag / 8);
    if (wire === 0) fields.set(field, varint());
    else if (wire === 2) {
      const length = varint();
      fields.set(field, bytes.subarray(at, at + length));
      at += length;
    } else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else throw new Error(`protobuf wire type ${wire} not expected`);
  }
  return fields;
}

describeWithControlPlane('rolling back a set whose sidecar holds & < > U+2028 U+2029 and non-ASCII text, on a real kube-apiserver', () => {
  let controlPlane: ControlPlane | undefined;
  const cp = (): ControlPlane => {
    if (controlPlane === undefined) throw new Error('the control plane did not start');
    return controlPlane;
  };
  const store = () => kubeRevisionStore(kubeConfigClient(parseKubeConfig(cp().kubeconfig('functions'), 'test')), REVISIONS);

  /** The revision's `data` exactly as stored: ControllerRevision.data (field 2) → RawExtension.raw (field 1), from the protobuf envelope. */
  function storedData(name: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        `${cp().url}/apis/apps/v1/namespaces/${REVISIONS}/controllerrevisions/${name}`,
        { ca: cp().caCert, headers: { Authorization: `Bearer ${cp().adminToken}`, Accept: 'application/vnd.kubernetes.protobuf' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const body = Buffer.concat(chunks);
            if (res.statusCode !== 200 || body.subarray(0, 4).toString('latin1') !== 'k8s\0') {
              reject(new Error(`GET ${name} as protobuf: ${res.statusCode ?? 0} ${body.toString('utf8').slice(0, 300)}`));
              return;
            }
            const unknown = protoFields(body.subarray(4));
            const revision = protoFields(unknown.get(2) as Buffer);
            resolve((protoFields(revision.get(2) as Buffer).get(1) as Buffer).toString('utf8'));
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  const register = async (set: SidecarSet) => registerRevision(set, await store().list(set.metadata?.name ?? ''), store());
  const numberOf = async (name: string) => ((await store().get(name)))?.revision;

  beforeAll(async () => {
    controlPlane = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    for (const deadline = Date.now() + 30_000; ; ) {
      const res = await controlPlane.request('functions', 'GET', `/apis/apps/v1/namespaces/${REVISIONS}/controllerrevisions?limit=1`);
      if (res.status === 200) break;
      if (Date.now() > deadline) throw new Error(`the functions identity still cannot list revisions: ${res.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 30 * 60_000);

  afterAll(async () => {
    await controlPlane?.stop();
  });

  it('rolls forward, back and forward again, each revision renumbered in place, its data stored byte for byte as Go writes it', async () => {
    const v1 = shellSet('shell:1');
    const v2 = shellSet('shell:2');
    const first = await register(v1);
    const second = await register(v2);
    expect([first.latestRevision, second.latestRevision]).toEqual([currentRevisionName(v1), currentRevisionName(v2)]);
    // Back: revision 1 becomes 3 (a JSON Patch of `revision`, which the API server re-encodes the data for).
    const back = await register(v1);
    expect(back).toMatchObject({ latestRevision: first.latestRevision, writes: 1 });
    expect(await numberOf(first.latestRevision)).toBe(3);
    // Forward again: revision 2 becomes 4.
    const again = await register(v2);
    expect(again).toMatchObject({ latestRevision: second.latestRevision, writes: 1 });
    expect(await numberOf(second.latestRevision)).toBe(4);
    expect(await storedData(first.latestRevision)).toBe(revisionData(v1));
    expect(await storedData(second.latestRevision)).toBe(revisionData(v2));
    expect(revisionData(v1)).toContain('echo a \\u0026\\u0026 echo b \\u003e /tmp/x; cat \\u003c /tmp/x');
    expect(revisionData(v1)).toContain('--sep=\\u2028');
    expect(revisionData(v1)).toContain('héllo wörld 日本語 🚀');
  });

  it('moves the custom-version label onto such a revision (a merge patch, re-encoded the same way)', async () => {
    const set = shellSet('shell:label', 'labelled');
    set.metadata = { ...set.metadata, labels: { [LABEL_CUSTOM_VERSION]: 'v1' } };
    const created = await register(set);
    await store().patchLabels(created.latestRevision, { [LABEL_CUSTOM_VERSION]: 'v2' });
    expect((await store().get(created.latestRevision))?.metadata?.labels?.[LABEL_CUSTOM_VERSION]).toBe('v2');
  });

  it('renumbers and labels a revision stored with those characters raw (as this project wrote them before), keeping its bytes', async () => {
    const old = shellSet('shell:old', 'earlier');
    const newer = shellSet('shell:newer', 'earlier');
    const written = newRevision(old, REVISIONS, 1, 0);
    const rawData = JSON.stringify(written.data);
    const res = await cp().request('admin', 'POST', `/apis/apps/v1/namespaces/${REVISIONS}/controllerrevisions`, withRawData(written, rawData));
    expect(res.status).toBe(201);
    expect(await storedData(currentRevisionName(old))).toBe(rawData);
    // What failed before: any patch of it is refused as a change of its data.
    const patched = await cp().request('admin', 'PATCH', `/apis/apps/v1/namespaces/${REVISIONS}/controllerrevisions/${currentRevisionName(old)}`, [{ op: 'replace', path: '/revision', value: 9 }], 'application/json-patch+json');
    expect(patched.status).toBe(422);
    expect(patched.body).toContain('field is immutable');

    await register(newer);
    const back = await register(old);
    expect(back.latestRevision).toBe(currentRevisionName(old));
    expect(await numberOf(back.latestRevision)).toBe(3);
    await store().patchLabels(back.latestRevision, { [LABEL_CUSTOM_VERSION]: 'old' });
    expect((await store().get(back.latestRevision))?.metadata?.labels?.[LABEL_CUSTOM_VERSION]).toBe('old');
    expect(await storedData(back.latestRevision)).toBe(rawData);
  });

  it('tells a revision write the API server refuses: a Warning Event on the SidecarSet naming the revision, the whole reason in the reconcile error', async () => {
    // The functions identity may write revisions in kruise-system only: here the refusal is the API server's own 403.
    const kc = kubeConfigClient(parseKubeConfig(cp().kubeconfig('functions'), 'test'));
    const set = shellSet('shell:refused', 'refused');
    set.metadata = { ...set.metadata, resourceVersion: '1' };
    const pods = memoryPods([]);
    const result = await reconcileSet(set, {
      statuses: memoryStatusWriter([set]),
      events: kubeEventSink(kubeConfigClient(parseKubeConfig(cp().kubeconfig('admin'), 'admin'))),
      namespaces: memoryNamespaceSource([]),
      rollout: {
        revisions: kubeRevisionStore(kc, 'elsewhere'),
        setPods: pods.source,
        pods: pods.writer,
        podEvents: memoryPodEventSink(),
        clock: { now: () => new Date() },
        states: rolloutStateEvents(),
      },
      // Listed already (none): the reconcile goes straight to the create.
    }, {}, []);
    expect(result.errors).toEqual([
      { sidecarSet: 'refused', operation: 'register the revision', message: expect.stringMatching(/^ControllerRevision elsewhere\/refused-\w+ could not be created: the API server answered 403: .*forbidden/) },
    ]);
    const events = await cp().request('admin', 'GET', `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(`reason=${REVISION_WRITE_FAILED}`)}`);
    const items = (JSON.parse(events.body) as { items: { type: string; involvedObject: { kind: string; name: string }; message: string }[] }).items;
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ type: 'Warning', involvedObject: { kind: 'SidecarSet', name: 'refused' } });
    expect(items[0]?.message).toMatch(new RegExp(`^ControllerRevision elsewhere/${currentRevisionName(set)} could not be created, so SidecarSet refused updates no pod`));
    expect(items[0]?.message).toContain('is forbidden: User "');
  });
});
