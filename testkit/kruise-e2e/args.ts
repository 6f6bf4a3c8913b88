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

/** The test binary's flags for one group: its sidecarset*.go files, its JUnit report, and a bound on the whole run. */
export function groupArgs(group: KruiseE2eGroup, junitReport: string, focus?: string): string[] {
  return [
    // A path fragment: sidecarset.go, sidecarset_hotupgrade.go and sidecarset_resources_policy.go of
    // the group, not sidecarterminator.go nor the PodUnavailableBudget specs (out of scope: Kruise components).
    `-ginkgo.focus-file=apps/${group}/sidecarset`,
    ...(focus !== undefined ? [`-ginkgo.focus=${focus}`] : []),
    `-ginkgo.junit-report=${junitReport}`,
    '-ginkgo.no-color',
    // Ginkgo's default is one hour; a group takes about 15 minutes on 2 idle cores, more on a loaded machine.
    '-ginkgo.timeout=3h',
  ];
}
