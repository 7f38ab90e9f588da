import { type EventStore, WrongExpectedRevisionError } from '@udp/eventstore';

export interface RacingStore extends EventStore {
  /** Appends refused so far because the stream had moved on (each one a retry or a 429). */
  readonly conflicts: number;
}

/**
 * In one process a command's read and its append run without another request in between, so parallel
 * requests would hardly ever race. This store holds the first `parties` stream reads until all of them have
 * read: every one of those writers then decides on the same revision, as parallel writers on a networked
 * store do, and all but one must meet a conflict. It has no write epoch (`EventStore.writeEpoch`), so every writer
 * reads its stream here, even one whose state is in memory.
 */
export function racingStore(inner: EventStore, parties: number): RacingStore {
  let held: Array<() => void> = [];
  let remaining = parties;
  let conflicts = 0;
  return {
    get conflicts() {
      return conflicts;
    },
    async readStream(streamId) {
      const read = await inner.readStream(streamId);
      if (remaining > 0) {
        await new Promise<void>((release) => {
          held.push(release);
          if (held.length < remaining) return;
          remaining = 0;
          const all = held;
          held = [];
          for (const go of all) go();
        });
      }
      return read;
    },
    async appendToStream(streamId, events, options) {
      try {
        return await inner.appendToStream(streamId, events, options);
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError) conflicts++;
        throw error;
      }
    },
    deleteStream: (streamId) => inner.deleteStream(streamId),
    listStreams: (prefix) => inner.listStreams(prefix),
    subscribe: (options, handler) => inner.subscribe(options, handler),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
}
