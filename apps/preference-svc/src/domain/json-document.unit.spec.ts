import { DomainError } from '@udp/eventsourcing';
import { depthOf, deleteJsonPathMatches, getAt, isDefinite, parsePath, queryJsonPath, setAt } from './json-document';

const kindOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error instanceof DomainError ? `${error.kind}:${error.field ?? ''}` : String(error);
  }
  return 'no error';
};

describe('paths', () => {
  it('drops one leading slash (read shape) and refuses empty segments and paths past the depth limit', () => {
    expect(parsePath(['', 'a', '0'], { maxPathDepth: 4 })).toEqual(['a', '0']);
    expect(parsePath(['favorites', 'urn:show:1', 'date'], { maxPathDepth: 4 })).toEqual(['favorites', 'urn:show:1', 'date']);
    expect(kindOf(() => parsePath(['a', '', 'b'], { maxPathDepth: 4 }))).toBe('Invalid:path');
    expect(kindOf(() => parsePath(['a', ''], { maxPathDepth: 4 }))).toBe('Invalid:path');
    expect(kindOf(() => parsePath(['a', 'b', 'c', 'd', 'e'], { maxPathDepth: 4 }))).toBe('LimitExceeded:path');
  });

  it('reads own fields and indexes only', () => {
    const doc = { a: [{ b: 1 }], s: 'x' };
    expect(getAt(doc, ['a', '0', 'b'])).toEqual({ found: true, value: 1 });
    expect(getAt(doc, ['a', '1'])).toEqual({ found: false });
    expect(getAt(doc, ['a', '01'])).toEqual({ found: false });
    expect(getAt(doc, ['s', 'length'])).toEqual({ found: false });
    expect(getAt(doc, ['constructor'])).toEqual({ found: false });
    expect(getAt(doc, ['__proto__'])).toEqual({ found: false });
  });

  it('treats __proto__ as a plain field name: no prototype pollution', () => {
    const written = setAt({}, ['__proto__', 'polluted'], true, 'replace');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // The copy's prototype is still a plain Object.prototype (structuredClone may build it in another realm).
    expect((written as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(Object.getPrototypeOf(written))).toBeNull();
    expect(getAt(written, ['__proto__', 'polluted'])).toEqual({ found: true, value: true });
    const merged = setAt({ a: {} }, ['a'], JSON.parse('{"__proto__":{"polluted":true}}'), 'merge');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(merged)).toBe('{"a":{"__proto__":{"polluted":true}}}');
  });

  it('never changes the document it was given', () => {
    const doc = { a: { b: 1 } };
    setAt(doc, ['a', 'c'], 2, 'replace');
    expect(doc).toEqual({ a: { b: 1 } });
  });

  it('measures depth without recursion, even for a very deep value', () => {
    expect(depthOf(1)).toBe(0);
    expect(depthOf({ a: [1, { b: 2 }] })).toBe(3);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(depthOf(deep)).toBe(100_000);
  });
});

const jsonPathLimits = { maxJsonPathSteps: 100_000, maxJsonPathResultBytes: 64 * 1024 };

describe('JSONPath', () => {
  const doc = { theme: 'dark', favorites: { 'urn:show:1': { date: 5 } }, list: [{ id: 1 }, { id: 2 }] };

  it('answers the value of a definite expression and the matches of any other', () => {
    expect(queryJsonPath(doc, '$.theme', jsonPathLimits)).toBe('dark');
    expect(queryJsonPath(doc, "$.favorites['urn:show:1'].date", jsonPathLimits)).toBe(5);
    expect(queryJsonPath(doc, '$.list[1]', jsonPathLimits)).toEqual({ id: 2 });
    expect(queryJsonPath(doc, '$..id', jsonPathLimits)).toEqual([1, 2]);
    expect(queryJsonPath(doc, '$.list[*].id', jsonPathLimits)).toEqual([1, 2]);
    expect(queryJsonPath(doc, '$..nothing', jsonPathLimits)).toEqual([]);
  });

  it('answers 404 for a definite expression that names nothing', () => {
    expect(kindOf(() => queryJsonPath(doc, '$.nothing', jsonPathLimits))).toBe('NotFound:');
  });

  it('classifies expressions', () => {
    expect(isDefinite('$.a.b[0]')).toBe(true);
    expect(isDefinite("$['a:b']")).toBe(true);
    for (const e of ['$..a', '$.*', '$.a[0,1]', '$.a[1:]', '$[?(@.a)]']) expect(isDefinite(e)).toBe(false);
  });

  it('cannot run code: a script-injection expression is refused and the process lives', () => {
    const exit = jest.spyOn(process, 'exit').mockImplementation((() => {
      throw new Error('process.exit was called');
    }) as never);
    try {
      for (const expression of [
        "$..[?(@.constructor.constructor('return process')().exit())]",
        "$[(@.constructor.constructor('return process')().exit())]",
        '$[?(@.id==1)]',
      ]) {
        expect(kindOf(() => queryJsonPath(doc, expression, jsonPathLimits))).toBe('Invalid:jsonpath');
        expect(kindOf(() => deleteJsonPathMatches(doc, expression, jsonPathLimits))).toBe('Invalid:jsonpath');
      }
      expect(exit).not.toHaveBeenCalled();
    } finally {
      exit.mockRestore();
    }
  });

  it('refuses an evaluation past its budget of steps, or an answer past its size, naming the limit', () => {
    let chain: Record<string, unknown> = { zz: 1 };
    for (let i = 0; i < 31; i++) chain = { a: chain };
    const hostile = '$' + '..a'.repeat(7) + '..zz';
    expect(kindOf(() => queryJsonPath(chain, hostile, jsonPathLimits))).toBe('LimitExceeded:jsonpath');
    expect(kindOf(() => deleteJsonPathMatches(chain, hostile, jsonPathLimits))).toBe('LimitExceeded:jsonpath');
    expect(() => queryJsonPath(chain, hostile, jsonPathLimits)).toThrow(/more than 100000 steps.*PREFERENCE_MAX_JSONPATH_STEPS/);
    // A 4 KiB subtree matched 32 times (the most indexes in a union): 128 KiB of answer, past a limit of 64 KiB.
    const big = { list: [{ text: 'x'.repeat(4096) }] };
    const many = '$.list' + `[${Array(32).fill(0).join(',')}]`;
    expect(() => queryJsonPath(big, many, jsonPathLimits)).toThrow(/larger than 65536 bytes.*PREFERENCE_MAX_JSONPATH_RESULT_BYTES/);
    expect(deleteJsonPathMatches(big, many, jsonPathLimits).removed).toBe(1);
  });

  it('deletes nothing where an expression names a character of a string (it was a TypeError, a 500)', () => {
    for (const expression of ['$.theme[0]', '$.theme.length'])
      expect(deleteJsonPathMatches(doc, expression, jsonPathLimits)).toEqual({ document: doc, removed: 0, root: false });
  });
});
