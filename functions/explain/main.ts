/** Entry point of `npm run -s explain -- POD [-n NS] [--kubeconfig FILE] [-o json]` (see cli.ts). */
import { kubeNamespaceSnapshot } from '../../lib/adapters/kube-namespaces.ts';
import { kubePodGetter } from '../../lib/adapters/kube-pod-get.ts';
import { kubeSetPods } from '../../lib/adapters/kube-pods.ts';
import { kubeSidecarSetWatch } from '../../lib/adapters/kube-sidecarsets.ts';
import { discoveredSidecarSetVersion } from '../../lib/adapters/kube-sidecarsets-version.ts';
import { kubeConfigClient } from '../../lib/adapters/kubeconfig.ts';
import { readWebhookConfiguration } from '../../lib/adapters/kube-webhook-configurations.ts';
import { WEBHOOK_CONFIGURATION_NAME } from '../../lib/webhook-config/webhook-configurations.ts';
import { chooseCluster, connectChosen } from '../status-view/compose.ts';
import { runExplain } from './cli.ts';
import { millisecondsFromEnv } from '../../lib/adapters/kube-sources.ts';
import { DEFAULT_STALL_MS, ENV_ROLLOUT_STALL_MS } from '../../lib/status-sync/rollout-state.ts';

// A reader that went away (`| head`) ends the command quietly, as it ends kubectl.
process.stdout.on('error', () => process.exit(0));

const code = await runExplain(
  process.argv.slice(2),
  { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) },
  async (kubeconfig) => {
    // The cluster chosen as `npm run -s status` chooses it (--kubeconfig, the environment, npm start's, ~/.kube/config).
    const client = kubeConfigClient(await connectChosen(chooseCluster(kubeconfig, process.env), (text) => process.stderr.write(text)));
    return {
      getPod: kubePodGetter(client),
      sets: kubeSidecarSetWatch(client, discoveredSidecarSetVersion(client)),
      pods: kubeSetPods(client),
      namespaces: kubeNamespaceSnapshot(client),
      // An identity that may not read webhook configurations still gets the rest of the explanation.
      // The reconciler's threshold (ROLLOUT_STALL_MS, as it reads it): explain says Stalled when its reconcile does.
      stall: { stallMs: millisecondsFromEnv(process.env, ENV_ROLLOUT_STALL_MS, DEFAULT_STALL_MS, 1_000), nowMs: () => Date.now() },
      webhookConfiguration: (signal) => readWebhookConfiguration(client, 'MutatingWebhookConfiguration', WEBHOOK_CONFIGURATION_NAME, signal).catch(() => undefined),
    };
  },
);
// Exit once standard output is flushed: idle kept-alive connections to the API server must not hold the process.
process.stdout.write('', () => process.exit(code));
