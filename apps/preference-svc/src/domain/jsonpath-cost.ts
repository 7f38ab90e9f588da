import { JSONPath } from 'jsonpath-plus';

/**
 * The work jsonpath-plus would do to evaluate an expression on a document, counted before it runs, so that
 * one request cannot hold the event loop (docs/preference-svc.md, "JSONPath": the cost of an evaluation).
 *
 * jsonpath-plus evaluates depth first: one `_trace` call per (node, position in the expression), and it never
 * merges duplicates, so `$..a..a..a` on a chain of 31 `a` visits about C(31, 3) nodes, and each further `..a` or a
 * union `[0,0,0]` multiplies the work. This count follows the same tokens (`JSONPath.toPathArray`) and the
 * same branches as `_trace`, but carries a multiplicity per distinct node instead of one call per duplicate,
 * and stops as soon as the count passes the budget: it costs at most about `budget` steps itself, whatever
 * the expression. A step of an expression of 32 tokens or more counts more than one (see `weight`). Where the library could take either of two branches (a field literally named `*` or `..`),
 * both are counted, so the count is an upper bound of the library's calls.
 */
export interface JsonPathCost {
  /** Steps: `_trace` calls of the library plus the children its descent looks at (an upper bound), or the
   *  first count past the budget. */
  steps: number;
  /** Matches (with duplicates, as the library answers them). */
  results: number;
  /** The distinct matched values and how many times each is matched: what a GET answers. */
  matches: Map<unknown, number>;
  /** True when the count stopped at the budget: the expression must not be evaluated. */
  overBudget: boolean;
}

const SLICE = /^(-?\d*):(-?\d*):?(\d*)$/u;
const hasOwn = (value: unknown, name: string | number) =>
  Boolean(value) && (typeof value === 'object' || typeof value === 'string') && Object.prototype.hasOwnProperty.call(value, name);

/** The children `_walk` visits, one at a time (a huge array is not copied before the budget is charged). */
function forEachChild(value: unknown, f: (child: unknown) => void): void {
  if (Array.isArray(value)) {
    for (const child of value) f(child);
  } else if (value !== null && typeof value === 'object') {
    for (const key in value) if (Object.prototype.hasOwnProperty.call(value, key)) f((value as Record<string, unknown>)[key]);
  }
}

/** The range `_slice` visits (same arithmetic as the library: a missing or zero step is 1). */
function sliceRange(loc: string, length: number): { start: number; end: number; step: number } {
  const [startText, endText, stepText] = loc.split(':');
  const step = (stepText && Number.parseInt(stepText)) || 1;
  const start = (startText && Number.parseInt(startText)) || 0;
  const end = (endText && Number.parseInt(endText)) || length;
  return {
    start: start < 0 ? Math.max(0, start + length) : Math.min(length, start),
    end: end < 0 ? Math.max(0, end + length) : Math.min(length, end),
    step,
  };
}

class OverBudget extends Error {}

export function jsonPathCost(document: unknown, expression: string, budget: number): JsonPathCost {
  const tokens = JSONPath.toPathArray(expression);
  // The library caches every parsed expression forever; evaluate() parses it again when it runs.
  delete JSONPath.cache[expression];
  if (tokens[0] === '$' && tokens.length > 1) tokens.shift();

  // The library copies the rest of the expression at every call: in a long expression a step costs more
  // (docs/performance.md, "JSONPath").
  const weight = 1 + Math.floor(tokens.length / 32);
  let steps = 0;
  const charge = (count: number) => {
    steps += count * weight;
    if (steps > budget) throw new OverBudget();
  };

  let state = new Map<unknown, number>([[document, 1]]);
  try {
    for (const loc of tokens) {
      const next = new Map<unknown, number>();
      const add = (value: unknown, times: number) => next.set(value, (next.get(value) ?? 0) + times);
      for (const [value, times] of state) {
        charge(times);
        // A field literally named like the token (`*`, `..`, `0:2`...) may be followed instead: count it too.
        if (hasOwn(value, loc)) add((value as Record<string, unknown>)[loc], times);
        if (loc === '*') {
          forEachChild(value, (child) => {
            charge(times);
            add(child, times);
          });
        } else if (loc === '..') {
          // `..` traces the rest at the node and recurses into every child of type "object" (null included):
          // the library looks at every child (a step), and calls itself again on those objects (another).
          add(value, times);
          const visit = (node: unknown) =>
            forEachChild(node, (child) => {
              charge(times);
              if (typeof child !== 'object') return;
              charge(times);
              add(child, times);
              visit(child);
            });
          visit(value);
        } else if (loc === '$') {
          add(value, times);
        } else if (SLICE.test(loc)) {
          if (!Array.isArray(value)) continue;
          const { start, end, step } = sliceRange(loc, value.length);
          for (let index = start; index < end; index += step) {
            charge(times);
            add(value[index], times);
          }
        } else if (loc.includes(',')) {
          for (const part of loc.split(',')) {
            charge(times);
            if (hasOwn(value, part)) add((value as Record<string, unknown>)[part], times);
          }
        }
      }
      state = next;
      if (state.size === 0) break;
    }
    let results = 0;
    for (const times of state.values()) results += times;
    // The library makes one more call per match (the end of the expression) and shapes each match.
    charge(results);
    return { steps, results, matches: state, overBudget: false };
  } catch (error) {
    if (!(error instanceof OverBudget)) throw error;
    return { steps, results: 0, matches: new Map(), overBudget: true };
  }
}
