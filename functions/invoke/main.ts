/** Entry point of `npm run -s invoke -- <function> ...` (see cli.ts). */
import { readFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import { decodeUtf8 } from '../../lib/kube/yaml-objects.ts';
import { runCli } from './cli.ts';

const code = await runCli(process.argv.slice(2), {
  readFile: async (path) => decodeUtf8(await readFile(path), path),
  readStdin: async () => decodeUtf8(await buffer(process.stdin), 'standard input'),
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
});
process.exitCode = code;
