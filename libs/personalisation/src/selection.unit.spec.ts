import { createHash } from 'node:crypto';
import { bucketOf, componentFor } from './selection';
import { FailureLimiter, secretMatches } from './secrets';

/** Deterministic UUID-shaped ids (the n-th id is always the same), so the split measured is the same every run. */
const idOf = (n: number) => {
  const h = createHash('sha256').update(`client-${n}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

describe('the A/B split', () => {
  const weights = { 'continue-watching': 30, 'recently-watched': 70 };

  it('gives the same u the same component every time', () => {
    for (let i = 0; i < 100; i++) {
      const u = idOf(i);
      const first = componentFor(weights, bucketOf('zzebu', 'continue_watching', u));
      expect(componentFor(weights, bucketOf('zzebu', 'continue_watching', u))).toBe(first);
      expect(componentFor(weights, bucketOf('zzebu', 'continue_watching', u.toUpperCase()))).toBe(first);
    }
  });

  it('splits 10,000 ids within 2 points of the configured ratio', () => {
    let first = 0;
    for (let i = 0; i < 10_000; i++)
      if (componentFor(weights, bucketOf('zzebu', 'continue_watching', idOf(i))) === 'continue-watching') first++;
    // Printed so a run shows the measured split.
    process.stdout.write(`A/B split over 10,000 ids: ${(first / 100).toFixed(2)} % for a configured 30 %\n`);
    expect(Math.abs(first / 10_000 - 0.3)).toBeLessThanOrEqual(0.02);
  });

  it('splits each endpoint on its own', () => {
    let same = 0;
    const even = { a: 1, b: 1 };
    for (let i = 0; i < 2000; i++) {
      const u = idOf(i);
      if (componentFor(even, bucketOf('zzebu', 'one', u)) === componentFor(even, bucketOf('zzebu', 'two', u))) same++;
    }
    expect(Math.abs(same / 2000 - 0.5)).toBeLessThan(0.05);
  });
});

describe('debug secrets', () => {
  it('match only the exact secret', () => {
    expect(secretMatches('s3cret-value-0123', 's3cret-value-0123')).toBe(true);
    expect(secretMatches('s3cret-value-0123', 's3cret-value-0124')).toBe(false);
    expect(secretMatches('s3cret-value-0123', '')).toBe(false);
    expect(secretMatches(undefined, 'anything')).toBe(false);
  });

  it('block a client after too many wrong ones, until the window passes', () => {
    let now = 0;
    const limiter = new FailureLimiter(3, 60_000, () => now);
    for (let i = 0; i < 3; i++) {
      expect(limiter.blocked('ip')).toBeNull();
      limiter.fail('ip');
    }
    expect(limiter.blocked('ip')).toBe(60);
    expect(limiter.blocked('other-ip')).toBeNull();
    now = 60_001;
    expect(limiter.blocked('ip')).toBeNull();
  });
});
