/**
 * The expression language of OpenKruise 1.9's `resourcesPolicy`
 * (pkg/util/calculator): `+ - * /`, parentheses, unary minus, `max`, `min`,
 * numbers, percentages (`50%` is 0.5), quantities (`1.5Gi`) and the caller's
 * variables (`cpu` or `memory`), with the calculator's results and errors.
 *
 * Written from the behaviour of Kruise's goyacc grammar and lexer, as a
 * shift-reduce parser over an explicit stack: the text is a SidecarSet
 * author's, evaluated on every pod the set injects, so nesting costs no
 * recursion, the text is bounded ({@link MAX_RESOURCE_EXPR_BYTES} bytes,
 * {@link MAX_RESOURCE_EXPR_DEPTH} open parentheses, each refused with the
 * position) and the cost is linear in it.
 *
 * What is kept from Kruise because it decides results:
 * - the lexer reads bytes: a UTF-8 byte is a Latin-1 character to it, and a
 *   NUL byte ends the expression;
 * - a number the lexer takes but Go cannot parse (`2x`, `1e`, `.`) is 0;
 * - a number becomes a quantity as `int64(n * 1000)` thousandths, and a
 *   quantity times or over a number is `int64(milli * n)` thousandths in the
 *   quantity's format;
 * - `max`/`min` return the larger/smaller operand itself (`>=`/`<=`: the
 *   left one on a tie);
 * - on a syntax error, what the parser reduced before seeing it still runs,
 *   and the last semantic error (`division by zero`, `undefined variable`)
 *   is reported in preference to the syntax error, as goyacc's default
 *   reductions make it;
 * - a negative result is an error.
 * Where Go's int64 arithmetic would wrap (milli values past 9.2e18) this
 * reports an error instead (lib/kube/quantity-arith.ts).
 */
import { canonicalQuantity, compareQuantities, parseQuantity, type Quantity } from '../kube/quantity.ts';
import {
  addQuantities,
  goInt64,
  milliQuantity,
  milliValue,
  negateQuantity,
  QuantityRangeError,
  quantitySign,
} from '../kube/quantity-arith.ts';

/** The longest expression evaluated, in UTF-8 bytes (Kruise sets none; real ones are a few dozen). */
export const MAX_RESOURCE_EXPR_BYTES = 1_000;
/** The most parentheses (groups and calls) open at once. */
export const MAX_RESOURCE_EXPR_DEPTH = 32;

/** A calculator value: a plain number or a Kubernetes quantity. */
export type ExprValue = { readonly kind: 'number'; readonly n: number } | { readonly kind: 'quantity'; readonly q: Quantity };

export type ExprResult = { readonly ok: true; readonly value: ExprValue } | { readonly ok: false; readonly error: string };

