/**
 * A directory that is the project as npm sees it (its package.json, its
 * node_modules and sources), so that `npm start` runs the real script but
 * writes .cache/local-cluster and .cache/local-server in a place of its own:
 * the checkout's .cache may be shared with other checkouts, and two embedded
 * clusters must not write one kubeconfig. The built control plane (and
 * kube-controller-manager) is linked.
 *
 * `sources: 'linked'` links the sources; `'copied'` copies them, as a fresh
 * clone has them: a script that runs only as the main module (its path
 * compared with import.meta) runs from a copy, not from a link.
 */
import { copyFile, cp, mkdir, mkdtemp, readdir, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Never copied: installed or built, large, and the same for every copy. */
const ALWAYS_LINKED = new Set(['node_modules']);
const LEFT_OUT = new Set(['.cache', '.git', 'dist', 'cdk.out', 'coverage']);

export async function projectCopy(projectRoot: string, prefix: string, sources: 'linked' | 'copied' = 'linked'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await copyFile(join(projectRoot, 'package.json'), join(dir, 'package.json'));
  for (const entry of await readdir(projectRoot)) {
    if (entry === 'package.json' || LEFT_OUT.has(entry)) continue;
    if (sources === 'linked' || ALWAYS_LINKED.has(entry)) await symlink(join(projectRoot, entry), join(dir, entry));
    else await cp(join(projectRoot, entry), join(dir, entry), { recursive: true });
  }
  await mkdir(join(dir, '.cache'));
  // The built binaries: etcd and kube-apiserver, and the kube-controller-manager npm start runs by default.
  for (const built of ['control-plane', 'kube-controller-manager']) await symlink(join(projectRoot, '.cache', built), join(dir, '.cache', built));
  return dir;
}
