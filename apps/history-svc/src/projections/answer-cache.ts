import { LRUCache } from 'lru-cache';

/** A user's part of a kept answer's key: its length first, so no user id and query run into another's. */
const keyOf = (userId: string) => `${userId.length}:${userId}:`;

/**
 * Answers already given, by user, version of their history and query (as sent): the same three always answer the
 * same bytes (`HistoryPage.version`), so a device polling an unchanged history is answered without its page being read
 * again. An answer is never served for another version; a user's go with their erasure (`forget`, before their data
 * leaves the stores); past `maxBytes`, the least recently asked go first.
 */
export class HistoryAnswers {
  private readonly answers: LRUCache<string, { version: string; text: string }>;
  /** Erasures so far: an answer read while one ran (its reads may straddle it) is not kept. */
  private forgets = 0;

  constructor(private readonly maxBytes: number) {
    this.answers = new LRUCache({ maxSize: Math.max(1, maxBytes), sizeCalculation: ({ text }, key) => text.length + key.length + 64 });
  }

  get(userId: string, version: string, query: string): string | undefined {
    const known = this.answers.get(keyOf(userId) + query);
    return known?.version === version ? known.text : undefined;
  }

  /** Taken before a list is read, and given to `remember`. */
  generation(): number {
    return this.forgets;
  }

  /** Keeps `text` (unless an erasure came since `generation`, or it would take more than a tenth of the room); returns it. */
  remember(userId: string, version: string, query: string, text: string, generation: number): string {
    if (generation === this.forgets && text.length * 10 <= this.maxBytes) this.answers.set(keyOf(userId) + query, { version, text });
    return text;
  }

  /** Drops every answer of the user. */
  forget(userId: string): void {
    this.forgets++;
    for (const key of [...this.keysOf(userId)]) this.answers.delete(key);
  }

  /** Whether any answer of the user is kept. */
  holds(userId: string): boolean {
    return !this.keysOf(userId).next().done;
  }

  /** The user's keys: a scan of them all (an erasure is rare, and the keys are bounded by `maxBytes`). */
  private *keysOf(userId: string): Generator<string> {
    const prefix = keyOf(userId);
    for (const key of this.answers.keys()) if (key.startsWith(prefix)) yield key;
  }
}
