import { illFormedJsonValue } from './input-text';

describe('illFormedJsonValue', () => {
  it('names the field of a lone surrogate, a bad key or an overflowed number, shallowest first', () => {
    expect(illFormedJsonValue({ a: [{ b: 'x\ud800' }], c: 1 })).toEqual({
      field: 'a[0].b',
      message: expect.stringMatching(/lone surrogate/),
    });
    expect(illFormedJsonValue({ deep: { er: { x: '\udc00' } }, top: Infinity })).toEqual({
      field: 'top',
      message: expect.stringMatching(/double/),
    });
    expect(illFormedJsonValue([1, [2, -Infinity]])).toEqual({ field: '[1][1]', message: expect.any(String) });
    expect(illFormedJsonValue({ ['k\udbff']: 1 })).toEqual({ field: 'k\ufffd', message: expect.stringMatching(/^the key/) });
    expect(illFormedJsonValue('\ud800')).toEqual({ field: 'body', message: expect.any(String) });
  });

  it('keeps well-formed text (pairs beyond U+FFFF, U+FFFF, U+FFFD), finite numbers and every other value', () => {
    for (const body of [{ a: '\u{10FFFF}\u{1F3A7}\uFFFF\uFFFD', b: [1.7976931348623157e308, -0, null, true] }, 'text', 5, null, []])
      expect(illFormedJsonValue(body)).toBeUndefined();
  });

  it('walks a body nested deeper than the stack, in time linear in its size', () => {
    const depth = 1_000_000;
    const nested = JSON.parse(`${'['.repeat(depth)}"\\ud800"${']'.repeat(depth)}`);
    expect(illFormedJsonValue(nested)?.field).toMatch(/^(\[0\]){1000000}$/);
  });
});
