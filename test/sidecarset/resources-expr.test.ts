import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { canonicalQuantity, parseQuantity } from '../../lib/kube/quantity.ts';
import { resourceExprArb } from '../../testkit/fuzz/arbitraries.ts';
import { evaluateResourceExpr, goFormatG, MAX_RESOURCE_EXPR_BYTES, MAX_RESOURCE_EXPR_DEPTH, type ExprValue } from '../../lib/sidecarset/resources-expr.ts';

const quantity = (text: string): ExprValue => ({ kind: 'quantity', q: parseQuantity(text)! });

/** The result as Kruise's Value.String() prints it (a number with %g, a quantity canonically), or the error. */
function evaluate(expr: string, variables: Record<string, string> = {}): string {
  const result = evaluateResourceExpr(expr, new Map(Object.entries(variables).map(([k, v]) => [k, quantity(v)])));
  if (!result.ok) return `error: ${result.error}`;
  return result.value.kind === 'number' ? goFormatG(result.value.n) : canonicalQuantity(result.value.q);
}

describe('Kruise 1.9 calculator results (the cases of pkg/util/calculator/calculator_test.go)', () => {
  it.each([
    ['2 + 3', '5'],
    ['10 - 4', '6'],
    ['3 * 4', '12'],
    ['15 / 3', '5'],
    ['(2 + 3) * 4', '20'],
    ['2 + 3 * 4', '14'],
    ['50%', '0.5'],
    ['100% * 2', '2'],
    ['50% * 200', '100'],
    ['max(10, 20)', '20'],
    ['min(10, 20)', '10'],
    ['1e2', '100'],
    ['1E2', '100'],
    ['min(max(max(max(0.5,0.5*0.5),0.5-1.0),0.5-1.0),3.0)', '0.5'],
    ['40m + 20m', '60m'],
    ['100m + 50m', '150m'],
    ['100Mi - 50Mi', '50Mi'],
    ['2 * 40m', '80m'],
    ['40m * 2', '80m'],
    ['100m / 2', '50m'],
    ['100m', '100m'],
    ['max(40m, 20)', '20'],
    ['min(40m, 20m)', '20m'],
    ['min(max(max(max(500m,0.5*0.5),0.5-1.0),0.5-1.0),3.0)', '500m'],
    ['20 - 10', '10'],
    ['10 - 10', '0'],
  ])('%s is %s', (expr, expected) => {
    expect(evaluate(expr)).toBe(expected);
  });

  it.each([
    ['cpu', { cpu: '100m' }, '100m'],
    ['cpu * 2', { cpu: '50m' }, '100m'],
    ['max(cpu, 200m)', { cpu: '100m' }, '200m'],
    ['min(max(max(max(0.5,0.5*cpu),cpu-1.0),cpu-1.0),3.0)', { cpu: '100m' }, '500m'],
    ['max(0.25, cpu)', { cpu: '100m' }, '250m'],
    ['max(cpu, 0.75)', { cpu: '500m' }, '750m'],
    ['min(0.8, cpu)', { cpu: '1.0' }, '800m'],
    ['min(cpu, 1.5)', { cpu: '2.0' }, '1500m'],
    ['max(min(2*cpu,-cpu+3.0),2*cpu-3.0)', { cpu: '1.5' }, '1500m'],
    ['max(min(2*cpu,3.0-cpu),2*cpu-3.0)', { cpu: '1.5' }, '1500m'],
    ['memory + 100Mi', { memory: '200Mi' }, '300Mi'],
    ['0.5 * memory + max(0, memory-2Gi)', { memory: '8Gi' }, '10Gi'],
    ['max(cpu*50%, 50m)', { cpu: '200m' }, '100m'],
    ['max(memory*50%, 100Mi)', { memory: '512Mi' }, '256Mi'],
    ['CPU * 50%', { cpu: '600m' }, '300m'],
  ])('%s with %j is %s', (expr, variables, expected) => {
    expect(evaluate(expr, variables)).toBe(expected);
  });
});

