import { playlistEvents } from '@udp/contracts';
import { RecordingBus, recordedEvents } from '@udp/test-system';
import { type PlaylistEvent, playlistsStream } from '../domain/aggregate';
import { PLAYLISTS_TOPIC, playlistChangesPublisher } from './playlist-changes';

/** user-data.playlists.v1: given events, the messages; playlist ids and types only, keyed by user. */
it('publishes one message per event, keyed by user id, with the playlist id and no names or items', async () => {
  const bus = new RecordingBus();
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
  const recorded = recordedEvents(playlistsStream('erin'), events).map((e, i) => ({ ...e, createdAt: 100 + i }));
  const publisher = playlistChangesPublisher(bus);
  for (const event of recorded) await publisher.apply(event);

  expect(bus.published).toEqual(
    recorded.map((e, i) => ({
      topic: PLAYLISTS_TOPIC,
      key: 'erin',
      headers: { 'event-id': e.id },
      value: { userId: 'erin', type: events[i].type, playlistId: 'p1', revision: i, occurredAt: 100 + i },
    })),
  );
  for (const { value } of bus.published) expect(playlistEvents.PlaylistsChangedMessage.strict().parse(value)).toEqual(value);
  expect(JSON.stringify(bus.published)).not.toMatch(/secret|urn:/i);
});
