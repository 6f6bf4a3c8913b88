/**
 * Switching from OpenKruise 1.8 (v1.8.2's own code) to this project and
 * back, step by step, without restarting a pod: the scenario is
 * kruise-takeover-scenario.ts, shared with Kruise 1.9.
 */
import { describeKruiseTakeover } from './kruise-takeover-scenario.ts';

describeKruiseTakeover('1.8');
