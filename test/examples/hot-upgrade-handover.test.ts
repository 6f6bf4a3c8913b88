/**
 * examples/hot-upgrade/handover.sh, run for real: child processes play a hot
 * sidecar's two containers through the steps of a swap, each with the
 * SIDECARSET_VERSION/_ALT values the pod's annotations give a container that
 * starts at that step, sharing one HANDOVER_DIR; as in a pod, at most two of
 * them (one per container) live at once. The "server" is a stand-in
 * that notes its start and stop in a log, so the suite sees which version
 * serves and that the two never serve at once.
 *
 * It runs under the machine's /bin/sh and, when busybox is installed, under
 * busybox's sh with only busybox's applets on the PATH, as in the example's
 * busybox image. A handover process is its own process group; afterEach kills
 * every group, servers included.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const script = join(projectRoot, 'examples/hot-upgrade/handover.sh');

/** Each wait allows this long for what takes well under a second (poll interval 0.1 s). */
const WAIT_MS = 20_000;

/**
 * The stand-in server: one line per start and stop in $SERVER_LOG, named by
 * the version of the container that runs it; its SIGTERM handling is set
 * before it says it started. SERVER_MODE=ignore-term makes it ignore
 * SIGTERM; exit-3 makes it exit with status 3 at once.
 */
const SERVER = `case \${SERVER_MODE-} in
  ignore-term) trap '' TERM ;;
  *) trap 'echo "stop $SIDECARSET_VERSION $$" >>"$SERVER_LOG"; exit 0' TERM ;;
esac
echo "start $SIDECARSET_VERSION $$" >>"$SERVER_LOG"
if [ "\${SERVER_MODE-}" = exit-3 ]; then exit 3; fi
while :; do sleep 1 & wait $!; done
`;

interface Shell {
  name: string;
  /** The sh that runs the script (and, through PATH, the server). */
  sh: string;
  path: string;
}

/** busybox's applets as the only commands on a PATH, when busybox is installed. */
function busyboxShell(root: string): Shell | undefined {
  const busybox = (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'busybox')).find((path) => existsSync(path));
  if (busybox === undefined) return undefined;
  const list = spawnSync(busybox, ['--list'], { encoding: 'utf8' });
  if (list.status !== 0) return undefined;
  const bin = join(root, 'busybox-bin');
  mkdirSync(bin);
  for (const applet of list.stdout.split('\n').filter((name) => /^[\w.[-]+$/.test(name))) symlinkSync(busybox, join(bin, applet));
  return { name: 'busybox sh', sh: join(bin, 'sh'), path: bin };
}

const root = mkdtempSync(join(tmpdir(), 'handover-'));
const shells: Shell[] = [{ name: '/bin/sh', sh: '/bin/sh', path: process.env.PATH ?? '' }];
const busybox = busyboxShell(root);
if (busybox !== undefined) shells.push(busybox);

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** A container's view of the versions: what the pod's annotations say when it starts. */
interface Versions {
  version: string;
  alt: string;
}

