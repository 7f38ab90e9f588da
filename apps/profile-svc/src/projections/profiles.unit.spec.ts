import { ForeignEventError } from '@udp/eventsourcing';
import { projectionSpecification } from '@udp/test-system';
import { type ProfileEvent, profileStream } from '../domain/aggregate';
import { PUBLIC_ID, T0, created, profile, updated } from '../testing/profiles';
import { PROFILES, type ProfileRow, PUBLIC_PROFILES, profileOfRow, profileProjection } from './profiles';

/** profiles and public_profiles: given events, the rows; a replayed event changes nothing; nothing private is public. */
const spec = projectionSpecification(profileProjection);

const named = profile({ displayName: 'Alice', lastName: 'Liddell', updatedAt: T0 + 2 });
const events: ProfileEvent[] = [
  created(profile()),
  updated(named, ['displayName', 'lastName']),
  updated(profile({ displayName: 'Alice', lastName: 'Liddell', public: true, publicFields: ['displayName'], updatedAt: T0 + 3 }), [
    'public',
    'publicFields',
  ]),
];

describe('profiles projection', () => {
  it('keeps the whole profile for its owner', () =>
    spec.given(profileStream('alice'), events.slice(0, 2)).then(PROFILES, [{ ...named, _id: 'alice', revision: 1 }]));

  it('shows others nothing while the profile is private', () =>
    spec
      .given(profileStream('alice'), events.slice(0, 2))
      .then(PUBLIC_PROFILES, [{ _id: PUBLIC_ID, userId: 'alice', view: null, revision: 1 }]));

  it('shows others only the public fields once it is public', () =>
    spec
      .given(profileStream('alice'), events)
      .then(PUBLIC_PROFILES, [{ _id: PUBLIC_ID, userId: 'alice', view: { publicUserId: PUBLIC_ID, displayName: 'Alice' }, revision: 2 }]));

  it('is idempotent: replaying every event, or older ones after newer ones, changes nothing', () =>
    spec.given(profileStream('alice'), events).thenReplayingChangesNothing());

  it('reads an event stored before a field existed with the field null (its schema upcasts it)', () => {
    const { avatarUrl: _, ...older } = profile();
    return spec
      .given(profileStream('alice'), [{ type: 'ProfileCreated', data: { profile: older } } as unknown as ProfileEvent])
      .then(PROFILES, [{ ...profile(), _id: 'alice', revision: 0 }]);
  });

  it('reads a row applied before a field existed with the field null, without its _id and revision', () => {
    const { avatarUrl: _, ...older } = { ...named, _id: 'alice', revision: 1 };
    expect(profileOfRow(older as ProfileRow)).toEqual(named);
  });

  it("refuses an event of another owner in a user's stream and writes nothing of it", () =>
    spec.given({ id: profileStream('alice').id, owner: { userId: 'mallory' } }, [created(profile())]).thenRefuses(ForeignEventError));
});
