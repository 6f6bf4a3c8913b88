/**
 * goaws (github.com/Admiral-Piett/goaws v0.4.5), an SQS-compatible server,
 * for the queue's tests: built once from control-plane/tools/goaws (its own
 * Go module, served on loopback only) and cached under .cache/goaws/ as the
 * control plane's tools are (control-plane/build.ts), then one process per
 * suite on a free port. It speaks SQS's Query protocol only (no JSON), so
 * the clients talk to it with `protocol: 'query'` (lib/adapters/sqs-set-queue.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOne, isExecutable, moduleBinaryPath, requiredVersion } from '../../control-plane/build.ts';
import { SQSClient } from '@aws-sdk/client-sqs';
import { AwsQueryProtocol } from '@aws-sdk/core/protocols';
import { freePort } from '../free-port.ts';

const here = dirname(fileURLToPath(import.meta.url));
const MODULE_DIR = resolve(here, '..', '..', 'control-plane', 'tools', 'goaws');
const FILES = ['go.mod', 'go.sum', 'main.go'] as const;

let pending: Promise<string> | undefined;

/** Builds goaws once per module content (a minute on a cold Go cache) and returns its path. */
export function ensureGoaws(): Promise<string> {
  pending ??= (async () => {
    const version = requiredVersion(await readFile(join(MODULE_DIR, 'go.mod'), 'utf8'), 'github.com/Admiral-Piett/goaws');
    const binary = await moduleBinaryPath('goaws', version, MODULE_DIR, FILES, 'goaws');
    if (await isExecutable(binary)) return binary;
    await mkdir(dirname(binary), { recursive: true });
    await buildOne(`goaws ${version}`, MODULE_DIR, binary, '-s -w', '.');
    return binary;
  })();
  return pending;
}

export interface Goaws {
  /** The endpoint the SDK is pointed at. */
  endpoint: string;
  /** The URL of a queue the configuration made. */
  queueUrl(name: string): string;
  stop(): Promise<void>;
}

/** An SDK client for `goaws`: it speaks only SQS's Query protocol (AWS answers the SDK's JSON protocol). */
export function goawsClient(goaws: Goaws): SQSClient {
  return new SQSClient({
    endpoint: goaws.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    protocol: AwsQueryProtocol,
    protocolSettings: { defaultNamespace: 'com.amazonaws.sqs', xmlNamespace: 'http://queue.amazonaws.com/doc/2012-11-05/', version: '2012-11-05' },
  });
}

/** A queue made at start: FIFO when its name ends in .fifo; `visibilitySeconds` its visibility timeout. */
export interface GoawsQueue {
  name: string;
  visibilitySeconds?: number; // goaws 0.4.5 applies only its default (30 s) to queues made from its configuration
}

/** Starts goaws with `queues`; resolves once it answers. */
export async function startGoaws(queues: readonly GoawsQueue[]): Promise<Goaws> {
  const binary = await ensureGoaws();
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'goaws-'));
  const config = join(dir, 'goaws.yaml');
  const lines = queues.map((q) => `    - Name: ${q.name}\n      VisibilityTimeout: ${q.visibilitySeconds ?? 30}`);
  await writeFile(config, `Local:\n  Host: 127.0.0.1\n  Port: ${port}\n  Region: us-east-1\n  AccountId: "100010001000"\n  EnableDuplicates: false\n  Queues:\n${lines.join('\n')}\n`);
  const child: ChildProcess = spawn(binary, ['-config', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`goaws exited (${child.exitCode}): ${stderr}`);
    try {
      const answer = await fetch(`${endpoint}/?Action=ListQueues`, { signal: AbortSignal.timeout(1_000) });
      if (answer.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill();
      throw new Error(`goaws did not answer on ${endpoint} within 10 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint,
    queueUrl: (name) => `${endpoint}/100010001000/${name}`,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill();
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
