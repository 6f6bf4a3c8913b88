import { describe, expect, it } from '@jest/globals';
import { DEFAULT_TEST_KUBELET_READY_DELAY_MS, OptionsError, parseServerOptions } from '../../functions/server/options.ts';

const defaults = { tlsDir: '/tmp/tls' };

describe('npm start options: --test-kubelet', () => {
  it('is off unless given', () => {
    expect(parseServerOptions([], defaults).testKubelet).toBeUndefined();
  });

  it('takes the default readiness delay when given bare, without consuming the next argument', () => {
    const options = parseServerOptions(['--test-kubelet', '--port', '0'], defaults);
    expect(options.testKubelet).toEqual({ readyDelayMs: DEFAULT_TEST_KUBELET_READY_DELAY_MS });
    expect(options.port).toBe(0);
  });

  it.each([
    ['--test-kubelet=2000', 2000],
    ['--test-kubelet=0', 0],
    ['--test-kubelet=3600000', 3_600_000],
  ])('reads the readiness delay of %s', (arg, readyDelayMs) => {
    expect(parseServerOptions([arg], defaults).testKubelet).toEqual({ readyDelayMs });
  });

  it.each(['--test-kubelet=', '--test-kubelet=1.5', '--test-kubelet=-1', '--test-kubelet=2s', '--test-kubelet=3600001'])('refuses %s, naming what it takes', (arg) => {
    expect(() => parseServerOptions([arg], defaults)).toThrow(new OptionsError(`--test-kubelet= takes a readiness delay in milliseconds (0-3600000), got ${JSON.stringify(arg.slice('--test-kubelet='.length))}`));
  });

  it('refuses it twice', () => {
    expect(() => parseServerOptions(['--test-kubelet', '--test-kubelet=5'], defaults)).toThrow(new OptionsError('--test-kubelet given twice'));
  });

  it('takes a pull delay beside it, in either order', () => {
    expect(parseServerOptions(['--test-kubelet=2000', '--test-kubelet-pull-delay=8000'], defaults).testKubelet).toEqual({ readyDelayMs: 2000, pullDelayMs: 8000 });
    expect(parseServerOptions(['--test-kubelet-pull-delay=0', '--test-kubelet'], defaults).testKubelet).toEqual({ readyDelayMs: DEFAULT_TEST_KUBELET_READY_DELAY_MS, pullDelayMs: 0 });
  });

  it.each([
    [['--test-kubelet-pull-delay=100'], '--test-kubelet-pull-delay goes with --test-kubelet'],
    [['--test-kubelet', '--test-kubelet-pull-delay'], '--test-kubelet-pull-delay= needs a pull delay in milliseconds'],
    [['--test-kubelet', '--test-kubelet-pull-delay=5s'], '--test-kubelet-pull-delay= takes a pull delay in milliseconds (0-3600000), got "5s"'],
    [['--test-kubelet', '--test-kubelet-pull-delay=1', '--test-kubelet-pull-delay=2'], '--test-kubelet-pull-delay given twice'],
  ])('refuses %j, naming the problem', (argv, message) => {
    expect(() => parseServerOptions(argv, defaults)).toThrow(new OptionsError(message));
  });

  it('parses alongside --kubeconfig (npm start refuses the pair, with the reason)', () => {
    expect(parseServerOptions(['--kubeconfig', 'k.yaml', '--test-kubelet'], defaults)).toMatchObject({ kubeconfig: 'k.yaml', testKubelet: { readyDelayMs: 1000 } });
  });
});

describe('npm start options: --kubeconfig and --reconcile', () => {
  it('selects no cluster and reconciles none unless given', () => {
    const options = parseServerOptions([], defaults);
    expect(options.kubeconfig).toBeUndefined();
    expect(options.reconcile).toBeUndefined();
  });

  it('reconciles the --kubeconfig cluster only with --reconcile', () => {
    expect(parseServerOptions(['--kubeconfig', 'k.yaml'], defaults)).not.toHaveProperty('reconcile');
    expect(parseServerOptions(['--kubeconfig', 'k.yaml', '--reconcile'], defaults)).toMatchObject({ kubeconfig: 'k.yaml', reconcile: true });
    expect(parseServerOptions(['--reconcile', '--kubeconfig=k.yaml'], defaults)).toMatchObject({ kubeconfig: 'k.yaml', reconcile: true });
  });

  it('refuses --reconcile without --kubeconfig, and twice', () => {
    expect(() => parseServerOptions(['--reconcile'], defaults)).toThrow(new OptionsError('--reconcile goes with --kubeconfig FILE (the embedded cluster is always reconciled)'));
    expect(() => parseServerOptions(['--kubeconfig', 'k.yaml', '--reconcile', '--reconcile'], defaults)).toThrow(new OptionsError('--reconcile given twice'));
  });
});

describe('npm start options: --sort-sidecars-by-name', () => {
  it('asks for injected sidecar containers sorted by name (Kruise 1.9’s EnableSortSidecarContainerByName), with either cluster', () => {
    expect(parseServerOptions([], defaults)).not.toHaveProperty('sortSidecarsByName');
    expect(parseServerOptions(['--sort-sidecars-by-name'], defaults)).toMatchObject({ sortSidecarsByName: true });
    expect(parseServerOptions(['--kubeconfig', 'k.yaml', '--sort-sidecars-by-name'], defaults)).toMatchObject({ kubeconfig: 'k.yaml', sortSidecarsByName: true });
    expect(() => parseServerOptions(['--sort-sidecars-by-name', '--sort-sidecars-by-name'], defaults)).toThrow(new OptionsError('--sort-sidecars-by-name given twice'));
  });
});

describe('npm start options: --injection', () => {
  it('is left to the cluster unless given (policy in the embedded one), and takes policy or webhook', () => {
    expect(parseServerOptions([], defaults).injection).toBeUndefined();
    expect(parseServerOptions(['--injection', 'policy'], defaults)).toMatchObject({ injection: 'policy' });
    expect(parseServerOptions(['--injection=webhook'], defaults)).toMatchObject({ injection: 'webhook' });
    expect(() => parseServerOptions(['--injection', 'both'], defaults)).toThrow(new OptionsError('--injection must be policy or webhook, not both'));
  });

  it('takes either path for a cluster of your own (the files it writes for that cluster follow it)', () => {
    expect(parseServerOptions(['--injection', 'policy', '--kubeconfig', 'k.yaml'], defaults)).toMatchObject({ injection: 'policy', kubeconfig: 'k.yaml' });
    expect(parseServerOptions(['--injection', 'webhook', '--kubeconfig', 'k.yaml'], defaults)).toMatchObject({ injection: 'webhook', kubeconfig: 'k.yaml' });
  });
});

describe('npm start options: --no-controller-manager', () => {
  it('is off unless given: the embedded cluster runs kube-controller-manager', () => {
    expect(parseServerOptions([], defaults).noControllerManager).toBeUndefined();
  });

  it('leaves it out when given, and is refused twice', () => {
    expect(parseServerOptions(['--no-controller-manager'], defaults).noControllerManager).toBe(true);
    expect(() => parseServerOptions(['--no-controller-manager', '--no-controller-manager'], defaults)).toThrow(new OptionsError('--no-controller-manager given twice'));
  });
});
