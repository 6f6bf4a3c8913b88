/**
 * Runs a page's commands as its reader would, in a shell in the project's
 * directory, one session per page: `npm start` keeps running (in the
 * background, as in the reader's other terminal) until the session stops,
 * a watch (`-w`, `--watch`) is let run for a while and stopped as the reader
 * stops it with Ctrl-C, and every other command must exit as the page says
 * (0, or the `# exit N` its line carries).
 *
 * The one liberty taken: `npm start` is given a free port (`--port N`), so
 * that runs side by side on one machine do not meet on 8443. Nothing the
 * pages run names the port.
 */
import { freePort } from '../free-port.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import type { RunStep } from './blocks.ts';

export interface CommandRun {
  command: string;
  /** Standard output and standard error, interleaved as they came. */
  output: string;
}

/** What a watch prints within this long of its first output is what the reader sees before pressing Ctrl-C. */
export const WATCH_MS = 10_000;
/** A watch must print something within this long (under load 33 on 2 cores, npm run -s status took over 10 s to print). */
const FIRST_OUTPUT_MS = 90_000;
/** `npm start` must say it is ready within this long (an embedded cluster boots in about 10-20 s; loaded machines are slower). */
const START_MS = 240_000;
/** A block of ordinary commands must end within this long. */
const BLOCK_MS = 180_000;

const EXPECTED_EXIT = /#\s*exit (\d+)\b/;

export function isWatch(command: string): boolean {
  return /(^|\s)(-w|--watch)(\s|$)/.test(command.replace(/#.*$/, ''));
}

export function isNpmStart(command: string): boolean {
  return /^npm start(\s|$)/.test(command);
}

/** `npm start …` with `--port N` added after npm's `--` (added when absent). */
export function withPort(command: string, port: number): string {
  return command.includes(' -- ') || command.endsWith(' --') ? command.replace(/ --( |$)/, ` -- --port ${port}$1`) : `${command} -- --port ${port}`;
}

/**
 * A bash script running `commands` in order, each checked against the exit
 * status its line names (`# exit N`, else 0; a command sent to the
 * background with `&` is not checked): the first that differs ends the
 * script with a line naming it.
 */
export function checkedScript(commands: readonly string[]): string {
  return commands
    .map((command) => {
      if (/&\s*(#.*)?$/.test(command)) return command;
      const expected = Number(EXPECTED_EXIT.exec(command)?.[1] ?? 0);
      const shown = JSON.stringify(command.split('\n')[0]);
      return `${command}\n__rc=$?; if [ "$__rc" -ne ${expected} ]; then echo "doctest: ${shown.slice(1, -1).replace(/[`$"]/g, '\\$&')} exited $__rc, the page says ${expected}" >&2; exit 97; fi`;
    })
    .join('\n');
}

/** A pause that keeps nothing alive: a race lost to a process's exit leaves no timer behind to hold the test runner. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });
}

/** Kills a detached child's whole process group (the shell, npm and what they started). */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
}

export class DocSession {
  private readonly started: ChildProcess[] = [];
  private readonly cwd: string;
  private readonly env: NodeJS.ProcessEnv;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    this.cwd = cwd;
    this.env = env;
  }

  private spawnShell(script: string): { child: ChildProcess; output: () => string } {
    const child = spawn('bash', ['-c', script], { cwd: this.cwd, env: this.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    const collect = (chunk: Buffer): void => {
      text += chunk.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    return { child, output: () => text };
  }

  /** Starts `npm start …` and waits until it says how to use the cluster. */
  private async start(command: string): Promise<CommandRun> {
    const { child, output } = this.spawnShell(`exec ${withPort(command, await freePort())}`);
    this.started.push(child);
    const deadline = Date.now() + START_MS;
    while (!output().includes('Press Ctrl-C to stop')) {
      if (child.exitCode !== null) throw new Error(`${command} exited ${child.exitCode} before it was ready:\n${output()}`);
      if (Date.now() > deadline) throw new Error(`${command} was not ready within ${START_MS / 1000} s:\n${output()}`);
      await pause(250);
    }
    return { command, output: output() };
  }

  /**
   * Lets a watch run until it first prints (a loaded machine takes seconds
   * to start npm and Node), then WATCH_MS more (or until it ends), and
   * stops it; it must have printed something and not failed.
   */
  private async watch(command: string): Promise<CommandRun> {
    const { child, output } = this.spawnShell(command);
    const deadline = Date.now() + FIRST_OUTPUT_MS;
    while (output().trim() === '' && child.exitCode === null && Date.now() < deadline) await pause(250);
    await Promise.race([exited(child), pause(WATCH_MS)]);
    const endedAlone = child.exitCode !== null;
    killGroup(child, 'SIGINT');
    await Promise.race([exited(child), pause(5_000)]);
    killGroup(child, 'SIGKILL');
    if (endedAlone && child.exitCode !== 0) throw new Error(`${command} exited ${child.exitCode}:\n${output()}`);
    if (output().trim() === '') throw new Error(`${command} printed nothing in ${(FIRST_OUTPUT_MS + WATCH_MS) / 1000} s`);
    return { command, output: output() };
  }

  private async ordinary(commands: readonly string[]): Promise<CommandRun> {
    const { child, output } = this.spawnShell(checkedScript(commands));
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL');
    }, BLOCK_MS);
    await exited(child);
    clearTimeout(timer);
    // What the block left in the background (its own `&` jobs) goes with it.
    killGroup(child, 'SIGKILL');
    const command = commands.join('\n');
    if (child.exitCode !== 0) throw new Error(`the commands ended with ${child.exitCode ?? child.signalCode ?? '?'}:\n${command}\n--- output:\n${output()}`);
    return { command, output: output() };
  }

  /** Runs a block; returns what each of its parts printed (the last is its last command's). */
  async run(step: RunStep): Promise<CommandRun[]> {
    const runs: CommandRun[] = [];
    let plain: string[] = [];
    const flush = async () => {
      if (plain.length > 0) runs.push(await this.ordinary(plain));
      plain = [];
    };
    for (const command of step.commands) {
      if (isNpmStart(command) || isWatch(command)) {
        await flush();
        runs.push(await (isNpmStart(command) ? this.start(command) : this.watch(command)));
      } else {
        plain.push(command);
      }
    }
    await flush();
    return runs;
  }

  /** Stops what the page started, as Ctrl-C does, and waits for it to be gone. */
  async stop(): Promise<void> {
    for (const child of this.started) killGroup(child, 'SIGINT');
    await Promise.all(this.started.map((child) => Promise.race([exited(child), pause(60_000)])));
    for (const child of this.started) killGroup(child, 'SIGKILL');
  }
}
