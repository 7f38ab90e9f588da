import { preferenceEvents } from '@udp/contracts';
import { RecordingBus, recordedEvents } from '@udp/test-system';
import { type PreferenceEvent, preferenceStream } from '../domain/aggregate';
import { PREFERENCES_TOPIC, preferenceChangesPublisher } from './preference-changes';

/** user-data.preferences.v1: given events, the messages; keyed by user, with no key and no document. */
it('publishes one message per event, keyed by user id, with its store position and neither the key nor the document', async () => {
  const bus = new RecordingBus();
  const events: PreferenceEvent[] = [
    { type: 'PreferenceWritten', data: { key: 'secret-key', document: { secret: 'value' }, operation: { kind: 'replace' } } },
    { type: 'PreferenceDeleted', data: { key: 'secret-key' } },
  ];
  const recorded = recordedEvents(preferenceStream('erin', 'secret-key'), events).map((e, i) => ({
    ...e,
    createdAt: 100 + i,
    position: 7n + BigInt(i) * 2n ** 70n,
  }));
  const publisher = preferenceChangesPublisher(bus);
  for (const event of recorded) await publisher.apply(event);

  expect(bus.published).toEqual(
    recorded.map((e, i) => ({
      topic: PREFERENCES_TOPIC,
      key: 'erin',
      headers: { 'event-id': e.id },
      value: { userId: 'erin', type: events[i].type, position: e.position.toString(), revision: i, occurredAt: 100 + i },
    })),
  );
  // A position past 2^64 (EventStoreDB's) is exact in its decimal text.
  expect(bus.published[1].value.position).toBe('1180591620717411303431');
  for (const { value } of bus.published) expect(preferenceEvents.PreferencesChangedMessage.strict().parse(value)).toEqual(value);
  expect(JSON.stringify(bus.published)).not.toMatch(/secret/i);
});
