import { byProfileField } from '@udp/contracts';
import { DeciderSpecification } from '@udp/test-kit';
import { type ProfileCommand, profileDecider } from './decider';
import type { ProfileEvent, ProfileState } from './aggregate';
import { publicView } from './public-view';

const spec = DeciderSpecification(profileDecider);
const T0 = 1_700_000_000_000;
const ID = '0b6f2b8e-3c1a-4b7e-9d2f-5a6b7c8d9e0f';
const at = (now: number, command: Omit<ProfileCommand, 'metadata'>) => ({ ...command, metadata: { now } }) as ProfileCommand;
/** The profile created at T0: private, nothing filled in, nothing shown. */
const fresh: ProfileState = {
  publicUserId: ID,
  ...byProfileField(() => null),
  public: false,
  publicFields: [],
  createdAt: T0,
  updatedAt: T0,
};
const created: ProfileEvent = { type: 'ProfileCreated', data: { profile: fresh } };

describe('profile decider', () => {
  describe('when the user has no profile', () => {
    it('creates a private, empty profile with the given public user id', () =>
      spec
        .given([])
        .when(at(T0, { type: 'EnsureProfile', data: { publicUserId: ID } }))
        .then([created]));

    it('an update creates the profile, then changes it', () =>
      spec
        .given([])
        .when(at(T0, { type: 'UpdateProfile', data: { publicUserId: ID, changes: { displayName: 'Ada' } } }))
        .then([created, { type: 'ProfileUpdated', data: { profile: { ...fresh, displayName: 'Ada' }, changedFields: ['displayName'] } }]));
  });

  describe('when the profile exists', () => {
    it('ensuring it again changes nothing (the public user id never changes)', () =>
      spec
        .given([created])
        .when(at(T0 + 5, { type: 'EnsureProfile', data: { publicUserId: 'another' } }))
        .thenNothingHappens());

    it('changes the fields sent, keeps the others, clears with null, and stamps updatedAt', () =>
      spec
        .given([
          created,
          {
            type: 'ProfileUpdated',
            data: { profile: { ...fresh, firstName: 'Ada', language: 'fr' }, changedFields: ['firstName', 'language'] },
          },
        ])
        .when(
          at(T0 + 9, {
            type: 'UpdateProfile',
            data: { publicUserId: 'ignored', changes: { lastName: 'Lovelace', language: null, public: true, publicFields: ['firstName'] } },
          }),
        )
        .then([
          {
            type: 'ProfileUpdated',
            data: {
              profile: {
                ...fresh,
                firstName: 'Ada',
                lastName: 'Lovelace',
                language: null,
                public: true,
                publicFields: ['firstName'],
                updatedAt: T0 + 9,
              },
              changedFields: ['lastName', 'language', 'public', 'publicFields'],
            },
          },
        ]));

    it('an update that changes nothing records nothing', () =>
      spec
        .given([created])
        .when(at(T0 + 9, { type: 'UpdateProfile', data: { publicUserId: ID, changes: { displayName: null, public: false } } }))
        .thenNothingHappens());
  });
});

describe('public view', () => {
  const full: ProfileState = {
    ...fresh,
    displayName: 'Ada',
    firstName: 'Ada',
    lastName: 'Lovelace',
    language: 'en',
    avatarUrl: 'https://a.example/x.png',
  };

  it('is nothing while the profile is not public, whatever fields are marked public', () => {
    expect(publicView({ ...full, publicFields: ['displayName'] })).toBeNull();
  });

  it('shows only the public fields that are set', () => {
    expect(publicView({ ...full, public: true, publicFields: ['displayName', 'avatarUrl'] })).toEqual({
      publicUserId: ID,
      displayName: 'Ada',
      avatarUrl: 'https://a.example/x.png',
    });
    expect(publicView({ ...full, avatarUrl: null, public: true, publicFields: ['avatarUrl'] })).toEqual({ publicUserId: ID });
  });
});
