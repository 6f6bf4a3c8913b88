/** Child processes of the benchmarks: Node 22 (this process's own binary) running a project file. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Starts `file` and resolves with its first line of standard output, parsed as JSON. */
export async function startChild(file: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<{ child: ChildProcess; first: unknown }> {
  const child = spawn(process.execPath, [file, ...args], { stdio: ['pipe', 'pipe', 'inherit'], env });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise<unknown>((resolve, reject) => {
    lines.once('line', (line) => {
      resolve(JSON.parse(line));
    });
    child.once('exit', (code) => {
      reject(new Error(`${file} exited with ${code ?? 'a signal'} before it was ready`));
    });
  });
  return { child, first };
}

/** Closes the child's standard input (its cue to stop) and waits for it to exit. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => { resolve(); }));
  child.stdin?.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Runs `file` to completion and returns its last line of standard output, parsed as JSON. */
export async function runChild<T>(file: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env, nodeArgs: readonly string[] = []): Promise<T> {
  const child = spawn(process.execPath, [...nodeArgs, file, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const last = out.trim().split('\n').at(-1) ?? '';
  if (code !== 0) throw new Error(`${file} ${args.join(' ')} exited with ${code ?? 'a signal'}: ${err.slice(-2000)}`);
  return JSON.parse(last) as T;
}
