import type { Bus } from '@udp/bus';
import { playlistEvents } from '@udp/contracts';
import { integrationPublisher } from '@udp/eventsourcing';
import { PLAYLISTS_STREAM_PREFIX, upcast, userIdOfPlaylistsStream } from '../domain/events';

export const PLAYLISTS_TOPIC = playlistEvents.PLAYLISTS_CHANGES_TOPIC;

/** Every playlist change on the bus (key: user id; playlist ids only: no item ids, no names). */
export const playlistChangesPublisher = (bus: Bus) =>
  integrationPublisher<playlistEvents.PlaylistsChangedMessage>(bus, {
    name: 'playlist-changes-publisher',
    topic: PLAYLISTS_TOPIC,
    streamPrefix: PLAYLISTS_STREAM_PREFIX,
    userIdOf: userIdOfPlaylistsStream,
    details: (event) => ({ playlistId: upcast(event.type, event.data).data.playlistId }),
  });
