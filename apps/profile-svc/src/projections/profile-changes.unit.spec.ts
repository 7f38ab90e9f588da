import { profileEvents } from '@udp/contracts';
import { RecordingBus, recordedEvents } from '@udp/test-system';
import { profileStream } from '../domain/aggregate';
import { created, profile, updated } from '../testing/profiles';
import { PROFILE_TOPIC, profileChangesPublisher } from './profile-changes';

/** user-data.profile.v1: given events, the messages; keyed by user, with no field of the profile. */
it('publishes one message per event, keyed by user id, with no field of the profile', async () => {
  const bus = new RecordingBus();
  const secret = profile({ displayName: 'Secret Name', firstName: 'Secretfirst', avatarUrl: 'https://secret.example/a.png' });
  const events = [created(secret), updated({ ...secret, lastName: 'Secretlast' }, ['lastName'])];
  const recorded = recordedEvents(profileStream('erin'), events).map((e, i) => ({ ...e, createdAt: 100 + i }));
  const publisher = profileChangesPublisher(bus);
  for (const event of recorded) await publisher.apply(event);

  expect(bus.published).toEqual(
    recorded.map((e, i) => ({
      topic: PROFILE_TOPIC,
      key: 'erin',
      headers: { 'event-id': e.id },
      value: { userId: 'erin', type: events[i].type, revision: i, occurredAt: 100 + i },
    })),
  );
  for (const { value } of bus.published) expect(profileEvents.ProfileChangedMessage.strict().parse(value)).toEqual(value);
  expect(JSON.stringify(bus.published)).not.toMatch(/secret|lastName|0b6f3a52/i);
});
