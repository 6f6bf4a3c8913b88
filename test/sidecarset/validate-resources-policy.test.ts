import { describe, expect, it } from '@jest/globals';
import { errorsFor, startingWith } from './validate-fixture.ts';

type Row = [string, Record<string, unknown>, string[]];

const RP = 'spec.containers.1.resourcesPolicy';
const at = 'spec.containers[1].resourcesPolicy';
const policy = (exprs: Record<string, unknown>, regex: unknown = '^app.*$', mode: unknown = 'sum') => ({
  targetContainersMode: mode,
  targetContainersNameRegex: regex,
  resourcesExpr: exprs,
});

/** The cases of Kruise 1.9's sidecarset_resources_policy_test.go, with its messages. */
describe('resourcesPolicy validation (OpenKruise 1.9)', () => {
  it.each<Row>([
    ['accepts sum mode with limits and requests', { [RP]: policy({ limits: { cpu: 'max(cpu*50%, 50m)', memory: 'max(memory*50%, 100Mi)' }, requests: { cpu: 'max(cpu*50%, 50m)', memory: 'max(memory*50%, 100Mi)' } }) }, []],
    ['accepts max mode with only limits', { [RP]: policy({ limits: { cpu: 'cpu*50%' } }, '^app.*$', 'max') }, []],
    ['accepts only requests', { [RP]: policy({ requests: { cpu: 'max(cpu*50%, 50m)', memory: '100Mi' } }, '.*') }, []],
    ['accepts a complex expression', { [RP]: policy({ limits: { cpu: '0.5*cpu - 0.3*max(0, cpu-4) + 0.3*max(0, cpu-8)', memory: 'max(memory*50%, 100Mi)' } }) }, []],
    ['accepts a native init sidecar with a policy', { 'spec.initContainers.0.restartPolicy': 'Always', 'spec.updateStrategy.type': 'NotUpdate', 'spec.initContainers.0.resourcesPolicy': policy({ limits: { cpu: 'cpu' } }) }, []],
    ['refuses an empty regex', { [RP]: policy({ limits: { cpu: 'cpu*50%' } }, '') }, [`${at}.targetContainersNameRegex: Required value: invalid empty regex`]],
    ['refuses an absent regex (the API server writes ".*" first)', { [RP]: { targetContainersMode: 'sum', resourcesExpr: { limits: { cpu: 'cpu*50%' } } } }, [`${at}.targetContainersNameRegex: Required value: invalid empty regex`]],
    [
      'refuses a pattern Go cannot compile, in Go\'s words',
      { [RP]: policy({ limits: { cpu: 'cpu*50%' } }, '[invalid(regex') },
      [`${at}.targetContainersNameRegex: Invalid value: "[invalid(regex": invalid regex pattern: error parsing regexp: missing closing ]: \`[invalid(regex\``],
    ],
    [
      'refuses a pattern too large to match cheaply (stricter than Kruise)',
      { [RP]: policy({ limits: { cpu: 'cpu' } }, '(a{999}|b{999}|c{999})') },
      [`${at}.targetContainersNameRegex: Invalid value: "(a{999}|b{999}|c{999})": invalid regex pattern: the pattern compiles to 3003 instructions, at most 2000`],
    ],
    [
      'refuses resources beside a policy',
      { 'spec.containers.0.resourcesPolicy': policy({ limits: { cpu: 'cpu*50%' } }) },
      ['spec.containers[0].resourcesPolicy: Invalid value: {"targetContainersMode":"sum","targetContainersNameRegex":"^app.*$","resourcesExpr":{"limits":{"cpu":"cpu*50%"}}}: resourcesPolicy and resources cannot be configured together'],
    ],
    ['refuses a policy without limits or requests', { [RP]: policy({}) }, [`${at}.resourcesExpr: Invalid value: {}: at least one of limits or requests must be configured`]],
    [
      'refuses an expression that does not parse',
      { [RP]: policy({ limits: { cpu: 'invalid expression @#$' } }) },
      [`${at}.resourcesExpr.limits.cpu: Invalid value: "invalid expression @#$": invalid expression: undefined variable: invalid`],
    ],
    [
      'refuses unbalanced parentheses, with the position',
      { [RP]: policy({ limits: { cpu: 'max(cpu*50%, 50m' } }) },
      [`${at}.resourcesExpr.limits.cpu: Invalid value: "max(cpu*50%, 50m": invalid expression: parse error: syntax error at line 1, col 17`],
    ],
    ['refuses max with one argument', { [RP]: policy({ limits: { cpu: 'max(cpu*50%)' } }) }, [`${at}.resourcesExpr.limits.cpu: Invalid value: "max(cpu*50%)": invalid expression: max function requires exactly 2 arguments, got 1`]],
    ['refuses an unknown variable', { [RP]: policy({ limits: { cpu: 'invalidvar * 50%' } }) }, [`${at}.resourcesExpr.limits.cpu: Invalid value: "invalidvar * 50%": invalid expression: undefined variable: invalidvar`]],
    ['refuses memory in a cpu field', { [RP]: policy({ requests: { cpu: 'memory' } }) }, [`${at}.resourcesExpr.requests.cpu: Invalid value: "memory": invalid expression: undefined variable: memory`]],
    ['refuses a bad memory expression in limits', { [RP]: policy({ limits: { memory: 'bad_memory_expr' } }) }, [`${at}.resourcesExpr.limits.memory: Invalid value: "bad_memory_expr": invalid expression: undefined variable: bad_memory_expr`]],
    // The variable is the number 1 when validating, so an expression negative for one core is refused.
    ['refuses an expression negative for a variable of 1', { [RP]: policy({ requests: { cpu: 'cpu - 2' } }) }, [`${at}.resourcesExpr.requests.cpu: Invalid value: "cpu - 2": invalid expression: calculation result is negative: -1`]],
    ['accepts what fails only on a pod (cpu * cpu)', { [RP]: policy({ limits: { cpu: 'cpu * cpu' } }) }, []],
    [
      'refuses a plain init container with a policy',
      { 'spec.initContainers.0.resourcesPolicy': policy({ limits: { cpu: 'cpu' } }) },
      ['spec.initContainers[0].resourcesPolicy: Invalid value: {"targetContainersMode":"sum","targetContainersNameRegex":"^app.*$","resourcesExpr":{"limits":{"cpu":"cpu"}}}: resourcesPolicy is only supported for containers with RestartPolicy Always'],
    ],
    ['requires targetContainersMode (the CRD schema)', { [RP]: { targetContainersNameRegex: '.*', resourcesExpr: { limits: { cpu: 'cpu' } } } }, [`${at}.targetContainersMode: Required value`]],
    ['refuses another mode (the CRD schema)', { [RP]: policy({ limits: { cpu: 'cpu' } }, '.*', 'avg') }, [`${at}.targetContainersMode: Unsupported value: "avg": supported values: "sum", "max"`]],
    ['requires resourcesExpr (the CRD schema)', { [RP]: { targetContainersMode: 'sum', targetContainersNameRegex: '.*' } }, [`${at}.resourcesExpr: Required value`]],
    ['refuses a policy that is not an object', { [RP]: 'sum' }, [`${at}: Invalid value: "sum": must be an object`]],
    ['refuses an expression that is not text', { [RP]: policy({ limits: { cpu: 2 } }) }, [`${at}.resourcesExpr.limits.cpu: Invalid value: 2: must be a string`]],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(startingWith(expected));
  });
});

describe('shareVolumeDevicePolicy validation (OpenKruise 1.9)', () => {
  it.each<Row>([
    ['accepts enabled', { 'spec.containers.1.shareVolumeDevicePolicy': { type: 'enabled' } }, []],
    ['accepts disabled', { 'spec.containers.1.shareVolumeDevicePolicy': { type: 'disabled' } }, []],
    ['accepts an empty policy (absent type)', { 'spec.containers.1.shareVolumeDevicePolicy': {} }, []],
    ['refuses another type', { 'spec.containers.1.shareVolumeDevicePolicy': { type: 'on' } }, ['spec.containers[1].shareVolumeDevicePolicy.type: Unsupported value: "on": supported values: "enabled", "disabled"']],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(startingWith(expected));
  });
});
