import { given } from '@udp/test-kit';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createProfileService } from '../app';
import { T0, UUID_V4, profile } from '../testing/profiles';

const P = '/api/profile/v3';
let clock = T0;
let system: TestSystem;
let alice: string;
let bob: string;

async function start(publicProfilesEnabled = true) {
  system = await startTestSystem([
    { prefixes: ['/api/profile'], create: (deps) => createProfileService({ ...deps, now: () => clock, publicProfilesEnabled }) },
  ]);
  alice = await system.auth('alice');
  bob = await system.auth('bob');
}

beforeEach(async () => {
  clock = T0;
  await start();
});
afterEach(() => system.stop());

const get = (auth: string, path = P) => system.http.get(path).set('authorization', auth);
const put = (auth: string, body: unknown) =>
  system.http.put(P).set('authorization', auth).set('content-type', 'application/json').send(JSON.stringify(body));
const fieldsOf = (res: { body: { errors?: Array<{ field: string }> } }) => (res.body.errors ?? []).map((e) => e.field);
const nothing = () => undefined;

describe('GET /api/profile/v3', () => {
  it('exists from the first authenticated call: a private, empty profile with a UUID v4 public id', async () => {
    await given(nothing)
      .when(() => get(alice))
      .then(async (res) => {
        expect(res.status).toBe(200);
        // A new profile as the decider makes it (its spec says what that holds), as JSON.
        expect(res.body).toEqual(profile({ publicUserId: expect.stringMatching(UUID_V4), createdAt: T0, updatedAt: T0 }));
        clock = T0 + 10;
        expect((await get(alice)).body).toEqual(res.body);
      });
  });

  it('creates one profile when first calls race', async () => {
    await given(nothing)
      .when(() => Promise.all(Array.from({ length: 5 }, () => get(alice))))
      .then((answers) => {
        expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
        expect(new Set(answers.map((a) => a.body.publicUserId)).size).toBe(1);
      });
  });

  it("creates nothing for a worker reading on the user's behalf: 404 without a profile, the profile once there is one", async () => {
    const asWorker = () => get(alice).set('x-udp-no-create', '1');

    await given(nothing)
      .when(asWorker)
      .then(async (none) => {
        expect([none.status, none.headers['content-type']]).toEqual([404, expect.stringMatching(/problem\+json/)]);
        expect((await asWorker()).status).toBe(404);
      });

    await given(async () => (await get(alice)).body)
      .when(asWorker)
      .then((answer, created) => expect(answer.body).toEqual(created));
  });

  it('gives every user their own profile and public id', async () => {
    await given(async () => (await get(alice)).body)
      .when(() => get(bob))
      .then((b, a) => expect(a.publicUserId).not.toBe(b.body.publicUserId));
  });
});

