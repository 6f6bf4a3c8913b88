/**
 * `npm start`'s `/metrics` on the real stack: the webhooks called by a real
 * API server and the status loop feed one registry, read over HTTPS with
 * the webhook secret, as an operator would with curl.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import { waitForPod } from '../../testkit/cluster-pods.ts';

const startTimeoutMs = 5 * 60_000;

/** GET on the webhook server, as curl --cacert with a Bearer token would. */
function get(stack: LocalStack, path: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${stack.serverUrl}${path}`, { ca: stack.caPem, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Scrapes until `done` holds for the text, or fails after `timeoutMs` (huge: a busy 2-core machine). */
async function scrapeUntil(stack: LocalStack, done: (text: string) => boolean, timeoutMs = 60_000): Promise<string> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const { body } = await get(stack, '/metrics', stack.secret);
    if (done(body)) return body;
    if (performance.now() > deadline) throw new Error(`/metrics did not get there within ${timeoutMs} ms:\n${body}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describeWithControlPlane('/metrics of the local stack', () => {
  let stack: LocalStack | undefined;

  beforeAll(async () => {
    // The webhook path: the pod's injection is what pod-inject's metrics count.
    stack = await startLocalStack({ injection: 'webhook', statusSyncIntervalMs: 1000, statusSyncHeartbeatMs: 0 });
  }, startTimeoutMs);

  afterAll(async () => {
    await stack?.stop();
  }, startTimeoutMs);

  it('is refused without the secret, as any unknown path', async () => {
    expect(await get(stack!, '/metrics')).toEqual({ status: 404, body: '{"message":"Not Found"}' });
  });

  it("counts the reviews the API server sent and shows the status loop's figures for the set", async () => {
    const cp = stack!.cp;
    await cp.apply(await readFile('examples/sidecarset.yaml', 'utf8'));
    await cp.apply(await readFile('examples/pod.yaml', 'utf8'));
    expect((await waitForPod(cp, 'default', 'web', (p) => p !== undefined))?.spec?.containers.map((c) => c.name)).toContain('log-agent');
    const text = await scrapeUntil(stack!, (t) => /^sidecarset_matched_pods\{sidecarset="log-agent"\} 1$/m.test(t));
    // The SidecarSet went through defaulting and validation, the pod through injection.
    expect(text).toMatch(/^sidecarset_admission_reviews_total\{function="sidecarset-default",outcome="Patched"\} [1-9]/m);
    expect(text).toMatch(/^sidecarset_admission_reviews_total\{function="sidecarset-validate",outcome="Allowed"\} [1-9]/m);
    expect(text).toMatch(/^sidecarset_admission_reviews_total\{function="pod-inject",outcome="Patched"\} [1-9]/m);
    expect(text).toMatch(/^sidecarset_admission_sidecarset_list_duration_seconds_count\{function="pod-inject"\} [1-9]/m);
    expect(text).toMatch(/^sidecarset_resyncs_total [1-9]/m);
    expect(text).toMatch(/^sidecarset_status_api_requests_total [1-9]/m);
    expect(text).toMatch(/^sidecarset_updated_pods\{sidecarset="log-agent"\} 1$/m);
    expect(text).toMatch(/^sidecarset_pods_not_injected 0$/m);
  });
});
