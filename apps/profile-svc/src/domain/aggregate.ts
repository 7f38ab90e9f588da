import { profileEvents } from '@udp/contracts';
import { type Aggregate, oneStreamPerUser } from '@udp/eventsourcing';
import { type ProfileCommand, type State, profileDecider } from './decider';

/**
 * The events of one user's profile. Their schemas are in libs/contracts/src/events/profile.ts, with every event schema
 * (docs/architecture.md, "Event sourcing rules").
 */
export type ProfileEvent = profileEvents.ProfileEvent;
export type ProfileState = profileEvents.ProfileState;

/**
 * One stream per user (`profile-<userId>`, the id encoded), each event owned by `{ userId }` and parsed by its
 * schema on read; user ids are opaque (never an e-mail or a name). What the projections read the aggregate by.
 */
export const profileStreams = { ...oneStreamPerUser('profile-'), events: profileEvents.ProfileEvent };
export const profileStream = profileStreams.streamOf;
export const profileStreamId = (userId: string) => profileStream(userId).id;
/** Every stream of a user in this service (erasure deletes them). */
export const profileStreamsOfUser = (userId: string) => [profileStreamId(userId)];

/** A user's profile as an aggregate: two first calls of one user may race to create it, the loser re-reads and finds it. */
export const profileAggregate: Aggregate<ProfileCommand, ProfileEvent, State, string> = {
  ...profileStreams,
  decider: profileDecider,
  conflictRetries: 5,
};