describe("Kruise's errors", () => {
  it.each([
    ['10 / 0', 'division by zero'],
    ['10m / 0', 'division by zero'],
    ['40m * 2m', 'multiplication of two quantities'],
    ['2 / 40m', 'division by quantity'],
    ['unknown(1, 2)', 'unknown function: unknown'],
    ['max(1)', 'max function requires exactly 2 arguments, got 1'],
    ['MIN(3)', 'min function requires exactly 2 arguments, got 1'],
    ['undefined_var', 'undefined variable: undefined_var'],
    ['Memory', 'undefined variable: memory'],
    ['-10', 'calculation result is negative: -10'],
    ['-100m', 'calculation result is negative: -100m'],
    ['10 - 20', 'calculation result is negative: -10'],
    ['50m - 100m', 'calculation result is negative: -50m'],
    ['0 - 1234567', 'calculation result is negative: -1.234567e+06'],
    ['5..5', 'parse error: syntax error at line 1, col 5'],
    ['5%%', 'parse error: syntax error at line 1, col 4'],
    ['(1 + 2', 'parse error: syntax error at line 1, col 7'],
    ['1 +', 'parse error: syntax error at line 1, col 4'],
    ['max()', 'parse error: syntax error at line 1, col 6'],
    ['max(1, 2, 3)', 'parse error: syntax error at line 1, col 10'],
    ['1\n  + )', 'parse error: syntax error at line 2, col 6'],
    ['', 'parse error: syntax error at line 1, col 1'],
    ['1 @ 2', 'parse error: syntax error at line 1, col 4'],
    // What goyacc reduced before the syntax error still ran: its error is the one reported.
    ['x + 1 )', 'undefined variable: x'],
    ['1/0 )', 'division by zero'],
    // The last semantic error wins.
    ['x + 1/0', 'division by zero'],
    ['1/0 + x', 'undefined variable: x'],
    ['1.5e3m', "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"],
  ])('%j: %s', (expr, error) => {
    expect(evaluate(expr, { cpu: '1' })).toBe(`error: ${error}`);
  });
});

describe("the lexer's quirks that decide results", () => {
  it.each([
    ['a number Go cannot parse is 0', '2x + 1', '1'],
    ['a lone point is 0', '. + 1', '1'],
    ['an exponent without digits is 0', '1e + 1', '1'],
    ['a percentage of an exponent', '1e2%', '1'],
    ['a NUL byte ends the expression', '1\u0000)', '1'],
    ['a number becomes thousandths, truncated', '1m + 0.0005', '1m'],
    ['a quantity times a number is truncated thousandths', '1m * 1.9', '1m'],
    ['a binary quantity keeps its format', '1Gi * 50%', '512Mi'],
    ['a binary quantity that is not whole prints in decimal', '1Ki / 3', '341333m'],
    ['the sum takes the left format', '1 + 1Ki', '1025'],
    ['a zero left takes the right format', '0 + 1Ki', '1Ki'],
    ['max keeps the left operand on a tie', 'max(1000m, 1)', '1'],
    ['max keeps the quantity itself, as written', 'max(cpu, 0)', '1.500'],
    ['unary minus binds to the factor', '-2 * -3', '6'],
    ['spaces, tabs and newlines', ' \t1\n+\r\n2 ', '3'],
    ['an overflowing number is infinite, and infinity times 0 is NaN, which is not negative', '1e400 * 0 + 1', 'NaN'],
  ])('%s: %j is %s', (_what, expr, expected) => {
    expect(evaluate(expr, { cpu: '1.500' })).toBe(expected);
  });
});

