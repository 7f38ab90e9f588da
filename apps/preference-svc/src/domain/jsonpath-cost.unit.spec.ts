import { JSONPath } from 'jsonpath-plus';
import { jsonPathCost } from './jsonpath-cost';

/** Counts the library's own `_trace` calls and the children its descent looks at, the work the count bounds. */
function libraryWork(document: unknown, expression: string): { work: number; results: number } {
  const proto = JSONPath.prototype as unknown as {
    _trace: (...args: unknown[]) => unknown;
    _walk: (value: unknown, f: (key: unknown) => void) => unknown;
  };
  const trace = proto._trace;
  const walk = proto._walk;
  let work = 0;
  proto._trace = function (this: unknown, ...args: unknown[]) {
    work++;
    return trace.apply(this, args);
  };
  proto._walk = function (this: unknown, value: unknown, f: (key: unknown) => void) {
    return walk.call(this, value, (key: unknown) => {
      work++;
      f(key);
    });
  };
  try {
    const results = JSONPath({ path: expression, json: document as object, eval: false, wrap: true, resultType: 'value' }) as unknown[];
    return { work, results: results.length };
  } finally {
    proto._trace = trace;
    proto._walk = walk;
  }
}

const nested = (depth: number): Record<string, unknown> => {
  let document: Record<string, unknown> = { zz: 1 };
  for (let i = 0; i < depth; i++) document = { a: document };
  return document;
};

describe('jsonPathCost: the work of an evaluation, counted before it runs', () => {
  const document = {
    a: { a: [1, { a: 2, b: [3, 4, { a: null }] }], b: 'text', c: { a: 5 } },
    list: [{ id: 1 }, { id: 2 }, { id: 3, a: { a: { a: 7 } } }],
    s: 'abc',
    n: null,
  };
  const expressions = [
    '$',
    '$.a',
    '$..a',
    '$..a..a',
    '$..*',
    '$.*.*',
    '$..[0]',
    '$.list[*].id',
    '$.list[0:2]',
    '$.list[-2:]',
    '$.list[::2]',
    '$.list[0,0,1,2,5]',
    '$..a[0,1,0]',
    "$['a'].c",
    "$['..']",
    '$.*..a',
    '$.s.length',
    '$.s[0]',
    '$.n..a',
    '$..a..a..a..a',
  ];

  it.each(expressions)('is the work the library does, with its number of results: %s', (expression) => {
    const cost = jsonPathCost(document, expression, 1e9);
    const library = libraryWork(document, expression);
    expect(cost.overBudget).toBe(false);
    expect(cost.results).toBe(library.results);
    expect(cost.steps).toBeGreaterThanOrEqual(library.work);
    // ... and not above it by more than the final calls it adds: the count is the library's work, not a guess.
    expect(cost.steps).toBeLessThanOrEqual(library.work + cost.results);
  });

  it.each(['$.*.*', '$.*..a', '$..a..a', "$['*'].a", "$.*['..']"])(
    'is an upper bound where a field is named like a token (`*`, `..`): %s',
    (expression) => {
      const tricky = { a: { '*': { a: 1, '..': { a: 2 } }, '..': { a: 3, '*': [4] }, b: [{ a: 5 }] } };
      const cost = jsonPathCost(tricky, expression, 1e9);
      const library = libraryWork(tricky, expression);
      expect(cost.results).toBeGreaterThanOrEqual(library.results);
      expect(cost.steps).toBeGreaterThanOrEqual(library.work);
    },
  );

  it('grows with each descendant segment as the library does, and stops at the budget', () => {
    const chain = nested(31);
    const three = jsonPathCost(chain, '$..a..a..a..zz', 1e9);
    expect(three.steps).toBeGreaterThanOrEqual(libraryWork(chain, '$..a..a..a..zz').work);
    const eight = jsonPathCost(chain, '$..a..a..a..a..a..a..a..a..zz', 100_000);
    expect(eight).toMatchObject({ overBudget: true, results: 0 });
    expect(eight.steps).toBeGreaterThan(100_000);
  });

  it('counts duplicates of unions, which multiply without any descendant segment', () => {
    const document = { x: [[[[1]]]] };
    const cost = jsonPathCost(document, '$.x' + '[0,0,0,0,0,0,0,0,0,0]'.repeat(3), 1e9);
    expect(cost.results).toBe(1000);
    expect(cost.steps).toBeGreaterThanOrEqual(libraryWork(document, '$.x' + '[0,0,0,0,0,0,0,0,0,0]'.repeat(3)).work);
    // 10^4 matches: far past a budget of 10,000 steps, counted without making them.
    expect(jsonPathCost(document, '$.x' + '[0,0,0,0,0,0,0,0,0,0]'.repeat(4), 10_000).overBudget).toBe(true);
  });

  it('leaves nothing in the library cache', () => {
    jsonPathCost({ a: 1 }, '$.cache_probe_a', 100);
    expect(Object.keys(JSONPath.cache as object)).not.toContain('$.cache_probe_a');
  });
});
