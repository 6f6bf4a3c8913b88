/**
 * `npm run -s explain -- POD [-n NS] [--kubeconfig FILE] [-o json]`: for
 * each SidecarSet, whether it applies to the live pod and if not why, what
 * it injected, and whether the pod runs its current sidecars and if not what
 * holds it (lib/explain/).
 *
 * Exit codes, as invoke's: 0 explained; 1 the cluster cannot be read or a
 * decision cannot be made (a namespaceSelector needs a Namespace that is
 * gone); 2 bad input: usage, no usable kubeconfig, no such pod. Every
 * failure is one line on standard error.
 */
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { KubeconfigError } from '../../lib/adapters/kubeconfig-reader.ts';
import { errorMessage } from '../../lib/errors.ts';
import { lookAtPod, type ExplainDeps } from '../../lib/explain/look.ts';
import { explanationText } from '../../lib/explain/text.ts';
import { ConfigurationError } from '../shared/compose.ts';

export const EXPLAIN_USAGE = `usage: npm run -s explain -- POD [-n|--namespace NS] [--kubeconfig FILE] [-o|--output text|json]
For each SidecarSet: whether it applies to the pod and, if not, exactly why (the selector term and the label
it wants, the namespace or namespaceSelector, a canary in its place, injection paused); what it injected
(containers, init containers, volumes, the revision); whether the pod runs the set's current sidecars and,
if not, what holds it (partition, maxUnavailable and the pods it waits on, updateStrategy.selector, paused,
NotUpdate, not upgradable and the fields). Decided by the same code as pod-inject and the reconciler.
  -n, --namespace NS the pod's namespace (default "default")
  --kubeconfig FILE  the cluster (default: $KUBECONFIG, else the cluster of a running npm start,
                     else ~/.kube/config)
  -o, --output json  the explanation as JSON (default: text)
  -h, --help         this text
exit codes: 0 explained; 1 the cluster cannot be read, or a decision needs a Namespace that is not there;
            2 bad usage or kubeconfig, or no such pod.`;

export interface ExplainOptions {
  pod: string;
  namespace: string;
  kubeconfig?: string;
  output: 'text' | 'json';
}

class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const VALUE_FLAGS: Readonly<Record<string, 'namespace' | 'kubeconfig' | 'output'>> = { '-n': 'namespace', '--namespace': 'namespace', '--kubeconfig': 'kubeconfig', '-o': 'output', '--output': 'output' };

/** @throws UsageError naming the problem. */
export function parseExplainOptions(argv: readonly string[]): ExplainOptions | 'help' {
  const values: Partial<Record<'namespace' | 'kubeconfig' | 'output', string>> = {};
  let pod: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '-h' || arg === '--help') return 'help';
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const field = VALUE_FLAGS[flag];
    if (field !== undefined) {
      const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined || value === '') throw new UsageError(`${flag} needs a value`);
      if (values[field] !== undefined) throw new UsageError(`${flag} given twice`);
      values[field] = value;
    } else if (arg.startsWith('-')) {
      throw new UsageError(`unknown option ${arg}`);
    } else if (pod === undefined) {
      pod = arg;
    } else {
      throw new UsageError(`unexpected argument ${arg}`);
    }
  }
  if (pod === undefined) throw new UsageError('missing POD');
  const output = values.output ?? 'text';
  if (output !== 'text' && output !== 'json') throw new UsageError(`--output must be text or json, got ${JSON.stringify(output)}`);
  return { pod, namespace: values.namespace ?? 'default', output, ...(values.kubeconfig === undefined ? {} : { kubeconfig: values.kubeconfig }) };
}

export interface ExplainIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** One line for a failure: a read names its operation. */
function describeFailure(error: unknown): string {
  const line = error instanceof KubeApiError ? `${error.operation}: ${error.message}` : errorMessage(error);
  return line.replace(/\s*\n\s*/g, ' ');
}

/** Runs the command; the exit code. `connect` builds the cluster's sources for --kubeconfig (or the defaults). Never throws. */
export async function runExplain(argv: readonly string[], io: ExplainIo, connect: (kubeconfig: string | undefined) => Promise<ExplainDeps>): Promise<number> {
  let options;
  try {
    options = parseExplainOptions(argv);
  } catch (error) {
    io.stderr(`explain: ${errorMessage(error)}\n${EXPLAIN_USAGE}\n`);
    return 2;
  }
  if (options === 'help') {
    io.stdout(`${EXPLAIN_USAGE}\n`);
    return 0;
  }
  let deps: ExplainDeps;
  try {
    deps = await connect(options.kubeconfig);
  } catch (error) {
    io.stderr(`explain: ${describeFailure(error)}\n`);
    return error instanceof KubeconfigError || error instanceof ConfigurationError ? 2 : 1;
  }
  try {
    const explanation = await lookAtPod(deps, options.namespace, options.pod);
    if (explanation === undefined) {
      io.stderr(`explain: pod ${options.pod} not found in namespace ${options.namespace}\n`);
      return 2;
    }
    io.stdout(options.output === 'json' ? `${JSON.stringify(explanation, null, 2)}\n` : explanationText(explanation, true));
    return 0;
  } catch (error) {
    io.stderr(`explain: ${describeFailure(error)}\n`);
    return 1;
  }
}