describe('bounds on an author-controlled expression', () => {
  it('refuses an expression longer than the limit, naming its length', () => {
    const expr = `1${' + 1'.repeat(MAX_RESOURCE_EXPR_BYTES)}`;
    expect(evaluate(expr)).toBe(`error: expression too long: ${expr.length} bytes, at most ${MAX_RESOURCE_EXPR_BYTES}`);
  });

  it('evaluates the longest expression allowed', () => {
    const terms = Math.floor((MAX_RESOURCE_EXPR_BYTES - 1) / 2);
    expect(evaluate(`1${'+1'.repeat(terms)}`)).toBe(String(terms + 1));
  });

  it('refuses parentheses nested past the limit with the position, without recursion', () => {
    const depth = MAX_RESOURCE_EXPR_DEPTH + 1;
    const expr = `${'('.repeat(depth)}1${')'.repeat(depth)}`;
    expect(evaluate(expr)).toBe(`error: expression ${JSON.stringify(expr)} nests more than ${MAX_RESOURCE_EXPR_DEPTH} parentheses (at line 1, col ${depth + 1})`);
    expect(evaluate(`${'('.repeat(MAX_RESOURCE_EXPR_DEPTH)}1${')'.repeat(MAX_RESOURCE_EXPR_DEPTH)}`)).toBe('1');
    expect(evaluate(`max(${'max('.repeat(MAX_RESOURCE_EXPR_DEPTH)}`)).toMatch(/nests more than/);
  });

  it('evaluates a thousand unary minus signs without recursion', () => {
    expect(evaluate(`${'-'.repeat(998)}5`)).toBe('5');
  });

  it('reports a milli value past int64 instead of wrapping as Go does', () => {
    expect(evaluate('cpu * 2', { cpu: '100P' })).toBe('error: the quantity is too large to compute with (over 9.2e15 in thousandths)');
  });
});

describe("Go's %g", () => {
  it.each([
    [5, '5'],
    [0.5, '0.5'],
    [-0.0001, '-0.0001'],
    [0.00001, '1e-05'],
    [123456, '123456'],
    [1234567, '1.234567e+06'],
    [1e21, '1e+21'],
    [-Infinity, '-Inf'],
  ])('%d prints %s', (n, text) => {
    expect(goFormatG(n)).toBe(text);
  });
});

/**
 * 400 generated expressions (operators, calls, quantities, lexer junk, NUL and
 * non-ASCII bytes) with the results OpenKruise v1.9.0's own calculator gave
 * for them: a Go program calling pkg/util/calculator, its value printed with
 * Value.String() or its error.
 */
describe('agreement with OpenKruise v1.9.0 on generated expressions', () => {
  const cases = JSON.parse(readFileSync(new URL('./resources-expr.kruise-1.9.0.json', import.meta.url), 'utf8')) as {
    expr: string;
    vars: Record<string, string | number>;
    kruise: { kind?: string; value?: string; error?: string };
  }[];

  it('gives the same value or error for every one', () => {
    const differences = cases.filter((c) => {
      const variables = new Map<string, ExprValue>(
        Object.entries(c.vars).map(([k, v]) => [k, typeof v === 'string' ? quantity(v) : { kind: 'number', n: v }]),
      );
      const result = evaluateResourceExpr(c.expr, variables);
      const ours = result.ok
        ? { kind: result.value.kind, value: result.value.kind === 'number' ? goFormatG(result.value.n) : canonicalQuantity(result.value.q) }
        : { error: result.error };
      return JSON.stringify(ours) !== JSON.stringify(c.kruise);
    });
    expect(cases).toHaveLength(400);
    expect(differences).toEqual([]);
  });
});

describe('any expression (fixed-seed fuzz over testkit resourceExprArb)', () => {
  it('gets a value or an error, never a throw, each in well under 50 ms', () => {
    fc.assert(
      fc.property(resourceExprArb, fc.constantFrom<[string, ExprValue][]>([], [['cpu', quantity('600m')]], [['memory', { kind: 'number', n: 1 }]]), (expr, vars) => {
        const started = performance.now();
        const result = evaluateResourceExpr(expr, new Map(vars));
        expect(performance.now() - started).toBeLessThan(50);
        if (!result.ok) expect(result.error.length).toBeGreaterThan(0);
      }),
      { seed: 20261201, numRuns: 400 },
    );
  });
});
