import type { Bus } from '@udp/bus';
import { profileEvents } from '@udp/contracts';
import { integrationPublisher } from '@udp/eventsourcing';
import { type ProfileEvent, profileStreams } from '../domain/aggregate';

export const PROFILE_TOPIC = profileEvents.PROFILE_CHANGES_TOPIC;

/** Every profile change on the bus (key: user id; no field of the profile, not even which ones changed). */
export const profileChangesPublisher = (bus: Bus) =>
  integrationPublisher<ProfileEvent, profileEvents.ProfileChangedMessage>(bus, {
    name: 'profile-changes-publisher',
    topic: PROFILE_TOPIC,
    aggregate: profileStreams,
  });
