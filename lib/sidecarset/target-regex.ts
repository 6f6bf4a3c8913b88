/**
 * `resourcesPolicy.targetContainersNameRegex`, matched as Kruise matches it
 * (Go's regexp: RE2 syntax, unanchored) with re2js, a JavaScript port of
 * RE2 whose matching is linear in the name. JavaScript's own RegExp
 * backtracks: a set author's `(a+)+$` would then cost exponential time on
 * every pod the set selects.
 *
 * RE2 is linear in the name times the compiled program, and counted
 * repetition makes the program large (`(a{999}|b{999})` is 2,000
 * instructions, compiled in about 100 ms and matched in as long), so the
 * pattern is bounded: {@link MAX_TARGET_REGEX_BYTES} bytes and a program of
 * {@link MAX_TARGET_REGEX_PROGRAM} instructions. Kruise sets no bound; a
 * container name is at most 63 characters, and `[a-z0-9-]{1,63}` is 127
 * instructions.
 */
import { RE2JS } from 're2js';

export const MAX_TARGET_REGEX_BYTES = 256;
export const MAX_TARGET_REGEX_PROGRAM = 2_000;
/**
 * Names longer than this are not matched: no valid container name is (a
 * DNS label is at most 63), the API server refuses such a pod anyway, and
 * the match stays cheap however long a hand-made name is.
 */
export const MAX_MATCHED_NAME_BYTES = 253;

export type TargetRegex = { readonly ok: true; readonly test: (name: string) => boolean } | { readonly ok: false; readonly error: string };

/** Compiled patterns, each compiled once per process (sets are few; a bounded map keeps a hostile stream of patterns from growing it). */
const compiled = new Map<string, TargetRegex>();
const MAX_COMPILED = 256;

function compile(pattern: string): TargetRegex {
  const bytes = new TextEncoder().encode(pattern).length;
  if (bytes > MAX_TARGET_REGEX_BYTES) return { ok: false, error: `the pattern is ${bytes} bytes long, at most ${MAX_TARGET_REGEX_BYTES} are allowed` };
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (error) {
    // re2js words its syntax errors as Go does: "error parsing regexp: missing closing ): `(`".
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  const size = re.programSize();
  if (size > MAX_TARGET_REGEX_PROGRAM) {
    return { ok: false, error: `the pattern compiles to ${size} instructions, at most ${MAX_TARGET_REGEX_PROGRAM} are allowed (counted repetitions such as {999} make it large)` };
  }
  return { ok: true, test: (name) => new TextEncoder().encode(name).length <= MAX_MATCHED_NAME_BYTES && re.test(name) };
}

/** The pattern compiled, or why it cannot be used (Go's regexp.Compile error text, or the bound it exceeds). */
export function targetRegex(pattern: string): TargetRegex {
  const known = compiled.get(pattern);
  if (known !== undefined) return known;
  const result = compile(pattern);
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  compiled.set(pattern, result);
  return result;
}
