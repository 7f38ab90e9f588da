import { backoffDelayMs } from './backoff';

describe('backoffDelayMs', () => {
  const lowest = () => 0;
  const highest = () => 0.999999;

  it('doubles from the base with each attempt', () => {
    const ceilings = [1, 2, 3, 4].map((attempt) => backoffDelayMs(attempt, { baseMs: 100, maxMs: 10_000, random: highest }));
    expect(ceilings.map(Math.round)).toEqual([100, 200, 400, 800]);
  });

  it('never waits longer than the cap, however many attempts', () => {
    expect(backoffDelayMs(40, { baseMs: 100, maxMs: 5000, random: highest })).toBeLessThanOrEqual(5000);
    expect(backoffDelayMs(10_000, { baseMs: 100, maxMs: 5000, random: highest })).toBeLessThanOrEqual(5000);
  });

  it('with equal jitter (the default), waits in the upper half of the doubled pause', () => {
    expect(backoffDelayMs(3, { baseMs: 100, maxMs: 10_000, random: lowest })).toBe(200);
    expect(backoffDelayMs(3, { baseMs: 100, maxMs: 10_000, random: () => 0.5 })).toBe(300);
  });

  it('with full jitter, waits anywhere from 0 to the doubled pause', () => {
    expect(backoffDelayMs(3, { baseMs: 100, maxMs: 10_000, jitter: 'full', random: lowest })).toBe(0);
    expect(backoffDelayMs(3, { baseMs: 100, maxMs: 10_000, jitter: 'full', random: () => 0.5 })).toBe(200);
  });

  it('draws a different pause for callers that failed together', () => {
    const pauses = new Set(Array.from({ length: 20 }, () => backoffDelayMs(5, { baseMs: 100, maxMs: 10_000 })));
    expect(pauses.size).toBeGreaterThan(1);
    for (const pause of pauses) expect(pause).toBeGreaterThanOrEqual(800);
  });
});
