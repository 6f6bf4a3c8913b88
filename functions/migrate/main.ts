/** Entry point of `npm run -s migrate -- check|fence [--kubeconfig FILE]` (see cli.ts). */
import { runMigrate } from './cli.ts';
import { migrationSources } from './compose.ts';

const stop = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => { stop.abort(); });
process.stdout.on('error', () => process.exit(0));

const code = await runMigrate(
  process.argv.slice(2),
  { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text), signal: stop.signal },
  (kubeconfig) => migrationSources(kubeconfig, process.env, (text) => process.stderr.write(text)),
);
// Exit once standard output is flushed: idle kept-alive connections to the API server must not hold the process.
process.stdout.write('', () => process.exit(code));
