/**
 * A long-lived helper process spoken to in JSON lines: one line in, one line
 * back, answers in the order questions were asked. The Kruise reference
 * (conformance) and Kruise's pod bench both run this way; what a broken
 * process does (cannot start, exits, stops reading, answers garbage or
 * unasked) is handled here once, each failure naming the process.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

export interface LineProcessOptions {
  /** How messages name it: `the Kruise reference`. */
  name: string;
  args?: readonly string[];
  env?: NodeJS.ProcessEnv;
}

export interface LineProcess {
  /** Writes `message` as one JSON line; resolves with the next line the process writes, parsed. */
  ask(message: Readonly<Record<string, unknown>>): Promise<unknown>;
  /** Gives up on the process: every question waiting, and any asked later, rejects with `error`. */
  fail(error: Error): void;
  /** Closes its input and resolves when it has exited. */
  close(): Promise<void>;
}

/** How much of the process's stderr is kept: only the tail explains a crash. */
const STDERR_TAIL_CHARS = 4000;

export function startLineProcess(binary: string, options: LineProcessOptions): LineProcess {
  const { name } = options;
  const child: ChildProcessByStdio<Writable, Readable, Readable> = spawn(binary, [...(options.args ?? [])], {
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(options.env !== undefined ? { env: options.env } : {}),
  });
  const waiting: { resolve: (answer: unknown) => void; reject: (e: Error) => void }[] = [];
  let stderr = '';
  let ended: Error | undefined;
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS);
  });
  const fail = (error: Error) => {
    ended ??= error;
    for (const w of waiting.splice(0)) w.reject(error);
  };
  // Settled when the process is gone: it exited, or it never started (then no 'exit' comes).
  let gone!: () => void;
  const exited = new Promise<void>((resolveGone) => {
    gone = resolveGone;
  });
  child.on('error', (error) => {
    fail(new Error(`cannot run ${name} ${binary}: ${error.message}`));
    if (child.pid === undefined) gone();
  });
  child.on('exit', (code, signal) => {
    fail(new Error(`${name} exited (${signal ?? `exit ${code}`})${stderr === '' ? '' : `: ${stderr.trim()}`}`));
    gone();
  });
  child.stdin.on('error', (error) => {
    fail(new Error(`cannot write to ${name}: ${error.message}`));
  });
  createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
    const next = waiting.shift();
    if (next === undefined) {
      fail(new Error(`${name} answered with nothing asked: ${line.slice(0, 200)}`));
      return;
    }
    let answer: unknown;
    try {
      answer = JSON.parse(line);
    } catch {
      next.reject(new Error(`${name} answered with something that is not JSON: ${line.slice(0, 200)}`));
      return;
    }
    next.resolve(answer);
  });
  return {
    ask(message) {
      if (ended !== undefined) return Promise.reject(ended);
      return new Promise<unknown>((resolveAnswer, reject) => {
        waiting.push({ resolve: resolveAnswer, reject });
        child.stdin.write(`${JSON.stringify(message)}\n`);
      });
    },
    fail,
    close() {
      child.stdin.end();
      return exited;
    },
  };
}
