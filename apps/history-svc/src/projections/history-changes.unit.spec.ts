import { historyEvents } from '@udp/contracts';
import { changeMessages } from '@udp/test-system';
import { type HistoryEvent, historyStream } from '../domain/aggregate';
import { HISTORY_TOPIC, historyChangesPublisher } from './history-changes';

/** user-data.history.v1: given events, the messages; ids and types only, keyed by user. */
it('publishes one message per event, keyed by user id, with no item data', async () => {
  const events: HistoryEvent[] = [
    {
      type: 'HistoryItemRecorded',
      data: { itemId: 'urn:secret', id: 1, date: 10, deleted: false, deviceId: 'ios', lastPlaybackPosition: 3 },
    },
    { type: 'HistoryItemDeleted', data: { itemId: 'urn:secret', id: 1, date: 11 } },
    { type: 'HistoryCleared', data: { date: 12, itemIds: ['urn:secret'] } },
  ];
  const { published, expected, parsed } = await changeMessages({
    publisher: historyChangesPublisher,
    stream: historyStream('a/b'),
    events,
    userId: 'a/b',
    topic: HISTORY_TOPIC,
    schema: historyEvents.HistoryChangedMessage,
  });
  expect(published).toEqual(expected);
  expect(parsed).toEqual(published.map((m) => m.value));
  expect(JSON.stringify(published)).not.toMatch(/urn:secret|ios/);
});
