import { apiSpecification } from '@udp/test-system';
import { createProfileService } from '../app';
import { type ProfileEvent, type ProfileState, profileStream } from '../domain/events';

/** The write endpoints of profile-svc (PUT, and the first GET that creates the profile): given events, when, then. */
const NOW = 1_700_000_000_000;
const spec = apiSpecification<ProfileEvent>({
  prefixes: ['/api/profile'],
  create: (deps) => createProfileService({ ...deps, now: () => NOW }),
});

const alice = profileStream('alice');
const PUBLIC_ID = '0b6f3a52-2a4e-4c1f-9a53-1d6f0f0c1a11';
const UUID_V4 = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
const profile = (fields: Partial<ProfileState> = {}): ProfileState => ({
  publicUserId: PUBLIC_ID,
  displayName: null,
  firstName: null,
  lastName: null,
  language: null,
  avatarUrl: null,
  public: false,
  publicFields: [],
  createdAt: NOW - 100,
  updatedAt: NOW - 100,
  ...fields,
});
const created = (state: ProfileState): ProfileEvent => ({ type: 'ProfileCreated', data: { profile: state } });

describe('PUT /api/profile/v3: update the own profile', () => {
  it('records the changed fields only, with the whole resulting profile', () =>
    spec
      .given(alice, [created(profile({ displayName: 'Al', language: 'en' }))])
      .and(profileStream('bob'), [created(profile({ publicUserId: 'c2f0b8a4-1b7e-4d55-8f1e-0a4b3c2d1e0f' }))])
      .when({
        as: 'alice',
        method: 'put',
        path: '/api/profile/v3',
        body: { displayName: 'Alice', language: 'en', public: true, publicFields: ['displayName'] },
      })
      .then({
        status: 200,
        body: profile({ displayName: 'Alice', language: 'en', public: true, publicFields: ['displayName'], updatedAt: NOW }),
        events: [
          {
            type: 'ProfileUpdated',
            data: {
              profile: profile({ displayName: 'Alice', language: 'en', public: true, publicFields: ['displayName'], updatedAt: NOW }),
              changedFields: ['displayName', 'public', 'publicFields'],
            },
          },
        ],
      }));

  it('null clears a field; a PUT that changes nothing writes nothing', async () => {
    await spec
      .given(alice, [created(profile({ firstName: 'Alice' }))])
      .when({ as: 'alice', method: 'put', path: '/api/profile/v3', body: { firstName: null } })
      .then({
        status: 200,
        body: profile({ updatedAt: NOW }),
        events: [{ type: 'ProfileUpdated', data: { profile: profile({ updatedAt: NOW }), changedFields: ['firstName'] } }],
      });
    await spec
      .given(alice, [created(profile({ firstName: 'Alice' }))])
      .when({ as: 'alice', method: 'put', path: '/api/profile/v3', body: { firstName: 'Alice' } })
      .then({ status: 200, body: profile({ firstName: 'Alice' }), events: [] });
  });

  it('creates the profile first when there is none, with a new public user id', () =>
    spec
      .given(alice)
      .when({ as: 'alice', method: 'put', path: '/api/profile/v3', body: { lastName: 'Liddell' } })
      .then({
        status: 200,
        body: profile({ publicUserId: UUID_V4, lastName: 'Liddell', createdAt: NOW, updatedAt: NOW }),
        events: [
          created(profile({ publicUserId: UUID_V4, createdAt: NOW, updatedAt: NOW })),
          {
            type: 'ProfileUpdated',
            data: {
              profile: profile({ publicUserId: UUID_V4, lastName: 'Liddell', createdAt: NOW, updatedAt: NOW }),
              changedFields: ['lastName'],
            },
          },
        ],
      }));

  it('refuses an invalid field and writes nothing', () =>
    spec
      .given(alice, [created(profile())])
      .when({ as: 'alice', method: 'put', path: '/api/profile/v3', body: { publicFields: ['displayName', 'displayName'] } })
      .then({
        status: 400,
        body: expect.objectContaining({ status: 400, errors: [expect.objectContaining({ field: 'publicFields' })] }),
        events: [],
      }));
});

describe('GET /api/profile/v3: the first call creates the profile', () => {
  it('records a private, empty profile once; later calls write nothing', async () => {
    await spec
      .given(alice)
      .when({ as: 'alice', method: 'get', path: '/api/profile/v3' })
      .then({
        status: 200,
        body: profile({ publicUserId: UUID_V4, createdAt: NOW, updatedAt: NOW }),
        events: [created(profile({ publicUserId: UUID_V4, createdAt: NOW, updatedAt: NOW }))],
      });
    await spec
      .given(alice, [created(profile())])
      .when({ as: 'alice', method: 'get', path: '/api/profile/v3' })
      .then({ status: 200, body: profile(), events: [] });
  });
});
