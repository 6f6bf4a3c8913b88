// The integration part of `npm test`: the suites that run a real etcd and
// kube-apiserver (control-plane/), named *.integration.test.ts. The global
// setup builds the control plane once before any of them starts.
import base from './jest.config.js';

/** @type {import('jest').Config} */
export default {
  ...base,
  testMatch: ['**/*.integration.test.ts'],
};
