/**
 * invoke's offline refusal of undeclared SidecarSet fields says what the
 * real API server says to kubectl (fieldValidation=Strict) for the same
 * file, in both versions, and a set without them passes on to the webhook.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { waitForCrd } from '../../functions/server/local-stack.ts';
import { runCli } from '../../functions/invoke/cli.ts';
import { CRD_FILE } from '../../functions/invoke/strict-fields.ts';

const FIXTURE = 'test/invoke/fixtures/sidecarset-unknown-fields.yaml';

async function invoke(argv: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const code = await runCli(argv, { readFile: (path) => readFile(path, 'utf8'), readStdin: () => Promise.resolve(''), stdout: () => undefined, stderr: (text) => (stderr += text) });
  return { code, stderr };
}

describeWithControlPlane('undeclared SidecarSet fields: invoke offline and the API server agree', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startControlPlane();
    await cp.apply(await readFile(CRD_FILE, 'utf8'));
    await waitForCrd(cp, 'sidecarsets.apps.kruise.io');
  }, 5 * 60_000);
  afterAll(async () => {
    await cp.stop();
  });

  it.each(['v1alpha1', 'v1beta1'])('in %s: the same unknown fields, in the same words', async (version) => {
    const text = (await readFile(FIXTURE, 'utf8')).replace('apps.kruise.io/v1alpha1', `apps.kruise.io/${version}`);
    const server = await cp.request('admin', 'POST', `/apis/apps.kruise.io/${version}/sidecarsets?fieldValidation=Strict`, parse(text) as object);
    expect(server.status).toBe(400);
    const message = (JSON.parse(server.body) as { message: string }).message;
    const path = join(cp.dir, `set-${version}.yaml`);
    await writeFile(path, text);
    const offline = await invoke(['sidecarset-validate', '-f', path]);
    expect(offline).toEqual({ code: 2, stderr: `invoke: ${path}: the API server refuses it before any webhook (kubectl's strict field validation): ${message}\n` });
  });
});
