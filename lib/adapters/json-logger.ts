/**
 * JSON-lines logger, built once per cold start: one object per line with the
 * time, level and message, the fixed keys given at construction (function
 * name, ...) and the fields of the call. CloudWatch and `jq` read it as is.
 */
import type { Logger } from '../ports.ts';

export type LogSink = (line: string) => void;

/** One line to standard output, where Lambda's log agent reads it. */
export const stdoutSink: LogSink = (line) => {
  process.stdout.write(`${line}\n`);
};

export function jsonLogger(fixed: Record<string, unknown> = {}, sink: LogSink = stdoutSink, clock: () => Date = () => new Date()): Logger {
  const write = (level: string, message: string, fields?: Record<string, unknown>) => {
    let line: string;
    try {
      line = JSON.stringify({ time: clock().toISOString(), level, message, ...fixed, ...fields });
    } catch {
      // A field that cannot be serialised (a cycle, a BigInt) must not lose the line.
      line = JSON.stringify({ time: clock().toISOString(), level, message, ...fixed, fieldsError: 'unserialisable fields' });
    }
    sink(line);
  };
  return {
    info: (message, fields) => {
      write('info', message, fields);
    },
    warn: (message, fields) => {
      write('warn', message, fields);
    },
    error: (message, fields) => {
      write('error', message, fields);
    },
  };
}
