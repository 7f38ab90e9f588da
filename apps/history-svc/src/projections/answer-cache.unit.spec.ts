import { HistoryAnswers } from './answer-cache';

describe('answers already given (HistoryAnswers)', () => {
  it('gives an answer back only for the version and query it was read for, and to its user only', () => {
    const answers = new HistoryAnswers(1_000_000);
    const g = answers.generation();
    expect(answers.remember('alice', '7', 'limit=1', '{"a":1}', g)).toBe('{"a":1}');
    expect(answers.get('alice', '7', 'limit=1')).toBe('{"a":1}');
    expect(answers.get('alice', '8', 'limit=1')).toBeUndefined(); // the history changed
    expect(answers.get('alice', '7', 'limit=2')).toBeUndefined();
    expect(answers.get('bob', '7', 'limit=1')).toBeUndefined();
    expect(answers.get('alice:limit=1', '7', '')).toBeUndefined();
    expect(answers.get('alice\u0000limit=1', '7', '')).toBeUndefined();
    answers.remember('5:bob:', '1', 'x', 'tricky', g);
    expect([answers.get('5', '1', 'bob::x'), answers.holds('5'), answers.holds('5:bob:')]).toEqual([undefined, false, true]);
  });

  it('forgets every answer of an erased user, and keeps none read while an erasure ran', () => {
    const answers = new HistoryAnswers(1_000_000);
    const before = answers.generation();
    answers.remember('alice', '7', 'limit=1', 'a1', before);
    answers.remember('alice', '7', 'with_deleted=true', 'a2', before);
    answers.remember('alicia', '3', 'limit=1', 'b1', before);
    answers.forget('alice');
    expect([answers.holds('alice'), answers.get('alice', '7', 'with_deleted=true'), answers.get('alicia', '3', 'limit=1')]).toEqual([
      false,
      undefined,
      'b1',
    ]);
    // Read before that erasure, answered after it: not kept
    answers.remember('carol', '1', '', 'c', before);
    expect(answers.holds('carol')).toBe(false);
  });

  it('keeps within its room, the least recently asked going first, and no answer larger than a tenth of it', () => {
    const answers = new HistoryAnswers(10_000);
    const g = answers.generation();
    for (let i = 0; i < 100; i++) answers.remember(`u${i}`, '1', '', 'x'.repeat(500), g);
    const kept = Array.from({ length: 100 }, (_, i) => answers.holds(`u${i}`)).filter(Boolean).length;
    expect(kept).toBeGreaterThan(5);
    expect(kept).toBeLessThan(20);
    expect(answers.holds('u99')).toBe(true);
    expect(answers.holds('u0')).toBe(false);
    answers.remember('big', '1', '', 'x'.repeat(1001), g);
    expect(answers.holds('big')).toBe(false);
  });
});
