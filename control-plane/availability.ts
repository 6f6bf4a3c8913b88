/**
 * Whether the real control plane can run here (see test/global-setup.mjs).
 * Suites that need it use `describeWithControlPlane`, which skips them with
 * the reason in the test name rather than passing silently.
 */
import { describe } from '@jest/globals';

export const noControlPlaneReason = process.env.SIDECARSET_NO_CONTROL_PLANE;

export const describeWithControlPlane: typeof describe =
  noControlPlaneReason === undefined
    ? describe
    : (((name: string, fn: () => void) => {
        describe.skip(`${name} [NOT RUN: ${noControlPlaneReason}]`, fn);
      }) as unknown as typeof describe);
