/** Entry point of `npm run -s invoke -- <function> ...` (see cli.ts). */
import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { runCli } from './cli.ts';

const code = await runCli(process.argv.slice(2), {
  readFile: (path) => readFile(path, 'utf8'),
  readStdin: () => text(process.stdin),
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
});
process.exitCode = code;
