import { prefixSuccessor } from './prefix-range';

/** SQLite's order of TEXT (BINARY collation): the UTF-8 bytes'. */
const below = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')) < 0;
const inRange = (name: string, prefix: string) => {
  const successor = prefixSuccessor(prefix);
  return !below(name, prefix) && (successor === undefined || below(name, successor));
};

describe('prefixSuccessor', () => {
  it('bounds exactly the names that start with the prefix, for every pair over the edges of the code space', () => {
    const alphabet = [
      '',
      'a',
      '\u0000',
      '\u007F',
      '\u0080',
      '\u07FF',
      '\u0800',
      '\uD7FF',
      '\uE000',
      '\uFFFD',
      '\uFFFF',
      '\u{10000}',
      '\u{1F3A7}',
      '\u{10FFFF}',
    ];
    const strings = alphabet.flatMap((a) => alphabet.map((b) => `x${a}${b}`));
    const mismatches = strings.flatMap((prefix) =>
      strings.filter((name) => inRange(name, prefix) !== name.startsWith(prefix)).map((name) => ({ prefix, name })),
    );
    expect(mismatches).toEqual([]);
  });

  it('skips the surrogates, and has none for a prefix of U+10FFFF only', () => {
    expect(prefixSuccessor('a\uD7FF')).toBe('a\uE000');
    expect(prefixSuccessor('a\u{10FFFF}\u{10FFFF}')).toBe('b');
    expect(prefixSuccessor('\uFFFF')).toBe('\u{10000}');
    expect(prefixSuccessor('\u{10FFFF}')).toBeUndefined();
    expect(prefixSuccessor('')).toBeUndefined();
  });
});
