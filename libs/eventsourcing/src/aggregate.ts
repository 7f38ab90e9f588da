import type { RecordedEvent } from '@udp/eventstore';
import type { Command, Decider, DomainEvent } from './decider';
import type { SnapshotCodec } from './state-cache';
import { type EventOwner, assertOwnedBy } from './streams';

/** A stream, and the owner every event of it names (absent: a stream of no one user, e.g. a catalogue item). */
export interface AggregateStream {
  id: string;
  owner?: EventOwner;
}

/** What parses a stored event into its current shape: a zod schema of the aggregate's events fits. */
export interface EventSchema<E> {
  parse(stored: unknown): E;
}

/**
 * Everything that makes an aggregate, declared once in its service's `domain/aggregate.ts`: how its streams are
 * named and whose they are, its decider, how stored events are read, its snapshot codec, and how often a write
 * that lost a race is tried again. The command handler and the projections are set up from it.
 */
export interface Aggregate<C extends Command, E extends DomainEvent, S, Id> {
  /** The prefix of every stream of the aggregate (no category is a prefix of another: tools/system-tests). */
  category: string;
  streamOf(id: Id): AggregateStream;
  /** The instance a stream name belongs to (a projection learns whose event it applies). */
  idOf(streamId: string): Id;
  decider: Decider<C, E, S>;
  /** Parses each stored event: data written by an older version is refused loudly, never folded half-read. */
  events: EventSchema<E>;
  /** Folded states saved as snapshots, when the aggregate's streams grow long. */
  snapshot?: SnapshotCodec<S>;
  /** A write that lost a race is re-read and re-decided this many times, then ConcurrencyConflictError (429). */
  conflictRetries: number;
}

/** A stored event could not be parsed by its aggregate's schema: a bug or a hand-edited store, never folded. */
export class UnreadableEventError extends Error {
  override readonly name = 'UnreadableEventError';
  constructor(
    readonly streamId: string,
    readonly revision: number,
    cause: unknown,
  ) {
    super(`stream ${streamId} revision ${revision} does not match its event schema`, { cause });
  }
}

/**
 * The one way a stored event becomes a domain event: checked to belong to the stream's owner (else
 * ForeignEventError), then parsed by the aggregate's event schema.
 */
export function domainEventOf<E>(
  aggregate: { events: EventSchema<E> },
  recorded: RecordedEvent,
  owner: EventOwner | undefined,
): E {
  if (owner) assertOwnedBy(recorded, owner);
  try {
    return aggregate.events.parse({ type: recorded.type, data: recorded.data });
  } catch (error) {
    throw new UnreadableEventError(recorded.streamId, recorded.revision, error);
  }
}
