import { BatchedReads } from './batched-reads';

/** A read of many keys that answers when told to, recording each round trip's keys. */
function controlledReads() {
  const trips: Array<{ keys: number[]; answer: () => void; fail: (error: Error) => void }> = [];
  const reads = new BatchedReads<number, string>(
    (keys) =>
      new Promise<string[]>((resolve, reject) => {
        trips.push({ keys, answer: () => resolve(keys.map((k) => `value ${k}`)), fail: reject });
      }),
    2,
    3,
  );
  return { reads, trips };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('BatchedReads', () => {
  it('sends a read at once while fewer than maxInFlight are under way', async () => {
    const { reads, trips } = controlledReads();
    const a = reads.read(1);
    const b = reads.read(2);
    expect(trips.map((t) => t.keys)).toEqual([[1], [2]]);
    trips[0].answer();
    trips[1].answer();
    await expect(Promise.all([a, b])).resolves.toEqual(['value 1', 'value 2']);
  });

  it('sends the reads that waited together once one under way ends, at most maxBatch a round trip, each answered its own', async () => {
    const { reads, trips } = controlledReads();
    const first = [reads.read(1), reads.read(2)];
    const waiting = [3, 4, 5, 6].map((k) => reads.read(k));
    expect(trips).toHaveLength(2);
    trips[0].answer();
    await settle();
    expect(trips.map((t) => t.keys)).toEqual([[1], [2], [3, 4, 5]]);
    trips[1].answer();
    await settle();
    expect(trips[3].keys).toEqual([6]);
    trips[2].answer();
    trips[3].answer();
    await expect(Promise.all([...first, ...waiting])).resolves.toEqual([1, 2, 3, 4, 5, 6].map((k) => `value ${k}`));
  });

  it('fails every read of a round trip that failed, and goes on with the next', async () => {
    const { reads, trips } = controlledReads();
    const a = reads.read(1);
    const b = reads.read(2);
    const c = reads.read(3);
    trips[0].fail(new Error('connection lost'));
    await expect(a).rejects.toThrow('connection lost');
    await settle();
    expect(trips[2].keys).toEqual([3]);
    trips[1].answer();
    trips[2].answer();
    await expect(Promise.all([b, c])).resolves.toEqual(['value 2', 'value 3']);
  });
});
