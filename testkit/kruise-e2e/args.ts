/**
 * The command lines the Kruise e2e run (run.ts) gives kube-controller-manager
 * and Kruise's test binary. Pure, so that what is run is tested without
 * running it.
 */
import type { KruiseE2eGroup } from './options.ts';

/**
 * The controllers the specs need: Deployments make ReplicaSets make pods,
 * deleted namespaces and owners are cleaned up, and each namespace gets the
 * `default` ServiceAccount the framework waits for. No token controller: the
 * API server runs without the ServiceAccount admission plugin.
 */
export const CONTROLLERS = ['deployment-controller', 'replicaset-controller', 'garbage-collector-controller', 'namespace-controller', 'serviceaccount-controller'] as const;

/** kube-controller-manager's flags (the controllers the specs need unless told): no serving port, no leader election, one identity (the admin's). */
export function controllerManagerArgs(kubeconfig: string, controllers: readonly string[] = CONTROLLERS): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--controllers=${controllers.join(',')}`,
    '--leader-elect=false',
    '--secure-port=0',
    '--use-service-account-credentials=false',
    '--authentication-skip-lookup=true',
  ];
}

/**
 * Specs that write a cluster-scoped object every group's copy of the spec
 * writes too: "sidecarSet patch pod metadata" creates the ConfigMap
 * kruise-system/kruise-configuration (Kruise's patchPodMetadata whitelist)
 * and deletes it at its end, so the two groups' copies running at once
 * meet `AlreadyExists`. They run after the rest, one group at a time.
 */
export const SHARED_OBJECT_SPECS = 'sidecarSet patch pod metadata';

/** What one run of the test binary selects within its group's files. */
export type Selection = { focus?: string; skip?: string };

/** One run of the test binary: its group, what it selects, and the name its report and log take. */
export interface GroupRun {
  group: KruiseE2eGroup;
  selection: Selection;
  /** `v1alpha1`, or `v1alpha1-shared` for the run of the shared-object specs. */
  name: string;
}

/**
 * The runs, in phases: the runs of one phase go at once, the phases one
 * after the other. Without a focus: every group at once without the
 * shared-object specs, then those specs one group at a time. With a focus
 * (which may or may not select them, and Ginkgo ORs focus flags, so the two
 * cannot be combined): the groups one at a time.
 */
export function runPhases(groups: readonly KruiseE2eGroup[], focus?: string): GroupRun[][] {
  if (focus !== undefined) return groups.map((group) => [{ group, selection: { focus }, name: group }]);
  return [groups.map((group) => ({ group, selection: { skip: SHARED_OBJECT_SPECS }, name: group })), ...groups.map((group) => [{ group, selection: { focus: SHARED_OBJECT_SPECS }, name: `${group}-shared` }])];
}

/** The test binary's flags for one group: its sidecarset*.go files, its JUnit report, and a bound on the whole run. */
export function groupArgs(group: KruiseE2eGroup, junitReport: string, selection: Selection = {}): string[] {
  return [
    // A path fragment: sidecarset.go, sidecarset_hotupgrade.go and sidecarset_resources_policy.go of
    // the group, not sidecarterminator.go nor the PodUnavailableBudget specs (out of scope: Kruise components).
    `-ginkgo.focus-file=apps/${group}/sidecarset`,
    ...(selection.focus !== undefined ? [`-ginkgo.focus=${selection.focus}`] : []),
    ...(selection.skip !== undefined ? [`-ginkgo.skip=${selection.skip}`] : []),
    `-ginkgo.junit-report=${junitReport}`,
    '-ginkgo.no-color',
    // Ginkgo's default is one hour; a group takes about 15 minutes on 2 idle cores, more on a loaded machine.
    '-ginkgo.timeout=3h',
  ];
}
