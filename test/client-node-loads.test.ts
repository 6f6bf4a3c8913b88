import { expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';

it('loads the ESM-only @kubernetes/client-node under jest on Node 22', () => {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
  expect(process.versions.node.split('.')[0]).toBe('22');
});
