// The fast part of `npm test`: every suite except those that need the real
// control plane (named *.integration.test.ts; test/architecture checks the
// naming), so no Go toolchain and no etcd or kube-apiserver is involved.
import base from './jest.config.js';

/** @type {import('jest').Config} */
export default {
  ...base,
  testPathIgnorePatterns: ['/node_modules/', '\\.integration\\.test\\.ts$'],
  globalSetup: undefined,
};