describe('PUT /api/profile/v3', () => {
  it('changes the fields sent, keeps the others, clears with null, ignores unknown fields, and answers the profile', async () => {
    await given(nothing)
      .when(() =>
        put(alice, {
          displayName: 'Ada',
          firstName: 'Ada',
          language: 'fr-CH',
          avatarUrl: 'https://img.example/a.png',
          email: 'ignored@example.com',
        }),
      )
      .then((first) => {
        expect(first.status).toBe(200);
        expect(first.body).toMatchObject({
          displayName: 'Ada',
          firstName: 'Ada',
          lastName: null,
          language: 'fr-CH',
          avatarUrl: 'https://img.example/a.png',
          createdAt: T0,
          updatedAt: T0,
        });
        expect(first.body.email).toBeUndefined();
      });

    await given(() => {
      clock = T0 + 50;
    })
      .when(() => put(alice, { lastName: 'Lovelace', firstName: null }))
      .then(async (second) => {
        expect(second.body).toMatchObject({
          displayName: 'Ada',
          firstName: null,
          lastName: 'Lovelace',
          language: 'fr-CH',
          createdAt: T0,
          updatedAt: T0 + 50,
        });
        expect((await get(alice)).body).toEqual(second.body);
        expect(second.body.publicUserId).toMatch(UUID_V4);
      });
  });

  it('creates the profile on a fresh account, and an empty update changes nothing', async () => {
    await given(nothing)
      .when(() => put(alice, {}))
      .then(async (res) => {
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ publicUserId: expect.stringMatching(UUID_V4), displayName: null, public: false });
        expect((await get(alice)).body).toEqual(res.body);
      });
  });

  it('refuses invalid data with 400 naming the field, and changes nothing', async () => {
    /** Ada's profile, as the first PUT made it: what every refused request must leave. */
    const adasProfile = async () => expect((await get(alice)).body).toMatchObject({ displayName: 'Ada', firstName: null, public: false });
    const cases: Array<[unknown, string]> = [
      [{ displayName: 5 }, 'displayName'],
      [{ displayName: '' }, 'displayName'],
      [{ displayName: '   ' }, 'displayName'],
      [{ displayName: 'x'.repeat(101) }, 'displayName'],
      [{ firstName: 'a\u0000b' }, 'firstName'],
      [{ lastName: [] }, 'lastName'],
      [{ language: 'not a language' }, 'language'],
      [{ avatarUrl: 'javascript:alert(1)' }, 'avatarUrl'],
      [{ avatarUrl: 'not a url' }, 'avatarUrl'],
      [{ public: 'yes' }, 'public'],
      [{ publicFields: ['displayName', 'email'] }, 'publicFields[1]'],
      [{ publicFields: ['displayName', 'displayName'] }, 'publicFields'],
      [[{ displayName: 'x' }], 'body'],
      ['Ada', 'body'],
    ];
    await put(alice, { displayName: 'Ada' });
    for (const [body, field] of cases) {
      await given(adasProfile)
        .when(() => put(alice, body))
        .then(async (res) => {
          expect(res.status).toBe(400);
          expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
          expect(fieldsOf(res)).toContain(field);
          await adasProfile();
        });
    }
    await given(adasProfile)
      .when(() => system.http.put(P).set('authorization', alice))
      .then(async (noBody) => {
        expect(noBody.status).toBe(400);
        await adasProfile();
      });
    await given(adasProfile)
      .when(() => system.http.put(P).set('authorization', alice).set('content-type', 'application/json').send('{"displayName":'))
      .then(async (badJson) => {
        expect(badJson.status).toBe(400);
        await adasProfile();
      });
    await given(adasProfile)
      .when(() => system.http.put(P).set('authorization', alice).set('content-type', 'text/plain').send('Ada'))
      .then(async (notJson) => {
        expect(notJson.status).toBe(415);
        await adasProfile();
      });
  });
});

describe('GET /api/profile/v3/public/{publicUserId}', () => {
  let publicUserId: string;
  beforeEach(async () => {
    publicUserId = (
      await put(alice, { displayName: 'Ada', firstName: 'Ada', lastName: 'Lovelace', avatarUrl: 'https://img.example/a.png' })
    ).body.publicUserId;
  });
  const lookUp = (id = publicUserId) => get(bob, `${P}/public/${id}`);

  it('is 404 while the profile is not public, even with public fields chosen', async () => {
    await given(() => put(alice, { publicFields: ['displayName'] }))
      .when(() => lookUp())
      .then((res) => {
        expect(res.status).toBe(404);
        expect(res.body.title).toBe('Not Found');
      });
  });

  it('shows only the fields the user made public, to any authenticated user', async () => {
    await given(() => put(alice, { public: true, publicFields: ['displayName', 'avatarUrl', 'language'] }))
      .when(() => lookUp())
      .then(async (res) => {
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ publicUserId, displayName: 'Ada', avatarUrl: 'https://img.example/a.png' });
        expect((await lookUp(publicUserId.toUpperCase())).body).toEqual(res.body);
      });
  });

  it('shows only the public id when no field is public, and hides again when made private', async () => {
    await given(() => put(alice, { public: true }))
      .when(() => lookUp())
      .then((res) => expect(res.body).toEqual({ publicUserId }));
    await given(() => put(alice, { public: false }))
      .when(() => lookUp())
      .then((res) => expect(res.status).toBe(404));
  });

  it('answers 400 for an id that is not a UUID v4 and 404 for an unknown one', async () => {
    for (const id of ['abc', '123e4567-e89b-12d3-a456-426614174000', `${publicUserId}x`]) {
      await given(nothing)
        .when(() => lookUp(id))
        .then((res) => {
          expect(res.status).toBe(400);
          expect(fieldsOf(res)).toEqual(['publicUserId']);
        });
    }
    await given(nothing)
      .when(() => lookUp('0b6f2b8e-3c1a-4b7e-9d2f-5a6b7c8d9e0f'))
      .then((res) => expect(res.status).toBe(404));
  });

  it('requires credentials', async () => {
    await given(nothing)
      .when(() => system.http.get(`${P}/public/${publicUserId}`))
      .then((res) => expect(res.status).toBe(401));
  });
});

