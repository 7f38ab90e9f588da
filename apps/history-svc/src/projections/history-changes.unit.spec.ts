import { historyEvents } from '@udp/contracts';
import { RecordingBus, recordedEvents } from '@udp/test-system';
import { type HistoryEvent, historyStream } from '../domain/aggregate';
import { HISTORY_TOPIC, historyChangesPublisher } from './history-changes';

/** user-data.history.v1: given events, the messages; ids and types only, keyed by user. */
it('publishes one message per event, keyed by user id, with no item data', async () => {
  const bus = new RecordingBus();
  const events: HistoryEvent[] = [
    {
      type: 'HistoryItemRecorded',
      data: { itemId: 'urn:secret', id: 1, date: 10, deleted: false, deviceId: 'ios', lastPlaybackPosition: 3 },
    },
    { type: 'HistoryItemDeleted', data: { itemId: 'urn:secret', id: 1, date: 11 } },
    { type: 'HistoryCleared', data: { date: 12, itemIds: ['urn:secret'] } },
  ];
  const recorded = recordedEvents(historyStream('a/b'), events).map((e, i) => ({ ...e, createdAt: 100 + i }));
  const publisher = historyChangesPublisher(bus);
  for (const event of recorded) await publisher.apply(event);

  expect(bus.published).toEqual(
    recorded.map((e, i) => ({
      topic: HISTORY_TOPIC,
      key: 'a/b',
      headers: { 'event-id': e.id },
      value: { userId: 'a/b', type: events[i].type, revision: i, occurredAt: 100 + i },
    })),
  );
  for (const { value } of bus.published) expect(historyEvents.HistoryChangedMessage.strict().parse(value)).toEqual(value);
  expect(JSON.stringify(bus.published)).not.toMatch(/urn:secret|ios/);
});
