/** Entry point of `npm run -s status -- [--kubeconfig FILE] [-w|--watch] [--pods SET]` (see cli.ts). */
import { chooseCluster, statusViewSources } from './compose.ts';
import { runStatusView } from './cli.ts';

const stop = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => { stop.abort(); });
// A reader that went away (`| head`) ends the view, as it ends kubectl: quietly.
process.stdout.on('error', () => process.exit(0));

const code = await runStatusView(
  process.argv.slice(2),
  {
    out: {
      write: (text) => process.stdout.write(text),
      get isTTY() {
        return process.stdout.isTTY;
      },
      get columns() {
        return process.stdout.isTTY ? process.stdout.columns : undefined;
      },
      get rows() {
        return process.stdout.isTTY ? process.stdout.rows : undefined;
      },
    },
    err: (text) => process.stderr.write(text),
    onResize: (listener) => {
      process.stdout.on('resize', listener);
      return () => process.stdout.off('resize', listener);
    },
    signal: stop.signal,
  },
  async (kubeconfig) => {
    return statusViewSources(chooseCluster(kubeconfig, process.env), (text) => process.stderr.write(text));
  },
);
// Exit once standard output is flushed: idle kept-alive connections to the API server must not hold the process.
process.stdout.write('', () => process.exit(code));
