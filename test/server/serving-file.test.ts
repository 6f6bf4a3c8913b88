import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeServingFile, runningServerPort, SERVING_FILE, writeServingFile } from '../../functions/server/serving-file.ts';

describe('the running npm start\'s port, kept beside its CA for manifests --local', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'serving-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is read back while its process runs, and removed by it', () => {
    writeServingFile(dir, 40123);
    expect(runningServerPort(dir)).toBe(40123);
    removeServingFile(dir);
    expect(existsSync(join(dir, SERVING_FILE))).toBe(false);
    expect(runningServerPort(dir)).toBeUndefined();
  });

  it('is not believed when its process is gone (a server killed outright), nor when it is not the expected JSON', async () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    await writeFile(join(dir, SERVING_FILE), JSON.stringify({ port: 40123, pid: Number(gone.stdout) }));
    expect(runningServerPort(dir)).toBeUndefined();
    await writeFile(join(dir, SERVING_FILE), '{"port":"8443"');
    expect(runningServerPort(dir)).toBeUndefined();
  });

  it('is left alone by a server that did not write it', async () => {
    await writeFile(join(dir, SERVING_FILE), JSON.stringify({ port: 40123, pid: process.ppid }));
    removeServingFile(dir);
    expect(runningServerPort(dir)).toBe(40123);
  });
});
