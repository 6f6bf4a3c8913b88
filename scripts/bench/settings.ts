/** Repetitions and durations of a full run and of `--quick` (a smoke test of the tooling). */
import type { AdmissionSettings } from './admission-compute.ts';
import type { ColdStartSettings } from './cold-start.ts';
import type { FreshnessSettings } from './freshness.ts';
import type { HeavyReadsSettings } from './heavy-reads.ts';
import type { KruisePodSettings } from './kruise-pod.ts';
import type { HttpSettings } from './http-serving.ts';
import type { Resync100kSettings } from './resync-100k.ts';
import type { ReconcilerSettings } from './reconciler.ts';
import type { RolloutSettings } from './rollout.ts';
import type { SectionId } from './report.ts';
import type { PodTriggerSettings } from './pod-triggers.ts';
import type { ControllerSettings } from './controller.ts';
import type { InjectionPathSettings } from './injection-paths.ts';
import type { SetsAtOnceSettings } from './sets-at-once.ts';

export interface BenchSettings {
  admission: AdmissionSettings;
  kruise: KruisePodSettings;
  http: HttpSettings;
  coldStart: ColdStartSettings;
  reconciler: ReconcilerSettings;
  resync100k: Resync100kSettings;
  freshness: FreshnessSettings;
  reads: HeavyReadsSettings;
  rollout: RolloutSettings;
  podTriggers: PodTriggerSettings;
  controller: ControllerSettings;
  injection: InjectionPathSettings;
  setsAtOnce: SetsAtOnceSettings;
  describe(sections: readonly SectionId[]): string;
}

export function settingsFor(quick: boolean): BenchSettings {
  const s = {
    admission: { runs: quick ? 3 : 11, runMs: quick ? 250 : 1000 },
    kruise: { runs: quick ? 3 : 11, runMs: quick ? 250 : 1000 },
    http: { runs: quick ? 1 : 5, durationSeconds: quick ? 3 : 10, moderateRate: 200, moderateConnections: 8, saturationConnections: 32 },
    // The issue asks for the median of 20 starts; the reconciler for 10,000 pods, even in a smoke test.
    coldStart: { runs: quick ? 5 : 20 },
    reconciler: { runs: quick ? 2 : 5, pods: 10_000 },
    // Issue 28: 100,000 pods and 1,000 SidecarSets; --quick a tenth of the pods.
    resync100k: { runs: quick ? 1 : 3, pods: quick ? 10_000 : 100_000, sets: 1_000 },
    freshness: { firstAnswers: quick ? 5 : 20, runs: quick ? 2 : 5, reviewsPerRun: quick ? 200 : 500, concurrency: 8 },
    // Issue 44: 61 sets of about 1.2 MB of labels and managedFields each; 20 admissions at once. --quick: 10 lighter sets.
    reads: { sets: quick ? 10 : 61, labelsPerSet: quick ? 2_000 : 9_000, cold: quick ? 1 : 3, warm: quick ? 5 : 20, concurrent: quick ? 5 : 20 },
    // The figures: 1,000 pods at 10%, ready 2 s after a restart; the plan over 100,000 pods.
    // Issue 38: 8 pods one at a time was the report (23-28 s each); a burst of 1,000 for the reconciles per 1,000 changes.
    podTriggers: { pods: quick ? 4 : 20, schedulePods: 2, burst: quick ? 200 : 1_000 },
    controller: { sets: 1_000, podsPerSet: 100, workers: [1, 4, 16], triggers: 10_000, triggerSets: 100, requestMs: 2 },
    // Issue 44: 1, 10 and 100 sets, each path; p99 over 200 creations.
    injection: { pods: quick ? 40 : 200, setCounts: [1, 10, 100], cacheSamples: quick ? 5 : 20 },
    // Issue 46: five sets of 20 pods rolled at once against one alone, on the local stack.
    setsAtOnce: { runs: quick ? 1 : 2, sets: 5, podsPerSet: 20, maxUnavailable: 5, readyDelayMs: 2_000 },
    rollout: { runs: quick ? 1 : 3, hotRuns: quick ? 1 : 2, pods: 1_000, maxUnavailable: '10%', readyDelayMs: 2_000, planPods: 100_000, planRuns: quick ? 3 : 5 },
  };
  const parts: Record<SectionId, string> = {
    admission: `admission ${s.admission.runs} runs of ${s.admission.runMs} ms each`,
    kruise: `Kruise's pod webhook ${s.kruise.runs} runs of ${s.kruise.runMs} ms each, alternating with pod-inject's`,
    http: `HTTP ${s.http.runs} runs of ${s.http.durationSeconds} s per load and route`,
    'cold-start': `cold start ${s.coldStart.runs} starts per bundle`,
    reconciler: `reconciler ${s.reconciler.runs} runs each of resync and floor`,
    'resync-100k': `resync at ${s.resync100k.pods} pods ${s.resync100k.runs} runs each of resync and floor`,
    freshness: `freshness ${s.freshness.firstAnswers} first answers, ${s.freshness.runs} runs of ${s.freshness.reviewsPerRun} warm reviews per row`,
    reads: `reads ${s.reads.sets} sets of ${s.reads.labelsPerSet} labels, ${s.reads.cold} cold reviews, ${s.reads.warm} warm, ${s.reads.concurrent} at once`,
    controller: `controller: a resync of ${s.controller.sets} sets x ${s.controller.podsPerSet} pods with ${s.controller.workers.join(', ')} workers, a burst of ${s.controller.triggers} pod triggers over ${s.controller.triggerSets} sets, ${s.controller.requestMs} ms a request`,
    'pod-triggers': `pod triggers ${s.podTriggers.pods} pods one at a time, ${s.podTriggers.schedulePods} on the schedule alone, a burst of ${s.podTriggers.burst}`,
    injection: `injection paths ${s.injection.pods} pod creations per row with ${s.injection.setCounts.join(', ')} sets, ${s.injection.cacheSamples} new sets for the param cache`,
    'sets-at-once': `sets at once ${s.setsAtOnce.runs} rounds of one set alone then ${s.setsAtOnce.sets} at once, ${s.setsAtOnce.podsPerSet} pods each`,
    rollout: `rollout ${s.rollout.runs} runs (HotUpgrade ${s.rollout.hotRuns}) of ${s.rollout.pods} pods, plan ${s.rollout.planRuns} runs`,
  };
  return { ...s, describe: (sections) => sections.map((id) => parts[id]).join('; ') };
}
