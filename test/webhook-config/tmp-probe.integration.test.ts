import { afterAll, beforeAll, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { deleteBatch, policyCases, preparePolicyCluster, runCase, storeBatch } from './injection-policy-differential.ts';

describeWithControlPlane('probe', () => {
  let cp: ControlPlane;
  const cases = policyCases(Number(process.env.PROBE_RUNS ?? 600), 20261207);
  beforeAll(async () => {
    cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await preparePolicyCluster(cp);
  }, 120_000);
  afterAll(async () => { await cp.stop(); });
  it('probes', async () => {
    const batch = cases.slice(0, Number(process.env.PROBE_N ?? 60));
    let t = Date.now();
    const stored = await storeBatch(cp, batch, 'p', 8);
    process.stdout.write(`stored ${stored.flat().length} sets in ${Date.now() - t} ms\n`);
    await new Promise((r) => setTimeout(r, 1500));
    const counts: Record<string, number> = {};
    for (const [i, c] of batch.entries()) {
      t = Date.now();
      const o = await runCase(cp, c, stored[i] ?? []);
      const k = typeof o === 'object' ? 'diff' : o;
      counts[k] = (counts[k] ?? 0) + 1;
      process.stdout.write(`case ${i} sets ${c.sets.length} inj ${c.injecting}/${c.policySets}: ${Date.now() - t} ms ${typeof o === 'object' ? o.difference.slice(0, 600) : o}\n`);
    }
    process.stdout.write(JSON.stringify(counts) + '\n');
    await deleteBatch(cp, 'p');
  }, 900_000);
});
