import type { Projection } from '@udp/eventsourcing';
import type { RecordedEvent } from '@udp/eventstore';
import { type Document, MemoryReadModelStore } from '@udp/readmodel';
import { type SpecEvent, type SpecStream, recordedEvents } from './api-specification';

/**
 * Given / then for projections, on a fresh memory read model each time:
 *
 *   const spec = projectionSpecification(historyProjection);
 *   await spec.given(historyStream('alice'), [recorded(...), deleted(...)]).then('history_entries', [{ _id: ..., ... }]);
 *   await spec.given(...).thenReplayingChangesNothing();
 *   await spec.given(foreignStream, [event]).thenRefuses(ForeignEventError);
 *
 * Events get revisions from 0 in each stream and store positions in the order given, with the owner the command
 * handler records (none for a stream given by name).
 */
export function projectionSpecification(build: (readModels: MemoryReadModelStore) => Projection) {
  const given = (recorded: RecordedEvent[]): ProjectionGiven => ({
    and: (stream, events) => given([...recorded, ...recordedEvents(stream, events, 0, BigInt(recorded.length + 1))]),
    async then<D extends Document>(collection: string, expected: D[] | ((documents: D[]) => void)) {
      const readModels = await applied(build, recorded);
      const documents = await readModels.collection<D>(collection).find({}, { sort: { _id: 1 } });
      if (typeof expected === 'function') expected(documents);
      else expect(documents).toEqual(expected);
    },
    async thenQuery(check) {
      await check(await applied(build, recorded));
    },
    async thenReplayingChangesNothing() {
      const readModels = new MemoryReadModelStore();
      const projection = build(readModels);
      for (const event of recorded) await projection.apply(event);
      const once = contents(readModels);
      // Again in order (a redelivery), then newest first (an older event after a newer one).
      for (const event of [...recorded, ...[...recorded].reverse()]) await projection.apply(event);
      expect(contents(readModels)).toEqual(once);
    },
    async thenRefuses(error) {
      const readModels = new MemoryReadModelStore();
      const projection = build(readModels);
      const [refused, ...before] = [...recorded].reverse();
      for (const event of before.reverse()) await projection.apply(event);
      const untouched = contents(readModels);
      await expect(projection.apply(refused)).rejects.toBeInstanceOf(error);
      expect(contents(readModels)).toEqual(untouched);
    },
  });
  return { given: (stream: SpecStream, events: SpecEvent[]) => given(recordedEvents(stream, events)) };
}

export interface ProjectionGiven {
  /** Events of another stream, after those given so far. */
  and(stream: SpecStream, events: SpecEvent[]): ProjectionGiven;
  /** Every document of `collection`, by id, after the events: equal to `expected`, or checked by it. */
  then<D extends Document>(collection: string, expected: D[] | ((documents: D[]) => void)): Promise<void>;
  /** The read models after the events, for the queries beside the projection. */
  thenQuery(check: (readModels: MemoryReadModelStore) => Promise<void>): Promise<void>;
  /** Applying every event again, in order and newest first, leaves every collection as it was. */
  thenReplayingChangesNothing(): Promise<void>;
  /** The last event given is refused with `error`, and changes nothing. */
  thenRefuses(error: abstract new (...args: never[]) => Error): Promise<void>;
}

async function applied(build: (readModels: MemoryReadModelStore) => Projection, recorded: RecordedEvent[]) {
  const readModels = new MemoryReadModelStore();
  const projection = build(readModels);
  for (const event of recorded) await projection.apply(event);
  return readModels;
}

/** Every collection's documents, by id (checkpoints left out: no projector runs here). */
function contents(readModels: MemoryReadModelStore) {
  const { collections } = readModels.image();
  return Object.fromEntries(
    [...collections].map(([name, documents]) => [name, [...documents].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0))]),
  );
}
