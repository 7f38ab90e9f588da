import type { Bus } from '@udp/bus';
import type { playlistEvents } from '@udp/contracts';
import { integrationPublisher } from '@udp/eventsourcing';
import { PLAYLISTS_STREAM_PREFIX, upcast, userIdOfPlaylistsStream } from '../domain/events';

export const PLAYLISTS_TOPIC = 'user-data.playlists.v1';

/** Every playlist change on the bus (key: user id; playlist ids only: no item ids, no names). */
export const playlistChangesPublisher = (bus: Bus) =>
  integrationPublisher(bus, {
    name: 'playlist-changes-publisher',
    topic: PLAYLISTS_TOPIC,
    streamPrefix: PLAYLISTS_STREAM_PREFIX,
    userIdOf: userIdOfPlaylistsStream,
    message: (event, userId): playlistEvents.PlaylistsChangedMessage => ({
      userId,
      type: event.type as playlistEvents.PlaylistsChangedMessage['type'],
      playlistId: upcast(event.type, event.data).data.playlistId,
      revision: event.revision,
      occurredAt: event.createdAt,
    }),
  });
