/**
 * Reads of one kind sent together: a read that finds fewer than `maxInFlight` of its kind under way goes at once
 * (alone when the server is idle, so no read waits for company); one that finds them all under way waits for the
 * first to finish and goes with every other read that waited meanwhile, in one round trip. Under load, the
 * round trips per read fall as the reads pile up, as the PostgreSQL store's appends are committed together.
 */
export class BatchedReads<K, R> {
  private waiting: Array<{ key: K; resolve: (result: R) => void; reject: (error: unknown) => void }> = [];
  private inFlight = 0;

  /**
   * @param readAll one round trip for many keys; answers each key's result in the keys' order.
   * @param maxInFlight round trips of this kind under way at once (a share of the pool's connections).
   * @param maxBatch keys in one round trip at most (the statement's size).
   */
  constructor(
    private readonly readAll: (keys: K[]) => Promise<R[]>,
    private readonly maxInFlight = 2,
    private readonly maxBatch = 200,
  ) {}

  read(key: K): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ key, resolve, reject });
      if (this.inFlight < this.maxInFlight) void this.next();
    });
  }

  private async next(): Promise<void> {
    const batch = this.waiting.splice(0, this.maxBatch);
    if (batch.length === 0) return;
    this.inFlight++;
    try {
      const results = await this.readAll(batch.map((w) => w.key));
      batch.forEach((w, i) => w.resolve(results[i]));
    } catch (error) {
      for (const w of batch) w.reject(error);
    } finally {
      this.inFlight--;
    }
    if (this.waiting.length > 0) void this.next();
  }
}
