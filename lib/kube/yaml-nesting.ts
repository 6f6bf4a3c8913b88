/**
 * How deeply YAML (or JSON) text nests, measured without recursion. The
 * `yaml` package composes documents recursively, so text nested a few
 * hundred levels deep exhausts V8's stack; some overflows then land inside
 * V8's regular-expression compiler, which ends the process instead of
 * throwing. Its CST parser keeps its own stack, so the depth is measured on
 * the CST first and deep text refused before composing.
 */
import { Parser, type CST } from 'yaml';

/** The deepest collection nesting in `text`, stopping early past `limit`. */
export function yamlNestingDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let max = 0;
  for (const root of new Parser().parse(text)) {
    const stack: [CST.Token | undefined, number][] = [[root, 0]];
    for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
      const [token, depth] = next;
      if (token === undefined) continue;
      if (token.type === 'document') {
        stack.push([token.value, depth]);
      } else if (token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection') {
        const inner = depth + 1;
        if (inner > max) max = inner;
        if (max > limit) return max;
        for (const item of token.items) {
          if ('key' in item) stack.push([item.key ?? undefined, inner]);
          stack.push([item.value, inner]);
        }
      }
    }
  }
  return max;
}