describe('public profiles switched off by configuration', () => {
  it('answers 409 to the public lookup; the own profile still works', async () => {
    await given(async () => {
      await system.stop();
      await start(false);
      const own = await get(alice);
      expect(own.status).toBe(200);
      return own.body.publicUserId as string;
    })
      .when((publicUserId) => get(bob, `${P}/public/${publicUserId}`))
      .then((res) => {
        expect(res.status).toBe(409);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      });
  });
});

describe('authentication: Authorization and Token-Type', () => {
  const rawToken = (auth: string) => auth.slice('Bearer '.length);

  it('accepts a token without scheme when Token-Type names it (Bearer or sessionToken)', async () => {
    const token = rawToken(alice);
    for (const tokenType of ['Bearer', 'sessionToken', 'bearer']) {
      await given(async () => (await get(alice)).body)
        .when(() => system.http.get(P).set('authorization', token).set('token-type', tokenType))
        .then((res, own) => {
          expect(res.status).toBe(200);
          expect(res.body.publicUserId).toBe(own.publicUserId);
        });
    }
    await given(nothing)
      .when(() => system.http.put(P).set('authorization', token).set('token-type', 'sessionToken').send({ displayName: 'Ada' }))
      .then((updated) => {
        expect(updated.status).toBe(200);
        expect(updated.body.displayName).toBe('Ada');
      });
  });

  it('accepts the sessionToken scheme in the Authorization value', async () => {
    await given(nothing)
      .when(() => system.http.get(P).set('authorization', `sessionToken ${rawToken(alice)}`))
      .then((res) => expect(res.status).toBe(200));
  });

  it('answers 401 without credentials, for a token without scheme and no Token-Type, for an unknown Token-Type, and for a bad token', async () => {
    const token = rawToken(alice);
    await given(nothing)
      .when(() => system.http.get(P))
      .then((missing) => {
        expect(missing.status).toBe(401);
        expect(missing.headers['www-authenticate']).toBe('Bearer');
      });
    await given(nothing)
      .when(() => system.http.get(P).set('authorization', token))
      .then((noScheme) => {
        expect(noScheme.status).toBe(401);
        expect(noScheme.body.detail).toMatch(/Token-Type/);
      });
    await given(nothing)
      .when(() => system.http.get(P).set('authorization', 'not-a-jwt').set('token-type', 'Bearer'))
      .then((badToken) => expect(badToken.status).toBe(401));
    await given(nothing)
      .when(() => system.http.put(P).set('authorization', 'not-a-jwt').set('token-type', 'sessionToken').send({}))
      .then((badToken) => expect(badToken.status).toBe(401));
  });

  it('refuses a Token-Type other than Bearer or sessionToken (400 naming it); a scheme in Authorization wins over it', async () => {
    const token = rawToken(alice);
    await given(nothing)
      .when(() => system.http.get(P).set('authorization', alice).set('token-type', 'sessionToken'))
      .then((res) => expect(res.status).toBe(200));
    for (const [authorization, tokenType] of [
      [token, 'Basic'],
      [alice, 'garbage'],
      [alice, ''],
    ]) {
      await given(nothing)
        .when(() => system.http.get(P).set('authorization', authorization).set('token-type', tokenType))
        .then((res) => {
          expect(res.status).toBe(400);
          expect(res.body.errors[0].field).toBe('Token-Type');
        });
    }
    await given(nothing)
      .when(() => system.http.get(P).set('authorization', alice).set('token-type', 'BEARER'))
      .then((res) => expect(res.status).toBe(200));
  });

  it('never trusts an identity header sent by a client', async () => {
    await given(nothing)
      .when(() => system.http.get(P).set('x-udp-identity', 'v1.YWxpY2U.9999999999999.forged'))
      .then((res) => expect(res.status).toBe(400));
  });
});
