/**
 * The local server's caller secret store: a file beside its certificate
 * (`<tls-dir>/webhook-secret`), holding a bare secret or the same JSON as the
 * Secrets Manager secret, so that rotation runs the same way on both.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { SecretStore } from '../auth/rotation.ts';

/** Writes atomically (write, then rename), so a reader never sees half a secret. */
async function writeAtomically(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, text, { mode: 0o600 });
  await rename(tmp, path);
}

export function fileSecretStore(path: string): SecretStore {
  return {
    read: () => readFile(path, 'utf8'),
    write: (text) => writeAtomically(path, text),
  };
}

/**
 * The file's secret, generated (32 random bytes, base64url) when the file
 * does not exist yet, stamped with its time so that its first rotation comes
 * one period later.
 */
export async function ensureSecretFile(path: string, now: Date = new Date()): Promise<void> {
  try {
    await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await writeAtomically(path, `${JSON.stringify({ current: randomBytes(32).toString('base64url'), rotatedAt: now.toISOString() })}\n`);
  }
}
