// The integration part of `npm test`: the suites that run a real etcd and
// kube-apiserver (control-plane/), named *.integration.test.ts. The global
// setup builds the control plane once before any of them starts.
import base from './jest.config.js';

/** @type {import('jest').Config} */
export default {
  ...base,
  testMatch: ['**/*.integration.test.ts'],
  // A suite's hooks start and stop real control planes and local stacks: about a second to stop here, but in
  // loaded full runs a stop passed jest's 30 s three times (the suites' tests had all passed). Tests that
  // check a time bound assert it themselves.
  testTimeout: 120000,
};