/** Go's resource.ErrFormatWrong, the error of every quantity the lexer takes and Go cannot parse. */
const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const QUANTITY_UNITS: ReadonlySet<string> = new Set(['m', 'k', 'M', 'G', 'T', 'P', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi']);

const isDigitByte = (b: number): boolean => b >= 0x30 && b <= 0x39;
/** unicode.IsLetter of the byte read as a Latin-1 rune. */
function isLetterByte(b: number): boolean {
  return (
    (b >= 0x41 && b <= 0x5a) ||
    (b >= 0x61 && b <= 0x7a) ||
    b === 0xaa ||
    b === 0xb5 ||
    b === 0xba ||
    (b >= 0xc0 && b <= 0xd6) ||
    (b >= 0xd8 && b <= 0xf6) ||
    b >= 0xf8
  );
}
/** unicode.IsSpace of the byte read as a Latin-1 rune. */
function isSpaceByte(b: number): boolean {
  return (b >= 0x09 && b <= 0x0d) || b === 0x20 || b === 0x85 || b === 0xa0;
}

type Token =
  | { readonly t: 'num' | 'qty' | 'ident'; readonly text: string }
  | { readonly t: 'char'; readonly c: number }
  | { readonly t: 'eof' };

/** Kruise's lexer over the UTF-8 bytes, with Go's line and column (1-based, counting bytes). */
class Lexer {
  readonly #bytes: Uint8Array;
  #pos = 0;
  line = 1;
  col = 1;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  #peek(): number {
    return this.#pos < this.#bytes.length ? (this.#bytes[this.#pos] ?? 0) : 0;
  }

  #next(): number {
    if (this.#pos >= this.#bytes.length) return 0;
    const b = this.#bytes[this.#pos++] ?? 0;
    if (b === 0x0a) {
      this.line++;
      this.col = 1;
    } else {
      this.col++;
    }
    return b;
  }

  #text(start: number): string {
    return latin1(this.#bytes.subarray(start, this.#pos));
  }

  next(): Token {
    while (this.#peek() !== 0 && isSpaceByte(this.#peek())) this.#next();
    const b = this.#next();
    if (b === 0) return { t: 'eof' };
    if (b === 0x2e || isDigitByte(b)) {
      this.#pos--;
      this.col--;
      const text = this.#readNumber();
      return { t: isQuantityText(text) ? 'qty' : 'num', text };
    }
    if (isLetterByte(b)) {
      this.#pos--;
      this.col--;
      const start = this.#pos;
      for (let p = this.#peek(); p !== 0 && (isLetterByte(p) || isDigitByte(p) || p === 0x5f); p = this.#peek()) this.#next();
      return { t: 'ident', text: this.#text(start) };
    }
    return { t: 'char', c: b };
  }

  /** Digits with one point, an exponent with its sign, one percent sign, then letters as a unit. */
  #readNumber(): string {
    const start = this.#pos;
    let seenDot = false;
    let seenE = false;
    let seenPercent = false;
    let expectExponent = false;
    for (;;) {
      const r = this.#peek();
      if (r === 0) break;
      if (isDigitByte(r)) {
        expectExponent = false;
      } else if (r === 0x2e) {
        if (seenDot || seenE || seenPercent) break;
        seenDot = true;
      } else if (r === 0x65 || r === 0x45) {
        if (seenE || seenPercent) break;
        seenE = true;
        expectExponent = true;
      } else if (r === 0x2b || r === 0x2d) {
        if (!expectExponent) break;
        expectExponent = false;
      } else if (r === 0x25) {
        if (seenPercent) break;
        seenPercent = true;
      } else if (isLetterByte(r)) {
        if (expectExponent) break;
        while (isLetterByte(this.#peek())) this.#next();
        break;
      } else {
        break;
      }
      this.#next();
    }
    return this.#text(start);
  }
}

function latin1(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return s;
}

/** The lexer's test: numeric characters, then one of Kubernetes' units up to P/Pi. */
function isQuantityText(s: string): boolean {
  let end = 0;
  while (end < s.length && /[0-9.eE+-]/.test(s.charAt(end))) end++;
  if (end === 0 || end === s.length) return false;
  return QUANTITY_UNITS.has(s.slice(end));
}

/** Go's strconv.ParseFloat on the shapes the lexer can produce; undefined where Go fails. */
function goParseFloat(s: string): number | undefined {
  return /^(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(s) ? Number(s) : undefined;
}

/** The calculator's parseNumber, its error ignored as the grammar ignores it: 0. */
function numberOf(text: string): number {
  if (text.endsWith('%')) return (goParseFloat(text.slice(0, -1)) ?? 0) / 100;
  return goParseFloat(text) ?? 0;
}

/** Go's `%g` of a float64 (strconv 'g', shortest). */
export function goFormatG(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [mantissa = '', exp = '0'] = n.toExponential().split('e');
  const exponent = Number(exp);
  // Shortest %g switches to an exponent below 1e-4 and from 1e6 on (Go's eprec of 6 for the shortest form).
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+';
    const digits = String(Math.abs(exponent)).padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(n);
}

/** What is on the parser's stack besides operands. */
type Frame =
  | { readonly kind: 'binary'; readonly op: '+' | '-' | '*' | '/' }
  | { readonly kind: 'negate' }
  | { readonly kind: 'group' }
  | { readonly kind: 'call'; readonly name: string; readonly args: (ExprValue | null)[] };

const PLUS = 0x2b;
const MINUS = 0x2d;
const TIMES = 0x2a;
const DIVIDE = 0x2f;
const OPEN = 0x28;
const CLOSE = 0x29;
const COMMA = 0x2c;

/** Go's strings.ToLower, close enough for names (only ASCII ones can be variables or functions). */
function lower(name: string): string {
  return new TextDecoder().decode(Uint8Array.from(name, (c) => c.charCodeAt(0))).toLowerCase();
}

/** One evaluation: the calculator's state (the last semantic error wins, as in Kruise). */
class Evaluation {
  lastError: string | undefined;
  readonly #variables: ReadonlyMap<string, ExprValue>;

  constructor(variables: ReadonlyMap<string, ExprValue>) {
    this.#variables = variables;
  }

  fail(message: string): null {
    this.lastError = message;
    return null;
  }

  variable(name: string): ExprValue | null {
    const key = lower(name);
    return this.#variables.get(key) ?? this.fail(`undefined variable: ${key}`);
  }

  quantity(text: string): ExprValue | null {
    const q = parseQuantity(text);
    return q === undefined ? this.fail(QUANTITY_FORMAT_ERROR) : { kind: 'quantity', q };
  }

  binary(op: '+' | '-' | '*' | '/', l: ExprValue | null, r: ExprValue | null): ExprValue | null {
    if (l === null || r === null) return null;
    switch (op) {
      case '+':
      case '-': {
        if (l.kind === 'number' && r.kind === 'number') return { kind: 'number', n: op === '+' ? l.n + r.n : l.n - r.n };
        const right = asQuantity(r);
        return { kind: 'quantity', q: addQuantities(asQuantity(l), op === '+' ? right : negateQuantity(right)) };
      }
      case '*':
        if (l.kind === 'quantity' && r.kind === 'quantity') return this.fail('multiplication of two quantities');
        if (l.kind === 'quantity') return scaled(l.q, (milli) => milli * (r as { n: number }).n);
        if (r.kind === 'quantity') return scaled(r.q, (milli) => milli * l.n);
        return { kind: 'number', n: l.n * r.n };
      case '/':
        if (r.kind === 'quantity') return this.fail('division by quantity');
        if (r.n === 0) return this.fail('division by zero');
        if (l.kind === 'quantity') return scaled(l.q, (milli) => milli / r.n);
        return { kind: 'number', n: l.n / r.n };
    }
  }

  call(name: string, args: readonly (ExprValue | null)[]): ExprValue | null {
    const fn = lower(name);
    if (fn !== 'max' && fn !== 'min') return this.fail(`unknown function: ${name}`);
    if (args.length !== 2) return this.fail(`${fn} function requires exactly 2 arguments, got ${args.length}`);
    const [l = null, r = null] = args;
    if (l === null || r === null) return null;
    if (l.kind === 'number' && r.kind === 'number') {
      if (fn === 'max') return l.n >= r.n ? l : r;
      return l.n <= r.n ? l : r;
    }
    const left = asQuantity(l);
    const right = asQuantity(r);
    const order = compareQuantities(left, right);
    const pickLeft = fn === 'max' ? order >= 0 : order <= 0;
    return { kind: 'quantity', q: pickLeft ? left : right };
  }
}

/** A number as the calculator turns it into a quantity: int64(n * 1000) thousandths, DecimalSI. */
function asQuantity(v: ExprValue): Quantity {
  return v.kind === 'quantity' ? v.q : milliQuantity(goInt64(v.n * 1000), 'DecimalSI');
}

/** SetMilli(int64(f(float64(MilliValue())))) on a copy: the quantity's format is kept. */
function scaled(q: Quantity, f: (milli: number) => number): ExprValue {
  return { kind: 'quantity', q: milliQuantity(goInt64(f(Number(milliValue(q)))), q.format) };
}

/** Renders an expression for an error message: quoted and cut short. */
function quoted(expr: string): string {
  return JSON.stringify(expr.length > 80 ? `${expr.slice(0, 80)}...` : expr);
}

/**
 * Evaluates a resource expression with these variables (keys lower case),
 * as Kruise's calculator.Parse does: the value, or Kruise's error text.
 * Never throws; cost is linear in the expression, which is refused past
 * {@link MAX_RESOURCE_EXPR_BYTES} bytes or {@link MAX_RESOURCE_EXPR_DEPTH}
 * open parentheses.
 */
export function evaluateResourceExpr(expr: string, variables: ReadonlyMap<string, ExprValue>): ExprResult {
  const bytes = new TextEncoder().encode(expr);
  if (bytes.length > MAX_RESOURCE_EXPR_BYTES) {
    return { ok: false, error: `expression too long: ${bytes.length} bytes, at most ${MAX_RESOURCE_EXPR_BYTES}` };
  }
  try {
    return evaluate(bytes, expr, variables);
  } catch (error) {
    if (error instanceof QuantityRangeError) return { ok: false, error: error.message };
    throw error;
  }
}

function evaluate(bytes: Uint8Array, expr: string, variables: ReadonlyMap<string, ExprValue>): ExprResult {
  return new ExprParse(bytes, expr, variables).run();
}

/**
 * One evaluation: an operator-precedence parse over a stack of operands and
 * one of frames (pending operators, open parentheses and calls), reducing as
 * goyacc's grammar in Kruise does.
 */
class ExprParse {
  private readonly expr: string;
  private readonly lexer: Lexer;
  private readonly calc: Evaluation;
  private readonly operands: (ExprValue | null)[] = [];
  private readonly frames: Frame[] = [];
  private depth = 0;
  private lookahead: Token | undefined;

  constructor(bytes: Uint8Array, expr: string, variables: ReadonlyMap<string, ExprValue>) {
    this.expr = expr;
    this.lexer = new Lexer(bytes);
    this.calc = new Evaluation(variables);
  }

  run(): ExprResult {
    for (;;) {
      const operand = this.operand();
      if (operand === false) continue;
      if (operand !== true) return operand;
      const after = this.afterOperand();
      if (after !== undefined) return after;
    }
  }

  /** Expecting an operand: true once a factor is complete, false after a prefix (minus, parenthesis, call), else the error. */
  private operand(): boolean | ExprResult {
    const t = this.token();
    if (t.t === 'char' && t.c === MINUS) {
      this.frames.push({ kind: 'negate' });
      return false;
    }
    if (t.t === 'char' && t.c === OPEN) return this.open({ kind: 'group' });
    if (t.t === 'num') this.factorDone({ kind: 'number', n: numberOf(t.text) });
    else if (t.t === 'qty') this.factorDone(this.calc.quantity(t.text));
    else if (t.t === 'ident') {
      const after = this.lexer.next();
      if (after.t === 'char' && after.c === OPEN) return this.open({ kind: 'call', name: t.text, args: [] });
      this.lookahead = after;
      this.factorDone(this.calc.variable(t.text));
    } else return this.syntaxError();
    return true;
  }

  /** An opening parenthesis (of a group or a call): false, or the error when too deep. */
  private open(frame: Frame): false | ExprResult {
    if (++this.depth > MAX_RESOURCE_EXPR_DEPTH) return tooDeep(this.expr, this.lexer);
    this.frames.push(frame);
    return false;
  }

  /** Expecting an operator, a closing parenthesis, a comma or the end: undefined when an operand comes next, else the result. */
  private afterOperand(): ExprResult | undefined {
    for (;;) {
      const t = this.token();
      if (t.t === 'char' && (t.c === TIMES || t.c === DIVIDE)) {
        for (let top = this.frames.at(-1); top?.kind === 'binary' && (top.op === '*' || top.op === '/'); top = this.frames.at(-1)) this.reduceOperator(top);
        this.frames.push({ kind: 'binary', op: t.c === TIMES ? '*' : '/' });
        return undefined;
      }
      if (t.t === 'char' && (t.c === PLUS || t.c === MINUS)) {
        this.reduceToParenthesis();
        this.frames.push({ kind: 'binary', op: t.c === PLUS ? '+' : '-' });
        return undefined;
      }
      this.reduceToParenthesis();
      const open = this.frames.at(-1);
      if (t.t === 'char' && t.c === CLOSE && open !== undefined) {
        this.frames.pop();
        this.depth--;
        const value = this.pop();
        this.factorDone(open.kind === 'call' ? this.calc.call(open.name, [...open.args, value]) : value);
        continue;
      }
      if (t.t === 'char' && t.c === COMMA && open?.kind === 'call' && open.args.length === 0) {
        open.args.push(this.pop());
        return undefined;
      }
      if (t.t === 'eof' && open === undefined) return finish(this.pop(), this.calc);
      return this.syntaxError();
    }
  }

  private token(): Token {
    const t = this.lookahead ?? this.lexer.next();
    this.lookahead = undefined;
    return t;
  }

  private pop(): ExprValue | null {
    return this.operands.pop() ?? null;
  }

  /** Reduces the top frame, an operator. */
  private reduceOperator(frame: Frame): void {
    this.frames.pop();
    if (frame.kind === 'negate') {
      const v = this.pop();
      this.operands.push(v === null ? null : v.kind === 'number' ? { kind: 'number', n: -v.n } : { kind: 'quantity', q: negateQuantity(v.q) });
    } else if (frame.kind === 'binary') {
      const r = this.pop();
      const l = this.pop();
      this.operands.push(this.calc.binary(frame.op, l, r));
    }
  }

  /** Every pending operator down to the innermost open parenthesis (goyacc's default reductions). */
  private reduceToParenthesis(): void {
    for (let top = this.frames.at(-1); top !== undefined && (top.kind === 'binary' || top.kind === 'negate'); top = this.frames.at(-1)) this.reduceOperator(top);
  }

  /** A factor is complete: unary minus binds to it at once. */
  private factorDone(value: ExprValue | null): void {
    this.operands.push(value);
    for (let top = this.frames.at(-1); top?.kind === 'negate'; top = this.frames.at(-1)) this.reduceOperator(top);
  }

  private syntaxError(): ExprResult {
    return { ok: false, error: this.calc.lastError ?? `parse error: syntax error at line ${this.lexer.line}, col ${this.lexer.col}` };
  }
}

function tooDeep(expr: string, lexer: Lexer): ExprResult {
  return {
    ok: false,
    error: `expression ${quoted(expr)} nests more than ${MAX_RESOURCE_EXPR_DEPTH} parentheses (at line ${lexer.line}, col ${lexer.col})`,
  };
}

/** The calculator's last checks: a semantic error, then a negative result. */
function finish(result: ExprValue | null, calc: Evaluation): ExprResult {
  if (result === null) return { ok: false, error: calc.lastError ?? 'no result from parser' };
  if (result.kind === 'quantity' && quantitySign(result.q) < 0) {
    return { ok: false, error: `calculation result is negative: ${canonicalQuantity(result.q)}` };
  }
  if (result.kind === 'number' && result.n < 0) return { ok: false, error: `calculation result is negative: ${goFormatG(result.n)}` };
  return { ok: true, value: result };
}
