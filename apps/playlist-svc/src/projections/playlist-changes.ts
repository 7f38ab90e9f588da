import type { Bus } from '@udp/bus';
import type { playlistEvents } from '@udp/contracts';
import type { Projection } from '@udp/eventsourcing';
import { PLAYLISTS_STREAM_PREFIX, upcast, userIdOfPlaylistsStream } from '../domain/events';

export const PLAYLISTS_TOPIC = 'user-data.playlists.v1';

/**
 * Publishes an integration message per playlist event (key: user id; no item ids, no names) for the
 * data-management consumers. Checkpointed like a read model: at-least-once, in order per user.
 */
export function playlistChangesPublisher(bus: Bus): Projection {
  return {
    name: 'playlist-changes-publisher',
    streamPrefixes: [PLAYLISTS_STREAM_PREFIX],
    async apply(event) {
      const userId = userIdOfPlaylistsStream(event.streamId);
      const message: playlistEvents.PlaylistsChangedMessage = {
        userId,
        type: event.type as playlistEvents.PlaylistsChangedMessage['type'],
        playlistId: upcast(event.type, event.data).data.playlistId,
        revision: event.revision,
        occurredAt: event.createdAt,
      };
      await bus.publish(PLAYLISTS_TOPIC, [{ key: userId, value: message, headers: { 'event-id': event.id } }]);
    },
  };
}
