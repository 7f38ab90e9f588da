import { apiSpecification } from '@udp/test-system';
import { createProfileService } from '../app';
import { type ProfileEvent, profileStream } from '../domain/aggregate';
import { T0 as NOW, UUID_V4 as UUID_V4_PATTERN, created, profile } from '../testing/profiles';

/** The write endpoints of profile-svc (PUT, and the first GET that creates the profile): given events, when, then. */
const spec = apiSpecification<ProfileEvent>({
  prefixes: ['/api/profile'],
  create: (deps) => createProfileService({ ...deps, now: () => NOW }),
});

const alice = profileStream('alice');
const UUID_V4 = expect.stringMatching(UUID_V4_PATTERN);
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
