import { STREAMS_OF_EVERY_AGGREGATE } from './whole-system';

describe("the aggregates' stream categories", () => {
  it('no category is a prefix of another, so a subscription by prefix sees one aggregate only', () => {
    const categories = STREAMS_OF_EVERY_AGGREGATE.map((streams) => streams.category);
    expect(categories).toHaveLength(9);
    expect(new Set(categories).size).toBe(categories.length);
    for (const a of categories) for (const b of categories) if (a !== b) expect(b.startsWith(a)).toBe(false);
  });
});
