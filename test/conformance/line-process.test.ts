/**
 * The JSON-lines helper process both Kruise programs run as (the conformance
 * reference, the pod bench), against small real processes that answer as told.
 */
import { describe, expect, it } from '@jest/globals';
import { startLineProcess } from '../../testkit/line-process.ts';

/** A node process running `script`, which reads questions as JSON lines from `rl`. */
function node(script: string) {
  const prelude = "const rl = require('node:readline').createInterface({ input: process.stdin });";
  return startLineProcess(process.execPath, { name: 'the test helper', args: ['-e', `${prelude}\n${script}`] });
}

describe('startLineProcess', () => {
  it('answers each question with its own line, in order', async () => {
    const helper = node("rl.on('line', (line) => { console.log(JSON.stringify({ twice: JSON.parse(line).n * 2 })); });");
    await expect(Promise.all([helper.ask({ n: 1 }), helper.ask({ n: 2 }), helper.ask({ n: 3 })])).resolves.toEqual([{ twice: 2 }, { twice: 4 }, { twice: 6 }]);
    await helper.close();
  });

  it('rejects an answer that is not JSON, and goes on answering', async () => {
    const helper = node("let n = 0; rl.on('line', () => { console.log(n++ === 0 ? 'oops' : '{\"ok\":true}'); });");
    await expect(helper.ask({})).rejects.toThrow('the test helper answered with something that is not JSON: oops');
    await expect(helper.ask({})).resolves.toEqual({ ok: true });
    await helper.close();
  });

  it('rejects the questions waiting and every later one when the process exits, with its stderr', async () => {
    const helper = node("rl.on('line', () => { console.error('out of luck'); process.exit(3); });");
    await expect(helper.ask({})).rejects.toThrow('the test helper exited (exit 3): out of luck');
    await expect(helper.ask({})).rejects.toThrow('the test helper exited (exit 3)');
    await helper.close();
  });

  it('gives up on a process that answers what was not asked', async () => {
    const helper = node("console.log('{}'); rl.on('line', () => console.log('{}'));");
    await new Promise((resolve) => setTimeout(resolve, 300));
    await expect(helper.ask({})).rejects.toThrow('the test helper answered with nothing asked: {}');
    await helper.close();
  });

  it('says which program cannot be run', async () => {
    const helper = startLineProcess('/nonexistent/kruise-reference', { name: 'the Kruise reference' });
    await expect(helper.ask({})).rejects.toThrow(/^cannot run the Kruise reference \/nonexistent\/kruise-reference: .*ENOENT/);
    await helper.close();
  });

  it('rejects every question once failed', async () => {
    const helper = node("rl.on('line', () => console.log('{}'));");
    helper.fail(new Error('enough'));
    await expect(helper.ask({})).rejects.toThrow('enough');
    await helper.close();
  });
});
