/**
 * The setup the scenario suites share (Kruise's e2e scenarios, the day-2
 * journey): the local stack on a real API server (webhooks, and when the
 * suite rolls sets out, the status reconciler at e2e speed), the test
 * kubelets that start its pods and restart their containers, and the sets a
 * test created deleted after it, as Kruise's AfterEach does.
 */
import { afterAll, afterEach, beforeAll } from '@jest/globals';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startTestKubelet, type TestKubelet, type TestKubeletOptions } from '../../control-plane/test-kubelet.ts';
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { ScenarioCluster } from '../../testkit/kruise-e2e.ts';

/** The reconciler's resync interval and requeue-after in the scenario suites: seconds, not Kruise's minutes. */
export const SCENARIO_STATUS_SYNC_INTERVAL_MS = 1_000;
export const SCENARIO_REQUEUE_AFTER_MS = 500;

export interface ScenarioStackOptions {
  /** Runs the status reconciler (a resync a second, a 500 ms requeue-after), with this environment besides; unset runs none (injection alone). */
  reconcile?: { env?: Readonly<Record<string, string>> };
  /** One test kubelet per entry, each for its namespaces; their errors go to the stack's log. No pull delay unless an entry gives one: the suites time rollouts by readyDelayMs. */
  kubelets?: readonly Pick<TestKubeletOptions, 'namespaces' | 'readyDelayMs' | 'pullDelayMs'>[];
  /** Namespaces created once the stack runs, for the suite's tests to share. */
  namespaces?: readonly string[];
}

/** Building the binaries on a cold cache takes minutes. */
const START_TIMEOUT_MS = 30 * 60_000;

/**
 * A suite's stack: made at the top of the file, {@link install}ed inside
 * its `describe`, so a suite skipped for want of a control plane starts
 * nothing.
 */
export class ScenarioStack {
  readonly #options: ScenarioStackOptions;
  #stack: LocalStack | undefined;
  #cluster: ScenarioCluster | undefined;
  readonly #kubelets: TestKubelet[] = [];
  /** Sets created through {@link createSet} during the current test. */
  readonly #created: string[] = [];

  constructor(options: ScenarioStackOptions = {}) {
    this.#options = options;
  }

  get stack(): LocalStack {
    if (this.#stack === undefined) throw new Error('the scenario stack is not started: install() it inside the suite');
    return this.#stack;
  }

  get cluster(): ScenarioCluster {
    if (this.#cluster === undefined) throw new Error('the scenario stack is not started: install() it inside the suite');
    return this.#cluster;
  }

  /** Registers the suite's hooks: start before its first test, delete each test's sets after it, stop after the last. */
  install(): void {
    beforeAll(async () => {
      await this.start();
    }, START_TIMEOUT_MS);
    afterEach(async () => {
      for (const name of this.#created.splice(0)) await this.cluster.deleteSet(name).catch(() => undefined);
    });
    afterAll(async () => {
      await this.stop();
    });
  }

  /** Creates the set through the webhooks and deletes it after the test; returns it as stored. */
  async createSet(set: SidecarSet): Promise<SidecarSet> {
    const stored = await this.cluster.createSet(set);
    this.#created.push(stored.metadata?.name ?? '');
    return stored;
  }

  private async start(): Promise<void> {
    await ensureControlPlaneBinaries();
    const reconcile = this.#options.reconcile;
    // The webhook path: the scenarios (Kruise's e2e, which sleep a second after each new set for Kruise's own cache) create
    // pods the moment a set is stored, sooner than the policy path's param cache sees it (docs/BENCHMARKS.md section 7).
    // What the policy injects is compared with pod-inject field by field in test/webhook-config/injection-policy.integration.test.ts.
    const stack = await startLocalStack({
      injection: 'webhook',
      ...(reconcile === undefined ? {} : { statusSyncIntervalMs: SCENARIO_STATUS_SYNC_INTERVAL_MS, env: { REQUEUE_AFTER_MS: String(SCENARIO_REQUEUE_AFTER_MS), ...reconcile.env } }),
    });
    this.#stack = stack;
    this.#cluster = new ScenarioCluster(stack.cp, stack.logs);
    const onError = (message: string) => {
      stack.logs.push(JSON.stringify({ function: 'test-kubelet', message }));
    };
    for (const kubelet of this.#options.kubelets ?? []) this.#kubelets.push(startTestKubelet(stack.cp, { pullDelayMs: 0, ...kubelet, onError }));
    for (const ns of this.#options.namespaces ?? []) await this.#cluster.namespace(ns);
  }

  private async stop(): Promise<void> {
    for (const kubelet of this.#kubelets.splice(0)) await kubelet.stop();
    await this.#stack?.stop();
  }
}
