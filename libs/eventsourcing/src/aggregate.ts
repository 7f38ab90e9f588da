import type { RecordedEvent } from '@udp/eventstore';
import type { Command, Decider, DomainEvent } from './decider';
import type { SnapshotCodec } from './state-cache';

/**
 * Stream names and event ownership: the pieces every aggregate names its streams with (each aggregate declares its
 * own category and names in its service's `domain/aggregate.ts`).
 *
 * A stream name is `<category prefix><part>[/<part>]`. Every variable part is encoded by `encodeIdPart`, whose
 * output never holds a `/`, so a name splits back into exactly the parts it was made of: no two (user, key)
 * pairs can give the same name, whatever characters a user id or key holds.
 *
 * Events written through the command handler record their owner in `metadata.owner`; every fold and projection
 * checks it (`assertOwnedBy`) and refuses a stream that holds someone else's event.
 */

/** `%` and `/` percent-encoded, nothing else: injective, never contains `/`, and user ids as issued today are unchanged. */
export function encodeIdPart(part: string): string {
  // Most ids hold neither character: a scan, not two replacements (every event a projection applies decodes one).
  if (!part.includes('%') && !part.includes('/')) return part;
  return part.replace(/%/g, '%25').replace(/\//g, '%2F');
}

export function decodeIdPart(encoded: string): string {
  if (!encoded.includes('%')) return encoded;
  return encoded.replace(/%2F/g, '/').replace(/%25/g, '%');
}

/** A stream or document id made of encoded parts joined by `/`. */
export const joinIdParts = (...parts: string[]) => parts.map(encodeIdPart).join('/');

/** The parts of an id made by `joinIdParts`, or null when it does not have `count` of them. */
export function splitIdParts(id: string, count: number): string[] | null {
  const parts = id.split('/');
  return parts.length === count ? parts.map(decodeIdPart) : null;
}

/**
 * Read-model document id of something of one user (`<user>/<rest>`): the user part is encoded, so the first `/`
 * ends it and no two (user, rest) pairs share an id; the rest (the last part) stays as it is, so ids stored
 * before this encoding existed are unchanged for every user id the gateway accepts.
 */
export const userScopedId = (userId: string, rest: string) => `${encodeIdPart(userId)}/${rest}`;

/** The user of an id made by `userScopedId`. */
export function userOfScopedId(id: string): string {
  const end = id.indexOf('/');
  if (end < 0) throw new Error(`${JSON.stringify(id)} is not a user-scoped id`);
  return decodeIdPart(id.slice(0, end));
}

/** Streams one per thing of an aggregate (`<category><id>`, the id encoded), of no one user: e.g. catalogue items. */
export function oneStreamEach(category: string) {
  return {
    category,
    streamOf: (id: string): AggregateStream => ({ id: category + encodeIdPart(id) }),
    idOf(streamId: string): string {
      const parts = streamId.startsWith(category) ? splitIdParts(streamId.slice(category.length), 1) : null;
      if (!parts) throw new Error(`${streamId} is not a ${category} stream`);
      return parts[0];
    },
  };
}

/**
 * Streams one per user (`<category><userId>`, the id encoded), each event owned by `{ userId }`: history,
 * playlists, profile, exports.
 */
export function oneStreamPerUser(category: string) {
  const each = oneStreamEach(category);
  return { ...each, streamOf: (userId: string): OwnedStream => ({ id: each.streamOf(userId).id, owner: { userId } }) };
}

/** Who an event belongs to, e.g. `{ userId }` or `{ userId, key }`. */
export type EventOwner = Readonly<Record<string, string>>;

/** A stream with the owner its events must name. */
export interface OwnedStream {
  id: string;
  owner: EventOwner;
}

/** A stream held an event of another owner: the read is refused, never answered with that event. */
export class ForeignEventError extends Error {
  override readonly name = 'ForeignEventError';
  constructor(
    readonly streamId: string,
    readonly revision: number,
  ) {
    super(`stream ${streamId} holds an event (revision ${revision}) that does not belong to its owner`);
  }
}

function sameOwner(recorded: unknown, owner: EventOwner): boolean {
  if (typeof recorded !== 'object' || recorded === null || Array.isArray(recorded)) return false;
  const entries = Object.entries(recorded as Record<string, unknown>);
  return entries.length === Object.keys(owner).length && entries.every(([k, v]) => owner[k] === v);
}

/** Throws unless the event records `owner` as its owner (an event of no one, in a stream of someone, is refused too). */
export function assertOwnedBy(event: Pick<RecordedEvent, 'streamId' | 'revision' | 'metadata'>, owner: EventOwner): void {
  if (!sameOwner(event.metadata?.owner, owner)) throw new ForeignEventError(event.streamId, event.revision);
}

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
  /**
   * A command that arrives while another command of the same stream is being decided and appended in this process:
   * `wait` (the default) runs it next, on the state the other leaves; `refuse` answers it ConcurrencyConflictError
   * (429) at once, without reading or deciding anything (history: "a concurrent second update receives 429").
   */
  whileWriting?: 'wait' | 'refuse';
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
export function domainEventOf<E>(aggregate: { events: EventSchema<E> }, recorded: RecordedEvent, owner: EventOwner | undefined): E {
  if (owner) assertOwnedBy(recorded, owner);
  try {
    return aggregate.events.parse({ type: recorded.type, data: recorded.data });
  } catch (error) {
    throw new UnreadableEventError(recorded.streamId, recorded.revision, error);
  }
}
