/**
 * The command line of `npm run conformance -- --kruise-e2e`
 * (testkit/kruise-e2e/options.ts), and the flags the run hands to
 * kube-controller-manager and to Kruise's test binary (args.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { KruiseE2eUsageError, parseKruiseE2eArgs } from '../../testkit/kruise-e2e/options.ts';
import { controllerManagerArgs, groupArgs, runPhases, SHARED_OBJECT_SPECS } from '../../testkit/kruise-e2e/args.ts';

describe('npm run conformance -- --kruise-e2e', () => {
  it('runs both groups by default, into a directory of its own', () => {
    expect(parseKruiseE2eArgs(['--kruise-e2e'])).toEqual({ groups: ['v1alpha1', 'v1beta1'] });
  });

  it('takes one group, a focus and a report directory, the flag anywhere', () => {
    expect(parseKruiseE2eArgs(['--group', 'v1beta1', '--kruise-e2e', '--focus=paused', '--report-dir', 'out'])).toEqual({ groups: ['v1beta1'], focus: 'paused', reportDir: 'out' });
    expect(parseKruiseE2eArgs(['--kruise-e2e', '--group=both']).groups).toEqual(['v1alpha1', 'v1beta1']);
  });

  it.each([
    [['--kruise-e2e', '--group', 'v1'], /--group must be v1alpha1, v1beta1 or both, got "v1"/],
    [['--kruise-e2e', '--runs', '5'], /--kruise-e2e: Unknown option '--runs'/],
    [['--kruise-e2e', 'v1beta1'], /--kruise-e2e: Unexpected argument 'v1beta1'/],
    [['--kruise-e2e', '--focus', '('], /--focus is not a regular expression/],
    [['--kruise-e2e', '--focus='], /--focus needs a regular expression/],
    [['--kruise-e2e', '--report-dir='], /--report-dir needs a directory/],
    [['--kruise-e2e', '--group'], /--kruise-e2e: Option '--group <value>' argument missing/],
  ])('refuses %j with a message naming the problem', (argv, message) => {
    expect(() => parseKruiseE2eArgs(argv)).toThrow(KruiseE2eUsageError);
    expect(() => parseKruiseE2eArgs(argv)).toThrow(message);
  });

  it("selects the group's sidecarset*.go files, not the SidecarTerminator's nor the PodUnavailableBudget's", () => {
    const args = groupArgs('v1alpha1', '/r/v1alpha1.xml');
    expect(args).toContain('-ginkgo.focus-file=apps/v1alpha1/sidecarset');
    expect(args).toContain('-ginkgo.junit-report=/r/v1alpha1.xml');
    expect(args.some((a) => a.startsWith('-ginkgo.focus='))).toBe(false);
    expect(groupArgs('v1beta1', 'x.xml', { focus: 'paused' })).toContain('-ginkgo.focus=paused');
    expect(groupArgs('v1beta1', 'x.xml', { skip: 'metadata' })).toContain('-ginkgo.skip=metadata');
    // focus-file matches a path fragment: sidecarterminator.go is not under it.
    expect('test/e2e/apps/v1alpha1/sidecarterminator.go'.includes('apps/v1alpha1/sidecarset')).toBe(false);
  });

  it('runs both groups at once without the specs that write a shared cluster object, then those one group at a time', () => {
    const phases = runPhases(['v1alpha1', 'v1beta1']);
    expect(phases.map((phase) => phase.map((run) => [run.name, run.selection]))).toEqual([
      [
        ['v1alpha1', { skip: SHARED_OBJECT_SPECS }],
        ['v1beta1', { skip: SHARED_OBJECT_SPECS }],
      ],
      [['v1alpha1-shared', { focus: SHARED_OBJECT_SPECS }]],
      [['v1beta1-shared', { focus: SHARED_OBJECT_SPECS }]],
    ]);
    // Ginkgo ORs focus flags, so a user's focus cannot be narrowed further: the groups run one at a time.
    expect(runPhases(['v1alpha1', 'v1beta1'], 'paused')).toEqual([[{ group: 'v1alpha1', selection: { focus: 'paused' }, name: 'v1alpha1' }], [{ group: 'v1beta1', selection: { focus: 'paused' }, name: 'v1beta1' }]]);
    // Both groups' copies of the patch-metadata spec create kruise-system/kruise-configuration.
    expect(new RegExp(SHARED_OBJECT_SPECS).test('[It] SidecarSet SidecarSet Upgrade functionality [SidecarSetUpgrade] sidecarSet patch pod metadata [SidecarSet, workload]')).toBe(true);
  });

  it('runs the controller manager with the controllers the specs need, serving nothing', () => {
    const args = controllerManagerArgs('/r/kubeconfig');
    expect(args).toContain('--kubeconfig=/r/kubeconfig');
    expect(args).toContain('--controllers=deployment-controller,replicaset-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller');
    expect(args).toContain('--secure-port=0');
    expect(args).toContain('--leader-elect=false');
  });
});
