import { playlistEvents } from '@udp/contracts';
import { changeMessages } from '@udp/test-system';
import { type PlaylistEvent, playlistsStream } from '../domain/aggregate';
import { PLAYLISTS_TOPIC, playlistChangesPublisher } from './playlist-changes';

/** user-data.playlists.v1: given events, the messages; playlist ids and types only, keyed by user. */
it('publishes one message per event, keyed by user id, with the playlist id and no names or items', async () => {
  const events: PlaylistEvent[] = [
    {
      type: 'PlaylistCreated',
      data: { playlistId: 'p1', businessId: 'private-name', name: 'Secret name', playlistType: 'standard', date: 1 },
    },
    { type: 'BookmarkAdded', data: { playlistId: 'p1', bookmarkId: 1, itemId: 'urn:secret', date: 2, addedAt: 2 } },
    { type: 'PlaylistRenamed', data: { playlistId: 'p1', name: 'Other secret', date: 3 } },
    { type: 'BookmarksRemoved', data: { playlistId: 'p1', bookmarkIds: [1], date: 4 } },
    { type: 'PlaylistDeleted', data: { playlistId: 'p1', date: 5 } },
  ];
  const { published, expected, parsed } = await changeMessages({
    publisher: playlistChangesPublisher,
    stream: playlistsStream('erin'),
    events,
    userId: 'erin',
    topic: PLAYLISTS_TOPIC,
    schema: playlistEvents.PlaylistsChangedMessage,
    fields: () => ({ playlistId: 'p1' }),
  });
  expect(published).toEqual(expected);
  expect(parsed).toEqual(published.map((m) => m.value));
  expect(JSON.stringify(published)).not.toMatch(/secret|urn:/i);
});
