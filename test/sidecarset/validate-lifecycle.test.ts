/**
 * Lifecycle hooks and the actions probes share with them, plus the
 * container-list rules of Kubernetes 1.30's pod validation that Kruise 1.8
 * runs on sidecars (host ports, resize policies, name clashes): whole
 * messages, byte for byte.
 */
import { describe, expect, it } from '@jest/globals';
import { errorsFor } from './validate-fixture.ts';

type Row = [string, Record<string, unknown>, string[]];
const hook = 'spec.containers.1.lifecycle';
const at = 'spec.containers[1].lifecycle';

describe('lifecycle hooks', () => {
  it.each<Row>([
    ['accepts an exec preStop hook', { [hook]: { preStop: { exec: { command: ['sleep', '5'] } } } }, []],
    ['accepts a sleep preStop hook', { [hook]: { preStop: { sleep: { seconds: 5 } } } }, []],
    ['requires a handler', { [hook]: { postStart: {} } }, [`${at}.postStart: Required value: must specify a handler type`]],
    [
      'rejects two handlers',
      { [hook]: { preStop: { exec: { command: ['true'] }, sleep: { seconds: 1 } } } },
      [`${at}.preStop.sleep: Forbidden: may not specify more than 1 handler type`],
    ],
    ['requires an exec command', { [hook]: { preStop: { exec: { command: [] } } } }, [`${at}.preStop.exec.command: Required value`]],
    ['rejects a sleep of zero seconds', { [hook]: { preStop: { sleep: { seconds: 0 } } } }, [`${at}.preStop.sleep: Invalid value: 0: must be greater than 0`]],
    [
      'checks an httpGet hook as Kubernetes does: path, port and scheme',
      { [hook]: { postStart: { httpGet: { scheme: 'FTP', httpHeaders: [{ name: 'Bad Header', value: 'x' }] } } } },
      [
        `${at}.postStart.httpGet.path: Required value`,
        `${at}.postStart.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive`,
        `${at}.postStart.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS"`,
        `${at}.postStart.httpGet.httpHeaders: Invalid value: "Bad Header": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')`,
      ],
    ],
    [
      'rejects a grpc hook (probes only)',
      { [hook]: { preStop: { grpc: { port: 9000 } } } },
      [`${at}.preStop: Required value: must specify a handler type`],
    ],
    [
      'rejects a bad named port',
      { [hook]: { preStop: { tcpSocket: { port: 'Web' } } } },
      [`${at}.preStop.tcpSocket.port: Invalid value: "Web": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`],
    ],
    [
      'rejects a hook on a run-to-completion init container',
      { 'spec.initContainers.0.lifecycle': { preStop: { exec: { command: ['true'] } } } },
      ['spec.initContainers[0].lifecycle: Forbidden: may not be set for init containers without restartPolicy=Always'],
    ],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });
});

describe('container list rules', () => {
  it.each<Row>([
    [
      'rejects one host port taken by two app containers',
      {
        'spec.containers.0.ports.0.hostPort': 8080,
        'spec.containers.1.ports': [{ containerPort: 9090, hostPort: 8080, protocol: 'TCP' }],
      },
      ['spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"'],
    ],
    ['accepts one host port on two protocols', { 'spec.containers.0.ports.0.hostPort': 8080, 'spec.containers.1.ports': [{ containerPort: 9090, hostPort: 8080, protocol: 'UDP' }] }, []],
    [
      'reports an init container host port clash at index 0, as Kubernetes does',
      {
        'spec.initContainers.1': {
          name: 'second-init',
          image: 'busybox:1.36',
          imagePullPolicy: 'IfNotPresent',
          terminationMessagePolicy: 'File',
          upgradeStrategy: { upgradeType: 'ColdUpgrade' },
          ports: [
            { containerPort: 1, hostPort: 7000, protocol: 'TCP' },
            { containerPort: 2, hostPort: 7000, protocol: 'TCP' },
          ],
        },
      },
      ['spec.initContainers[0].ports[1].hostPort: Duplicate value: "TCP//7000"'],
    ],
    ['accepts a resize policy', { 'spec.containers.1.resizePolicy': [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }] }, []],
    [
      'rejects an unknown resize resource and a repeated one',
      {
        'spec.containers.1.resizePolicy': [
          { resourceName: 'gpu', restartPolicy: 'NotRequired' },
          { resourceName: 'gpu', restartPolicy: 'Sometimes' },
        ],
      },
      [
        'spec.containers[1].resizePolicy: Unsupported value: "gpu": supported values: "cpu", "memory"',
        'spec.containers[1].resizePolicy[1]: Duplicate value: "gpu"',
        'spec.containers[1].resizePolicy: Unsupported value: "gpu": supported values: "cpu", "memory"',
        'spec.containers[1].resizePolicy: Unsupported value: "Sometimes": supported values: "NotRequired", "RestartContainer"',
      ],
    ],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });
});
