import { playlistEvents } from '@udp/contracts';
import { type Aggregate, oneStreamPerUser } from '@udp/eventsourcing';
import { type PlaylistCommand, type PlaylistLimits, type PlaylistsState, playlistsDecider } from './decider';
import { playlistsSnapshot } from './snapshot';

/**
 * The events of all the playlists of one user. Their schemas are in libs/contracts/src/events/playlists.ts, beside
 * the bus message that names these types for other consumers (docs/architecture.md, "Event sourcing rules").
 */
export type PlaylistEvent = playlistEvents.PlaylistEvent;
export type PlaylistCreated = Extract<PlaylistEvent, { type: 'PlaylistCreated' }>;
export type BookmarkAdded = Extract<PlaylistEvent, { type: 'BookmarkAdded' }>;

/**
 * One stream per user for all of its playlists (`playlists-<userId>`, the id encoded), each event owned by
 * `{ userId }` and parsed by its schema on read. What the projections read the aggregate by.
 */
export const playlistsStreams = { ...oneStreamPerUser('playlists-'), events: playlistEvents.PlaylistEvent };
export const playlistsStream = playlistsStreams.streamOf;
/** Every stream of a user in this service (erasure deletes them). */
export const playlistStreamsOfUser = (userId: string) => [playlistsStream(userId).id];

/**
 * A user's playlists as an aggregate. A conflicting append is re-read and re-decided `conflictRetries` times
 * (docs/architecture.md, "Concurrency"), then 429; the state is snapshotted.
 */
export const playlistsAggregate = (
  limits: PlaylistLimits,
  conflictRetries: number,
): Aggregate<PlaylistCommand, PlaylistEvent, PlaylistsState, string> => ({
  ...playlistsStreams,
  decider: playlistsDecider(limits),
  snapshot: playlistsSnapshot,
  conflictRetries,
});