interface Container {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

describe.each(shells)('handover.sh under $name', (shell) => {
  let dir: string;
  let state: string;
  let serverLog: string;
  let serverScript: string;
  let running: Container[];

  beforeEach(() => {
    dir = mkdtempSync(join(root, 'case-'));
    state = join(dir, 'state');
    serverLog = join(dir, 'server.log');
    serverScript = join(dir, 'server.sh');
    writeFileSync(serverScript, SERVER);
    writeFileSync(serverLog, '');
    running = [];
  });

  afterEach(async () => {
    for (const c of running) {
      if (c.child.exitCode === null && c.child.signalCode === null) {
        try {
          process.kill(-(c.child.pid ?? 0), 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      await c.exited;
    }
    // The servers of containers that exited on their own were stopped by them; any left are in killed groups.
  });

  const env = (v: Versions, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    PATH: shell.path,
    HANDOVER_DIR: state,
    HANDOVER_POLL_INTERVAL: '0.1',
    SERVER_LOG: serverLog,
    SIDECARSET_VERSION: v.version,
    SIDECARSET_VERSION_ALT: v.alt,
    ...extra,
  });

  /** Starts a container running `handover.sh serve -- sh server.sh`. */
  function start(v: Versions, extra: Record<string, string> = {}): Container {
    const child = spawn(shell.sh, [script, 'serve', '--', 'sh', serverScript], { env: env(v, extra), detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.on('close', (code, signal) => {
        resolve({ code, signal });
      });
    });
    const c = { child, stderr: () => stderr, exited };
    running.push(c);
    return c;
  }

  /** `handover.sh ready` as the kubelet's probe runs it in that container. */
  function ready(v: Versions): { code: number | null; stdout: string } {
    const r = spawnSync(shell.sh, [script, 'ready'], { env: env(v), encoding: 'utf8', timeout: WAIT_MS });
    return { code: r.status, stdout: r.stdout };
  }

  /** The server log as [event, version] pairs, in order. */
  const events = (): string[][] =>
    readFileSync(serverLog, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.split(' ').slice(0, 2));

  /** The versions whose server runs, by the log. */
  const serving = (): string[] => {
    const on = new Set<string>();
    for (const [event, version] of events()) {
      if (event === 'start') on.add(version!);
      else on.delete(version!);
    }
    return [...on];
  };

  /** The largest number of servers that ran at once, by the log. */
  const mostAtOnce = (): number => {
    let now = 0;
    let most = 0;
    for (const [event] of events()) {
      now += event === 'start' ? 1 : -1;
      most = Math.max(most, now);
    }
    return most;
  };

  const file = (name: string): string | undefined => (existsSync(join(state, name)) ? readFileSync(join(state, name), 'utf8').trim() : undefined);

  async function waitFor(what: string, check: () => boolean): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (!check()) {
      if (Date.now() > deadline) {
        const logs = running.map((c, i) => `container ${i}:\n${c.stderr()}`).join('\n');
        throw new Error(`timed out after ${WAIT_MS} ms waiting until ${what}\nserver log: ${JSON.stringify(events())}\n${logs}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Waits until the container has logged `text` (its standard error reaches this process a little after it is written). */
  const logged = (c: Container, text: string): Promise<void> => waitFor(`a container logs "${text}"`, () => c.stderr().includes(text));

  const alive = (c: Container): boolean => c.child.exitCode === null && c.child.signalCode === null;

  // The values of the swap (docs/HOT-UPGRADE.md, "Handing over between the two containers").
  const fresh1: Versions = { version: '1', alt: '0' }; // x-1 at injection
  const empty2: Versions = { version: '0', alt: '1' }; // x-2 at injection
  const new2: Versions = { version: '48213', alt: '1' }; // x-2 after the upgrade write
  const old1: Versions = { version: '1', alt: '48213' }; // x-1 restarting after the upgrade write
  const emptied1: Versions = { version: '0', alt: '48213' }; // x-1 after the flip
  const new1: Versions = { version: '50117', alt: '48213' }; // x-1 after the next upgrade write

  it('a fresh start runs the server and is ready; the empty copy idles and is ready too', async () => {
    const x1 = start(fresh1);
    const x2 = start(empty2);
    await waitFor('version 1 serves', () => serving().join() === '1' && file('owner') === '1');
    await logged(x2, 'the empty copy: idle');
    expect(ready(fresh1)).toEqual({ code: 0, stdout: '' });
    expect(ready(empty2)).toEqual({ code: 0, stdout: '' });
    expect(alive(x1) && alive(x2)).toBe(true);
    expect(events().map(([e, v]) => `${e} ${v}`)).toEqual(['start 1']);
  });

  it('the new one asks, waits unready while the old one serves, and takes over once released; the old one idles, still ready', async () => {
    const x1 = start(fresh1);
    await waitFor('version 1 serves', () => serving().join() === '1');
    // Freeze the old container's script (its server runs on), so the moment before the release can be looked at.
    process.kill(x1.child.pid!, 'SIGSTOP');
    const x2 = start(new2);
    await waitFor('the new one has asked to take over', () => file('takeover') === '48213');
    await logged(x2, 'asking version 1 to release');
    expect(ready(new2)).toEqual({ code: 1, stdout: 'not ready: version 48213 has not taken over from version 1 yet\n' });
    expect(serving()).toEqual(['1']);
    expect(ready(fresh1).code).toBe(0);

    process.kill(x1.child.pid!, 'SIGCONT');
    await waitFor('version 48213 serves', () => serving().join() === '48213');
    expect(events().map(([e, v]) => `${e} ${v}`)).toEqual(['start 1', 'stop 1', 'start 48213']);
    expect({ owner: file('owner'), released: file('released'), takeover: file('takeover') }).toEqual({ owner: '48213', released: '48213', takeover: undefined });
    await waitFor('the new one is ready', () => ready(new2).code === 0);
    // The old container released and idles until the rollout replaces it, ready all along.
    await logged(x1, 'released the server to version 48213: idle');
    expect(alive(x1)).toBe(true);
    expect(ready(fresh1).code).toBe(0);

    // The flip: the kubelet stops x-1 (SIGTERM) and starts it with the empty image.
    process.kill(x1.child.pid!, 'SIGTERM');
    expect(await x1.exited).toEqual({ code: 0, signal: null });
    const emptied = start(emptied1);
    await logged(emptied, 'the empty copy: idle');
    expect(ready(emptied1).code).toBe(0);
    expect(serving()).toEqual(['48213']);
    expect(mostAtOnce()).toBe(1);
  });

  it('the next upgrade goes the other way: the container that took over hands over in turn, and stays ready', async () => {
    const first = start(fresh1);
    await waitFor('version 1 serves', () => serving().join() === '1');
    const x2 = start(new2);
    await waitFor('version 48213 serves', () => serving().join() === '48213');
    // The flip restarts x-1 as the empty copy; the next upgrade restarts it with version 50117. x-2 runs on with its first values.
    process.kill(first.child.pid!, 'SIGTERM');
    await first.exited;
    const emptied = start(emptied1);
    await logged(emptied, 'the empty copy: idle');
    process.kill(emptied.child.pid!, 'SIGTERM');
    expect(await emptied.exited).toEqual({ code: 0, signal: null });
    const x1 = start(new1);
    await waitFor('version 50117 serves', () => serving().join() === '50117');
    await waitFor('the newest one is ready', () => ready(new1).code === 0);
    expect(events().map(([e, v]) => `${e} ${v}`)).toEqual(['start 1', 'stop 1', 'start 48213', 'stop 48213', 'start 50117']);
    await logged(x2, 'released the server to version 50117: idle');
    expect(alive(x2) && alive(x1)).toBe(true);
    // x-2 still runs with the values it started with, and stays ready while it idles.
    expect(ready(new2).code).toBe(0);
    expect(mostAtOnce()).toBe(1);
  });

  it('an old container restarting mid-swap stays idle, never takes over, and releases at once for a new one still waiting', async () => {
    const first = start(fresh1);
    await waitFor('version 1 serves', () => serving().join() === '1');
    // x-1 crashes: its script and server die together, as a container's processes do.
    process.kill(-first.child.pid!, 'SIGKILL');
    await first.exited;
    // The new one would wait 10 minutes for a release: only the restarted old one can let it in sooner.
    const x2 = start(new2, { HANDOVER_TIMEOUT: '600' });
    await waitFor('the new one has asked to take over', () => file('takeover') === '48213');
    const x1 = start(old1);
    await waitFor('version 48213 serves', () => serving().includes('48213'));
    await logged(x1, 'restarted during a swap to version 48213: idle');
    await logged(x1, 'version 48213 asked to take over; this container runs no server: released');
    await logged(x2, 'version 1 released the server: taking over');
    await waitFor('the new one is ready', () => ready(new2).code === 0);
    expect(ready(old1).code).toBe(0);

    // Restarting again while the new one serves: still idle.
    process.kill(x1.child.pid!, 'SIGKILL');
    await x1.exited;
    const again = start(old1);
    await logged(again, 'restarted during a swap');
    await new Promise((resolve) => setTimeout(resolve, 1000)); // ten polls
    expect(alive(again)).toBe(true);
    expect(file('owner')).toBe('48213');
    // The first server was killed with its container (no stop line); the old one never started another.
    expect(events().map(([e, v]) => `${e} ${v}`)).toEqual(['start 1', 'start 48213']);
  });

  it('a new one that restarts after taking over serves again at once', async () => {
    start(fresh1);
    const first = start(new2);
    await waitFor('version 48213 serves', () => serving().join() === '48213');
    process.kill(-first.child.pid!, 'SIGKILL');
    await first.exited;
    const again = start(new2, { HANDOVER_TIMEOUT: '600' });
    await waitFor('version 48213 serves again', () => events().filter(([e, v]) => e === 'start' && v === '48213').length === 2);
    await logged(again, 'this version owns the server already (the container restarted): serving again');
    expect(ready(new2).code).toBe(0);
  });

  it('without a release the new one takes over after HANDOVER_TIMEOUT, and an owner that was only slow then stops its server', async () => {
    const x1 = start(fresh1);
    await waitFor('version 1 serves', () => serving().join() === '1');
    process.kill(x1.child.pid!, 'SIGSTOP');
    const x2 = start(new2, { HANDOVER_TIMEOUT: '1' });
    await waitFor('version 48213 serves', () => serving().includes('48213'));
    await logged(x2, 'no release from version 1 within 1s: taking over anyway');
    expect(file('takeover')).toBeUndefined();
    await waitFor('the new one is ready', () => ready(new2).code === 0);
    process.kill(x1.child.pid!, 'SIGCONT');
    await waitFor('version 1 stops', () => serving().join() === '48213');
    await logged(x1, 'version 48213 took over without a release: stopping the server');
    expect(alive(x1)).toBe(true);
    expect(events().map(([e, v]) => `${e} ${v}`)).toEqual(['start 1', 'start 48213', 'stop 1']);
  });

  it('a server that ignores SIGTERM is killed after HANDOVER_STOP_GRACE, then released', async () => {
    const x1 = start(fresh1, { SERVER_MODE: 'ignore-term', HANDOVER_STOP_GRACE: '1' });
    await waitFor('version 1 serves', () => serving().join() === '1');
    const serverPid = Number(readFileSync(serverLog, 'utf8').trim().split(' ')[2]);
    expect(serverPid).toBeGreaterThan(1);
    start(new2);
    await waitFor('version 48213 serves', () => serving().includes('48213'));
    await logged(x1, 'did not exit within 1s of SIGTERM: killing it');
    expect(() => process.kill(serverPid, 0)).toThrow();
    expect(file('released')).toBe('48213');
  });

  it('SIGTERM stops the server and exits 0; a new one still waiting withdraws its request', async () => {
    const x1 = start(fresh1);
    await waitFor('version 1 serves', () => serving().join() === '1');
    process.kill(x1.child.pid!, 'SIGSTOP');
    const x2 = start(new2);
    await waitFor('the new one has asked to take over', () => file('takeover') === '48213');
    process.kill(x2.child.pid!, 'SIGTERM');
    expect(await x2.exited).toEqual({ code: 0, signal: null });
    expect(file('takeover')).toBeUndefined();
    process.kill(x1.child.pid!, 'SIGCONT');
    // The owner, no longer asked, serves on until its own SIGTERM.
    await new Promise((resolve) => setTimeout(resolve, 1000)); // ten polls
    expect(serving()).toEqual(['1']);
    process.kill(x1.child.pid!, 'SIGTERM');
    expect(await x1.exited).toEqual({ code: 0, signal: null });
    expect(events().map(([e, v]) => `${e} ${v}`)).toEqual(['start 1', 'stop 1']);
    await logged(x1, 'stopping the server (signal)');
  });

  it('a server that exits by itself ends the container with its status, for the kubelet to restart it', async () => {
    const x1 = start(fresh1, { SERVER_MODE: 'exit-3' });
    expect(await x1.exited).toEqual({ code: 3, signal: null });
    await logged(x1, 'the server exited with status 3');
  });

  it('refuses to guess without its versions or with bad settings (exit 2, saying why)', () => {
    const run = (args: string[], extra: NodeJS.ProcessEnv) => spawnSync(shell.sh, [script, ...args], { env: { PATH: shell.path, HANDOVER_DIR: state, ...extra }, encoding: 'utf8', timeout: WAIT_MS });
    const noVersion = run(['ready'], {});
    expect({ code: noVersion.status, stderr: noVersion.stderr }).toEqual({ code: 2, stderr: expect.stringContaining('SIDECARSET_VERSION must be a decimal number, got ""') });
    const same = run(['serve', '--', 'true'], { SIDECARSET_VERSION: '7', SIDECARSET_VERSION_ALT: '7' });
    expect({ code: same.status, stderr: same.stderr }).toEqual({ code: 2, stderr: expect.stringContaining('are both 7: no role fits') });
    const badPoll = run(['serve', '--', 'true'], { SIDECARSET_VERSION: '1', SIDECARSET_VERSION_ALT: '0', HANDOVER_POLL_INTERVAL: 'soon' });
    expect({ code: badPoll.status, stderr: badPoll.stderr }).toEqual({ code: 2, stderr: expect.stringContaining('HANDOVER_POLL_INTERVAL must be a number of seconds') });
    for (const args of [[], ['serve'], ['serve', '--'], ['serve', 'true'], ['ready', 'now'], ['start']]) {
      const r = run(args, { SIDECARSET_VERSION: '1', SIDECARSET_VERSION_ALT: '0' });
      expect({ args, code: r.status, stderr: r.stderr }).toEqual({ args, code: 2, stderr: expect.stringContaining('usage: handover.sh serve -- COMMAND') });
    }
    expect(existsSync(join(state, 'owner'))).toBe(false);
  });
});
