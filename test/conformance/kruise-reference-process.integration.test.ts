/**
 * The Kruise reference's check that each answer is the next case's, against
 * a small real program standing in for the Go binary (named integration
 * because the reference's module builds with the control plane's tools).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKruiseReference } from '../../testkit/conformance/kruise-reference.ts';

describe('startKruiseReference', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kruise-reference-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** An executable that answers each case as `answer` (a JS expression of the case `q`) does. */
  async function reference(answer: string): Promise<string> {
    const file = join(dir, `reference-${Math.random().toString(36).slice(2)}`);
    await writeFile(file, `#!${process.execPath}\nrequire('node:readline').createInterface({ input: process.stdin }).on('line', (line) => { const q = JSON.parse(line); console.log(JSON.stringify(${answer})); });\n`);
    await chmod(file, 0o755);
    return file;
  }

  it('numbers the cases and hands back each case\'s answer', async () => {
    const kruise = startKruiseReference(await reference('{ id: q.id, op: q.op }'));
    await expect(kruise.ask({ op: 'first' } as never)).resolves.toEqual({ id: '0', op: 'first' });
    await expect(kruise.ask({ op: 'second' } as never)).resolves.toEqual({ id: '1', op: 'second' });
    await kruise.close();
  });

  it('refuses an answer to another case, and every case after it', async () => {
    const kruise = startKruiseReference(await reference("{ id: '7' }"));
    await expect(kruise.ask({ op: 'first' } as never)).rejects.toThrow('the Kruise reference answered case 7 when 0 was next');
    await expect(kruise.ask({ op: 'second' } as never)).rejects.toThrow('the Kruise reference answered case 7 when 0 was next');
    await kruise.close();
  });
});
