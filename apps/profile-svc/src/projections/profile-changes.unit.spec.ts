import { profileEvents } from '@udp/contracts';
import { changeMessages } from '@udp/test-system';
import { profileStream } from '../domain/aggregate';
import { created, profile, updated } from '../testing/profiles';
import { PROFILE_TOPIC, profileChangesPublisher } from './profile-changes';

/** user-data.profile.v1: given events, the messages; keyed by user, with no field of the profile. */
it('publishes one message per event, keyed by user id, with no field of the profile', async () => {
  const secret = profile({ displayName: 'Secret Name', firstName: 'Secretfirst', avatarUrl: 'https://secret.example/a.png' });
  const { published, expected, parsed } = await changeMessages({
    publisher: profileChangesPublisher,
    stream: profileStream('erin'),
    events: [created(secret), updated({ ...secret, lastName: 'Secretlast' }, ['lastName'])],
    userId: 'erin',
    topic: PROFILE_TOPIC,
    schema: profileEvents.ProfileChangedMessage,
  });
  expect(published).toEqual(expected);
  expect(parsed).toEqual(published.map((m) => m.value));
  expect(JSON.stringify(published)).not.toMatch(/secret|lastName|0b6f3a52/i);
});
