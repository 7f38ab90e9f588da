import { preferenceEvents } from '@udp/contracts';
import { changeMessages } from '@udp/test-system';
import { type PreferenceEvent, preferenceStream } from '../domain/aggregate';
import { PREFERENCES_TOPIC, preferenceChangesPublisher } from './preference-changes';

/** user-data.preferences.v1: given events, the messages; keyed by user, with no key and no document. */
it('publishes one message per event, keyed by user id, with its store position and neither the key nor the document', async () => {
  const events: PreferenceEvent[] = [
    { type: 'PreferenceWritten', data: { key: 'secret-key', document: { secret: 'value' }, operation: { kind: 'replace' } } },
    { type: 'PreferenceDeleted', data: { key: 'secret-key' } },
  ];
  const { published, expected, parsed } = await changeMessages({
    publisher: preferenceChangesPublisher,
    stream: preferenceStream('erin', 'secret-key'),
    events,
    userId: 'erin',
    topic: PREFERENCES_TOPIC,
    schema: preferenceEvents.PreferencesChangedMessage,
    positions: (i) => 7n + BigInt(i) * 2n ** 70n,
    fields: (event) => ({ position: event.position.toString() }),
  });
  expect(published).toEqual(expected);
  // A position past 2^64 (EventStoreDB's) is exact in its decimal text.
  expect(published[1].value.position).toBe('1180591620717411303431');
  expect(parsed).toEqual(published.map((m) => m.value));
  expect(JSON.stringify(published)).not.toMatch(/secret/i);
});
