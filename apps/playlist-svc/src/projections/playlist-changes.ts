import type { Bus } from '@udp/bus';
import { playlistEvents } from '@udp/contracts';
import { integrationPublisher } from '@udp/eventsourcing';
import { type PlaylistEvent, playlistsStreams } from '../domain/aggregate';

export const PLAYLISTS_TOPIC = playlistEvents.PLAYLISTS_CHANGES_TOPIC;

/** Every playlist change on the bus (key: user id; playlist ids only: no item ids, no names). */
export const playlistChangesPublisher = (bus: Bus) =>
  integrationPublisher<PlaylistEvent, playlistEvents.PlaylistsChangedMessage>(bus, {
    name: 'playlist-changes-publisher',
    topic: PLAYLISTS_TOPIC,
    aggregate: playlistsStreams,
    details: (event) => ({ playlistId: event.data.playlistId }),
  });
