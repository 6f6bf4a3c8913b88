/**
 * Switching from OpenKruise 1.9 (v1.9.0's own code; SidecarSets written and
 * stored as v1beta1) to this project and back, step by step, without
 * restarting a pod: the scenario is kruise-takeover-scenario.ts, shared with
 * Kruise 1.8.
 */
import { describeKruiseTakeover } from './kruise-takeover-scenario.ts';

describeKruiseTakeover('1.9');
