import type { RecordedEvent } from '@udp/eventstore';
import type { Collection } from '@udp/readmodel';
import { type Aggregate, domainEventOf } from './aggregate';
import type { DomainEvent } from './decider';
import type { ApplyContext, Projection } from './projector';

/** Where an event stands: whose stream it is in, its revision there, its store position, and (segments) its segment. */
export interface EventAt<Id> {
  id: Id;
  streamId: string;
  eventId: string;
  /** When the event was stored (ms since the epoch). */
  createdAt: number;
  revision: number;
  position: bigint;
  segment?: number;
}

/** The parts of an aggregate a projection reads its events with. */
export type ProjectedAggregate<E extends DomainEvent, Id> = Pick<
  Aggregate<never, E, unknown, Id>,
  'category' | 'streamOf' | 'idOf' | 'events'
>;

export interface AggregateProjectionOptions<E extends DomainEvent, Id> {
  name: string;
  aggregate: ProjectedAggregate<E, Id>;
  /** Applies one event; must be idempotent (a replayed event changes nothing). */
  apply(event: E, at: EventAt<Id>): Promise<void>;
  /** (Optional) Applies events in hand together, in order; idempotent like `apply` (see Projection.applyBatch). */
  applyBatch?(events: Array<{ event: E; at: EventAt<Id> }>): Promise<void>;
}

/**
 * A projection of one aggregate's events. What every projection does is done here once: whose stream the event is
 * in, that the event is theirs (else ForeignEventError), and the event parsed by the aggregate's schema.
 */
export function aggregateProjection<E extends DomainEvent, Id>(options: AggregateProjectionOptions<E, Id>): Projection {
  const { aggregate } = options;
  const parsed = (recorded: RecordedEvent, context?: ApplyContext) => {
    const id = aggregate.idOf(recorded.streamId);
    const event = domainEventOf(aggregate, recorded, aggregate.streamOf(id).owner);
    const { streamId, revision, position, createdAt } = recorded;
    return { event, at: { id, streamId, eventId: recorded.id, createdAt, revision, position, segment: context?.segment } };
  };
  const applyBatch = options.applyBatch;
  return {
    name: options.name,
    streamPrefixes: [aggregate.category],
    async apply(recorded: RecordedEvent, context?: ApplyContext) {
      const { event, at } = parsed(recorded, context);
      return options.apply(event, at);
    },
    ...(applyBatch && {
      applyBatch: (events: RecordedEvent[], contexts?: ApplyContext[]) =>
        applyBatch(events.map((recorded, i) => parsed(recorded, contexts?.[i]))),
    }),
  };
}

export interface DocumentProjectionOptions<E extends DomainEvent, Id, D extends { _id: string; revision: number }> {
  name: string;
  aggregate: ProjectedAggregate<E, Id>;
  collection: Collection<D>;
  /** The document the event changes (null: none). */
  documentId(event: E, at: EventAt<Id>): string | null;
  /** The document after the event, from the stored one (null: none yet); null leaves it as it is. */
  evolve(stored: D | null, event: E, at: EventAt<Id>): D | null;
}

/**
 * A read model of one document per thing an event names (a profile, a playlist, an export): the document is read,
 * evolved by the event and written back only when the event is newer than what it shows (the revision guard), so a
 * replayed or duplicated event, or a second instance applying the same event, changes nothing.
 */
export function documentProjection<E extends DomainEvent, Id, D extends { _id: string; revision: number }>(
  options: DocumentProjectionOptions<E, Id, D>,
): Projection {
  const { collection } = options;
  return aggregateProjection({
    name: options.name,
    aggregate: options.aggregate,
    async apply(event, at) {
      const documentId = options.documentId(event, at);
      if (documentId === null) return;
      const stored = await collection.get(documentId);
      if (stored && stored.revision >= at.revision) return;
      const next = options.evolve(stored, event, at);
      if (next) await collection.upsertIfNewer(next);
    },
  });
}
