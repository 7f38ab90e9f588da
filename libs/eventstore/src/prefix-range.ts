/**
 * The least string above every string that starts with `prefix`, in code-point order (what SQLite's BINARY
 * collation compares: UTF-8 bytes, whose order is the code points'), or undefined when there is none (a prefix of
 * U+10FFFF only). `prefix` <= name < the successor then holds for exactly the names that start with `prefix`: the
 * prefix without its trailing U+10FFFF, its last code point plus one (the surrogates skipped, which no well-formed
 * string holds). `${prefix}\u{10FFFF}` is no such bound: `${prefix}\u{10FFFF}tail` lies above it (issue 27 #2).
 */
export function prefixSuccessor(prefix: string): string | undefined {
  const points = [...prefix];
  while (points.length > 0 && points[points.length - 1] === '\u{10FFFF}') points.pop();
  const last = points.pop();
  if (last === undefined) return undefined;
  const next = last.codePointAt(0)! + 1;
  return points.join('') + String.fromCodePoint(next >= 0xd800 && next <= 0xdfff ? 0xe000 : next);
}
